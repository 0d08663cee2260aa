"""What every family of semantic checks shares: the document being checked, its tools by
name, the diagnostics found so far, and how a check reports one.

Later checks must tolerate what earlier checks already reported (a list where a mapping was
expected, a path that leaves the folder): they read through the shape guards here, and a check
that finds a value unusable records its place with `mark_broken`, so the checks that would read
it next skip it instead of reporting it twice or crashing on it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from runner.config.defaults import simple_name
from runner.config.humanize import suggestion_suffix
from runner.documents.diagnostics import Diagnostic, KeyPath, Severity
from runner.documents.loader import YamlFile

# Which tool kinds a reference may name, by the place it is written in.
KINDS_FOR = {
    "retrieval_tool": ("retrieve",),
    "coordinator": ("deep_search", "python"),
    "search_tool": ("search", "python"),
    "neighbor_search_tool": ("neighbor_search", "python"),
}


class Checks:
    """One document under check; the check families are functions of it."""

    def __init__(self, document: YamlFile) -> None:
        self.document = document
        self.data: Mapping[str, Any] = document.data
        self.folder = document.path.resolve().parent
        self.domain: str = self.data["domain"]
        self.tools: dict[str, Mapping[str, Any]] = {}
        for tool in self.data["tools"]:
            self.tools.setdefault(tool["name"], tool)
        self.diagnostics: list[Diagnostic] = []
        self.broken: set[KeyPath] = set()
        # every path a check looked at -> whether the contents of the files there matter (a
        # corpus folder's do not: its documents are only listed); config/validated.py keeps it
        self.named: dict[Path, bool] = {}

    def note_path(self, path: Path, *, contents: bool = True) -> None:
        """Remember that a check read (or looked for) this path (the last word on `contents`
        holds: the corpus check says its folder's contents do not matter)."""
        self.named[path] = contents

    # --- reporting -------------------------------------------------------------------------

    def emit(
        self,
        code: str,
        message: str,
        path: KeyPath,
        *,
        hint: str = "",
        warning: bool = False,
        at_key: bool = False,
        document: YamlFile | None = None,
    ) -> None:
        document = document or self.document
        severity = Severity.WARNING if warning else Severity.ERROR
        self.diagnostics.append(
            document.diagnostic(code, message, path, hint=hint, severity=severity, at_key=at_key)
        )

    def emit_at(
        self,
        code: str,
        message: str,
        file: Path,
        line: int,
        col: int,
        path: KeyPath = (),
        hint: str = "",
        warning: bool = False,
    ) -> None:
        severity = Severity.WARNING if warning else Severity.ERROR
        self.diagnostics.append(
            Diagnostic(code, message, file, line, col, severity, path, hint, depth=len(path))
        )

    # --- what earlier checks found unusable ------------------------------------------------

    def mark_broken(self, path: KeyPath) -> None:
        """An error was reported at `path`: the checks after this one leave it alone."""
        self.broken.add(tuple(path))

    def is_broken(self, path: KeyPath) -> bool:
        """Whether `path`, or a place that holds it, was reported unusable."""
        path = tuple(path)
        return any(path[: len(place)] == place for place in self.broken)

    # --- walking the tools -----------------------------------------------------------------

    def tool_items(self) -> Iterator[tuple[KeyPath, Mapping[str, Any]]]:
        for index, tool in enumerate(self.data["tools"]):
            yield ("tools", index), tool

    def tool_index(self, name: str) -> int:
        """The index of the (first) tool with this simple name in `tools`."""
        return next(i for i, tool in enumerate(self.data["tools"]) if tool["name"] == name)

    def subtask_items(
        self, tool_path: KeyPath, tool: Mapping[str, Any]
    ) -> Iterator[tuple[KeyPath, Mapping[str, Any]]]:
        for index, subtask in enumerate(tool.get("decompose", {}).get("subtasks", ())):
            yield (*tool_path, "decompose", "subtasks", index), subtask

    def simple_name(self, reference: str) -> str:
        return simple_name(reference, self.domain)

    def resolve_tool(
        self, reference: str, path: KeyPath, place: str, kinds: Sequence[str] = ()
    ) -> Mapping[str, Any] | None:
        """The tool a reference names (simple or `<domain>.` name, C15), or a diagnostic."""
        tool = self.tools.get(self.simple_name(reference))
        if tool is None:
            hint = f"the tools of this pipeline: {', '.join(self.tools)}"
            if "." in reference and not reference.startswith(f"{self.domain}."):
                hint = f"a prefixed name must start with this pipeline's domain `{self.domain}.`"
            self.emit(
                "R102",
                f"unknown tool `{reference}` in {place}"
                + suggestion_suffix(self.simple_name(reference), self.tools),
                path,
                hint=hint,
            )
            return None
        if kinds and tool["kind"] not in kinds:
            wanted = " or ".join(f"`{kind}`" for kind in kinds)
            self.emit(
                "R103",
                f"{place} names `{reference}`, a `{tool['kind']}` tool; it must be a {wanted} tool",
                path,
            )
        return tool

    def line_text(self, line: int) -> str:
        lines = self.document.lines
        return lines[line - 1] if 0 < line <= len(lines) else ""
