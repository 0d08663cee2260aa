"""The checks the schema cannot express, run once a file has passed the schema.

Each check is a small method with a stable `R1xx` code (the table is in docs/validate.md):
names that must refer to something, paths that must exist inside the pipeline's folder,
templates and expressions that must compile and use only the variables they will receive,
extraction schemas, regular expressions and `python` references. Nothing here imports or runs
pipeline code.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

from jinja2 import TemplateSyntaxError
from jsonschema.exceptions import ValidationError, best_match

from runner.config.diagnostics import Diagnostic, KeyPath, Severity, value_at
from runner.config.humanize import TYPE_NAMES, describe, humanize, suggestion_suffix
from runner.config.loader import Document, LoadError, Position, read_document
from runner.config.schema import definition_validator, metaschema_validator
from runner.llm.purposes import (
    CLARIFY_VARIABLES,
    CONDITION_VARIABLES,
    DECOMPOSE_VARIABLES,
    PROMPT_TOOL_VARIABLES,
    PURPOSE_VARIABLES,
)
from runner.llm.types import Purpose
from runner.patterns import compile_pattern
from runner.templates import Reads, expression_reads, template_reads

_PYTHON_REFERENCE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")

# Which tool kinds a reference may name, by the place it is written in.
_KINDS_FOR = {
    "retrieval_tool": ("retrieve",),
    "coordinator": ("deep_search", "python"),
    "search_tool": ("search", "python"),
    "neighbor_search_tool": ("neighbor_search", "python"),
}


def check(document: Document) -> list[Diagnostic]:
    """Every semantic diagnostic of a document that passed the schema."""
    checker = _Checker(document)
    checker.run()
    return checker.diagnostics


class _Checker:
    def __init__(self, document: Document) -> None:
        self.document = document
        self.data: Mapping[str, Any] = document.data
        self.folder = document.path.resolve().parent
        self.domain: str = self.data["domain"]
        self.tools: dict[str, Mapping[str, Any]] = {}
        for tool in self.data["tools"]:
            self.tools.setdefault(tool["name"], tool)
        self.diagnostics: list[Diagnostic] = []

    def run(self) -> None:
        for check in (
            self.duplicate_tools,
            self.tool_references,
            self.coordinator_only_tools,
            self.search_tools_hidden,
            self.prompt_type_names,
            self.corpora,
            self.tool_settings,
            self.decompositions,
            self.domain_templates,
            self.regexes,
            self.script_file,
        ):
            check()

    # --- reporting ---------------------------------------------------------------------

    def emit(
        self,
        code: str,
        message: str,
        path: KeyPath,
        *,
        hint: str = "",
        warning: bool = False,
        at_key: bool = False,
        document: Document | None = None,
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

    # --- tool names (C15) --------------------------------------------------------------

    def tool_items(self) -> Iterator[tuple[KeyPath, Mapping[str, Any]]]:
        for index, tool in enumerate(self.data["tools"]):
            yield ("tools", index), tool

    def duplicate_tools(self) -> None:
        seen: dict[str, int] = {}
        for path, tool in self.tool_items():
            name = tool["name"]
            if name in seen:
                first = self.document.position(("tools", seen[name], "name")).line
                self.emit(
                    "R101",
                    f"duplicate tool name `{name}` (first used at line {first})",
                    (*path, "name"),
                    hint="tool names must be unique within a pipeline: rename one",
                )
            else:
                seen[name] = int(path[1])

    def simple_name(self, reference: str) -> str:
        prefix = f"{self.domain}."
        return reference[len(prefix) :] if reference.startswith(prefix) else reference

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

    def tool_references(self) -> None:
        if "retrieval_tool" in self.data:
            self.resolve_tool(
                self.data["retrieval_tool"],
                ("retrieval_tool",),
                "retrieval_tool",
                _KINDS_FOR["retrieval_tool"],
            )
        if "deep_fallback" in self.data:
            self.resolve_tool(
                self.data["deep_fallback"]["coordinator"],
                ("deep_fallback", "coordinator"),
                "deep_fallback.coordinator",
                _KINDS_FOR["coordinator"],
            )
        for path, tool in self.tool_items():
            for key in ("search_tool", "neighbor_search_tool"):
                if key in tool and tool["kind"] == "deep_search":
                    self.resolve_tool(tool[key], (*path, key), key, _KINDS_FOR[key])
            if tool["kind"] == "neighbor_search" and "source_tool" in tool:
                self.resolve_tool(tool["source_tool"], (*path, "source_tool"), "source_tool")
            for sub_path, subtask in self.subtask_items(path, tool):
                for index, name in enumerate(subtask.get("required_tools", ())):
                    self.resolve_tool(name, (*sub_path, "required_tools", index), "required_tools")
        for index, rule in enumerate(self.data.get("llm", {}).get("script", ())):
            if "tool" in rule:
                self.resolve_tool(rule["tool"], ("llm", "script", index, "tool"), "llm.script")

    def subtask_items(
        self, tool_path: KeyPath, tool: Mapping[str, Any]
    ) -> Iterator[tuple[KeyPath, Mapping[str, Any]]]:
        for index, subtask in enumerate(tool.get("decompose", {}).get("subtasks", ())):
            yield (*tool_path, "decompose", "subtasks", index), subtask

    def requirable_tools(self) -> set[str]:
        """Tools something can force onto a subtask or run without the suitability test."""
        names: set[str] = set()
        for path, tool in self.tool_items():
            for _, subtask in self.subtask_items(path, tool):
                names |= {self.simple_name(name) for name in subtask.get("required_tools", ())}
            if tool["kind"] == "deep_search":
                names |= {
                    self.simple_name(tool[key])
                    for key in ("search_tool", "neighbor_search_tool")
                    if key in tool
                }
        for key in ("retrieval_tool",):
            if key in self.data:
                names.add(self.simple_name(self.data[key]))
        if "deep_fallback" in self.data:
            names.add(self.simple_name(self.data["deep_fallback"]["coordinator"]))
        return names

    def coordinator_only_tools(self) -> None:
        # A python tool may require any tool at run time, so nothing can be concluded then.
        if any(tool["kind"] == "python" for tool in self.data["tools"]):
            return
        requirable = self.requirable_tools()
        for path, tool in self.tool_items():
            # a coordinator still decomposes in every coordinator step (C8), and one that is
            # activated after its subtasks runs then too (C20e)
            if "decompose" in tool:
                continue
            if tool.get("activation") == "coordinator_only" and tool["name"] not in requirable:
                self.emit(
                    "R104",
                    f"tool `{tool['name']}` is coordinator_only, but no subtask requires it: "
                    "it can never run",
                    (*path, "activation"),
                    hint="name it in a subtask's required_tools (or a deep_search tool), "
                    "or change its activation",
                    warning=True,
                )

    def search_tools_hidden(self) -> None:
        """C30: the tools of deep search never activate on the normal branch."""
        for path, tool in self.tool_items():
            if tool["kind"] != "deep_search":
                continue
            for key in ("search_tool", "neighbor_search_tool"):
                target = self.tools.get(self.simple_name(tool.get(key, "")))
                if target is None or target["kind"] != key.removesuffix("_tool"):
                    continue  # a wrong kind is R103's error, not this warning's
                if target.get("activation") != "coordinator_only":
                    self.emit(
                        "R118",
                        f"`{target['name']}` is the {key} of `{tool['name']}`, so it should "
                        "only run on deep-search subtasks (C30)",
                        (*path, key),
                        hint=f"give `{target['name']}` `activation: coordinator_only`",
                        warning=True,
                    )

    # --- prompt types, corpora ----------------------------------------------------------

    def declared_prompt_types(self) -> list[str]:
        prompt_types = self.data.get("prompt_types")
        return list(prompt_types["types"]) if prompt_types else ["question"]

    def prompt_type_names(self) -> None:
        declared = self.declared_prompt_types()
        places: list[tuple[KeyPath, str]] = []
        if "default" in self.data.get("prompt_types", {}):
            places.append((("prompt_types", "default"), self.data["prompt_types"]["default"]))
        for index, name in enumerate(self.data.get("deep_fallback", {}).get("prompt_types", ())):
            places.append((("deep_fallback", "prompt_types", index), name))
        for path, tool in self.tool_items():
            for index, name in enumerate(tool.get("prompt_types", ())):
                places.append(((*path, "prompt_types", index), name))
        for path, name in places:
            if name not in declared:
                self.emit(
                    "R105",
                    f"undeclared prompt type `{name}`" + suggestion_suffix(name, declared),
                    path,
                    hint=f"declared types: {', '.join(declared)} (under prompt_types.types)",
                )

    def corpora(self) -> None:
        for name, spec in self.data.get("corpora", {}).items():
            if "embedding" in spec:  # a model name, or a folder that must stay in ours
                self.inside_folder(
                    spec["embedding"]["model"], ("corpora", name, "embedding", "model")
                )
            folder = self.existing_path(spec["path"], ("corpora", name, "path"), folder=True)
            if folder is None:
                continue
            include = spec.get("include", ["**/*.md", "**/*.txt", "**/*.rst"])
            if not any(next(folder.glob(pattern), None) for pattern in include):
                self.emit(
                    "R122",
                    f"corpus `{name}` has no documents: nothing in {spec['path']} matches "
                    f"{', '.join(include)}",
                    ("corpora", name, "path"),
                    hint="add documents or change `include`",
                    warning=True,
                )
        for path, tool in self.tool_items():
            if "corpus" in tool and tool["corpus"] not in self.data.get("corpora", {}):
                corpora = list(self.data.get("corpora", {}))
                self.emit(
                    "R106",
                    f"unknown corpus `{tool['corpus']}`"
                    + suggestion_suffix(tool["corpus"], corpora),
                    (*path, "corpus"),
                    hint=f"declared corpora: {', '.join(corpora)}"
                    if corpora
                    else "declare it under `corpora:` with its folder",
                )

    # --- paths ---------------------------------------------------------------------------

    def inside_folder(self, relative: str, path: KeyPath) -> Path | None:
        """The path if it stays inside the pipeline's folder (checked on the text, so that a
        symlink placed in the folder on purpose is allowed), else a diagnostic and None."""
        pure = PurePosixPath(relative.replace("\\", "/"))
        if pure.is_absolute() or re.match(r"^[A-Za-z]:", relative) or ".." in pure.parts:
            self.emit(
                "R108",
                f"the path `{relative}` leaves the pipeline's folder",
                path,
                hint="paths are relative to the pipeline file and must stay in its folder: "
                "move the file there",
            )
            return None
        return self.folder / relative

    def existing_path(self, relative: str, path: KeyPath, *, folder: bool = False) -> Path | None:
        target = self.inside_folder(relative, path)
        if target is None:
            return None
        if not target.exists():
            what = "folder" if folder else "file"
            nearby = _nearby_names(target)
            self.emit(
                "R107",
                f"{what} not found: `{relative}`" + suggestion_suffix(target.name, nearby),
                path,
                hint=f"paths are relative to the pipeline file ({self.folder})",
            )
            return None
        if target.is_dir() != folder:
            expected = "a folder" if folder else "a file"
            self.emit("R123", f"`{relative}` is not {expected}", path)
            return None
        return target

    # --- templates and expressions --------------------------------------------------------

    def inline_template(self, path: KeyPath, allowed: frozenset[str] | set[str]) -> None:
        source = value_at(self.data, path)
        try:
            reads = template_reads(source)
        except TemplateSyntaxError as error:
            line, col = self.inline_line(path, error.lineno)
            self.emit_at(
                "R109",
                f"template does not compile: {error.message}",
                self.document.path,
                line,
                col,
                path,
            )
            return
        for name, lineno in _unknown(reads, allowed):
            line, col = self.inline_line(path, lineno, name)
            self.emit_at(
                "R110",
                f"the template uses `{name}`, which it never receives"
                + suggestion_suffix(name, allowed),
                self.document.path,
                line,
                col,
                path,
                hint=f"available here: {', '.join(sorted(allowed))}",
            )

    def file_template(self, path: KeyPath, allowed: frozenset[str] | set[str]) -> None:
        relative = value_at(self.data, path)
        target = self.existing_path(relative, path)
        if target is None:
            return
        try:
            source = target.read_text(encoding="utf-8")
            reads = template_reads(source)
        except UnicodeDecodeError:
            self.emit("R109", f"template `{relative}` is not UTF-8 text", path)
            return
        except TemplateSyntaxError as error:
            self.emit_at(
                "R109", f"template does not compile: {error.message}", target, error.lineno, 1, path
            )
            return
        lines = source.splitlines()
        for name, lineno in _unknown(reads, allowed):
            self.emit_at(
                "R110",
                f"the template uses `{name}`, which it never receives"
                + suggestion_suffix(name, allowed),
                target,
                lineno,
                _column_of(name, lines[lineno - 1] if lineno <= len(lines) else ""),
                path,
                hint=f"available here: {', '.join(sorted(allowed))}",
            )

    def template_pair(self, path: KeyPath, allowed: frozenset[str] | set[str]) -> None:
        """A `template` (file) / `prompt` (inline) pair at `path`, whichever is given."""
        block = value_at(self.data, path)
        if not isinstance(block, Mapping):
            return
        if "template" in block:
            self.file_template((*path, "template"), allowed)
        if "prompt" in block:
            self.inline_template((*path, "prompt"), allowed)

    def expression(self, path: KeyPath, allowed: frozenset[str] | set[str]) -> None:
        source = value_at(self.data, path)
        position = self.document.position(path)
        try:
            unknown = _unknown(expression_reads(source), allowed)
        except TemplateSyntaxError as error:
            self.emit(
                "R111",
                f"expression does not compile: {error.message}",
                path,
                hint="write a Jinja expression without {{ }}, e.g. `params.items | length > 1`",
            )
            return
        line_text = self.line_text(position.line)
        for name, _ in unknown:
            self.emit_at(
                "R112",
                f"the expression uses `{name}`, which it never receives"
                + suggestion_suffix(name, allowed),
                self.document.path,
                position.line,
                _column_of(name, line_text, start=position.col - 1) or position.col,
                path,
                hint=f"available here: {', '.join(sorted(allowed))}",
            )

    def line_text(self, line: int) -> str:
        lines = self.document.lines
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def inline_line(self, path: KeyPath, lineno: int, name: str = "") -> tuple[int, int]:
        """Where line `lineno` of an inline template (and `name` in it) is in the YAML file."""
        position: Position = self.document.position(path)
        block = position.style in ("|", ">")
        line = position.line + lineno - (0 if block else 1)
        last = max(position.end_line, position.line)
        candidates = [line, *range(position.line, last + 1)] if name else [line]
        for candidate in candidates:
            text = self.line_text(candidate)
            start = position.col - 1 if candidate == position.line and not block else 0
            col = _column_of(name, text, start=start) if name else 0
            if col or not name:
                indent = len(text) - len(text.lstrip())
                return min(candidate, last), col or (position.col if not block else indent + 1)
        return position.line, position.col

    # --- tools -----------------------------------------------------------------------------

    def tool_settings(self) -> None:
        for path, tool in self.tool_items():
            kind = tool["kind"]
            if kind == "prompt":
                self.template_pair(path, PROMPT_TOOL_VARIABLES)
                if "parameters" in tool:
                    self.extraction((*path, "parameters"), Purpose.EXTRACT)
            if "clarify" in tool:
                self.inline_template((*path, "clarify", "question"), CLARIFY_VARIABLES)
                self.clarify_parameters(path, tool)
            if kind == "lookup":
                self.lookup_table(path, tool)
            if kind == "search" and "read_template" in tool:
                self.file_template((*path, "read_template"), PURPOSE_VARIABLES[Purpose.READ_PAGE])
            if kind == "deep_search":
                for key, purpose in (
                    ("missing_template", Purpose.MISSING_INFO),
                    ("compose_template", Purpose.COMPOSE),
                ):
                    if key in tool:
                        self.file_template((*path, key), PURPOSE_VARIABLES[purpose])
            if kind == "python":
                self.python_tool(path, tool)

    def extraction(self, path: KeyPath, purpose: Purpose) -> None:
        self.template_pair(path, PURPOSE_VARIABLES[purpose])
        schema = value_at(self.data, (*path, "schema"))
        error = _metaschema_error(json.dumps(schema, sort_keys=True, default=str))
        if error is not None:
            self.emit(
                "R113",
                f"the extraction schema is not a valid JSON Schema: {_metaschema_problem(error)}",
                (*path, "schema", *error.absolute_path),
                hint="see https://json-schema.org/understanding-json-schema/",
            )
        elif schema.get("type") != "object":
            self.emit(
                "R113",
                "the extraction schema must describe a mapping of parameters (`type: object`)",
                (*path, "schema"),
                hint="e.g. {type: object, properties: {product: {type: string}}}",
            )

    def clarify_parameters(self, path: KeyPath, tool: Mapping[str, Any]) -> None:
        properties = tool.get("parameters", {}).get("schema", {}).get("properties", {})
        known = set(properties) if isinstance(properties, Mapping) else set()  # else: R113
        if tool["kind"] != "prompt" or not known:
            return
        for index, name in enumerate(tool["clarify"].get("required", ())):
            if name not in known:
                self.emit(
                    "R119",
                    f"clarify.required names `{name}`, which the parameters schema does not "
                    "declare" + suggestion_suffix(name, known),
                    (*path, "clarify", "required", index),
                    hint=f"declared parameters: {', '.join(sorted(known))}",
                    warning=True,
                )

    def lookup_table(self, path: KeyPath, tool: Mapping[str, Any]) -> None:
        table = self.existing_path(tool["table"], (*path, "table"))
        if table is None:
            return
        try:
            columns = _table_columns(table)
        except ValueError as error:
            self.emit("R120", f"cannot read table `{tool['table']}`: {error}", (*path, "table"))
            return
        if isinstance(tool["key"], list):  # `key: [codename, version]`
            wanted = [((*path, "key", i), name) for i, name in enumerate(tool["key"])]
        else:
            wanted = [((*path, "key"), tool["key"])]
        wanted += [((*path, "columns", i), name) for i, name in enumerate(tool.get("columns", ()))]
        for where, name in wanted:
            if name not in columns:
                self.emit(
                    "R120",
                    f"table `{tool['table']}` has no column `{name}`"
                    + suggestion_suffix(name, columns),
                    where,
                    hint=f"its columns: {', '.join(columns)}",
                )

    def python_tool(self, path: KeyPath, tool: Mapping[str, Any]) -> None:
        if not _PYTHON_REFERENCE.match(tool["class"]):
            self.emit(
                "R115",
                f"`{tool['class']}` is not a python reference `module:Class`",
                (*path, "class"),
                hint="write the importable module, a colon and the class, "
                "e.g. `my_tools.pricing:PriceTool` (validate never imports it)",
            )
        if "path" in tool:
            self.existing_path(tool["path"], (*path, "path"), folder=True)

    # --- declarative coordinators ----------------------------------------------------------

    def decompositions(self) -> None:
        for path, tool in self.tool_items():
            if "decompose" not in tool:
                continue
            block = (*path, "decompose")
            decompose = tool["decompose"]
            if "extract" in decompose:
                self.extraction((*block, "extract"), Purpose.DECOMPOSE)
            if "relevant_if" in decompose:
                self.expression((*block, "relevant_if"), DECOMPOSE_VARIABLES)
            if "append_prompt" in decompose:
                self.inline_template((*block, "append_prompt"), DECOMPOSE_VARIABLES)
            names: dict[str, int] = {}
            for sub_path, subtask in self.subtask_items(path, tool):
                self.subtask(sub_path, subtask, names)

    def subtask(self, path: KeyPath, subtask: Mapping[str, Any], earlier: dict[str, int]) -> None:
        loop = {subtask.get("as", "item")} if "for_each" in subtask else set()
        if "for_each" in subtask:
            self.expression((*path, "for_each"), DECOMPOSE_VARIABLES)
        self.inline_template((*path, "prompt"), DECOMPOSE_VARIABLES | loop)
        if "id" in subtask:
            self.inline_template((*path, "id"), DECOMPOSE_VARIABLES | loop)
        condition = subtask.get("conditional", {})
        if "run_if" in condition:
            self.expression((*path, "conditional", "run_if"), CONDITION_VARIABLES | loop)
        if "skip_if_found" in condition:
            self.sibling_reference((*path, "conditional", "skip_if_found"), subtask, earlier)
        name = subtask.get("name")
        if name is None:
            return
        if name in earlier:
            first = self.document.position((*path[:-1], earlier[name], "name")).line
            self.emit(
                "R117",
                f"duplicate subtask template name `{name}` (first used at line {first})",
                (*path, "name"),
            )
        else:
            earlier[name] = int(path[-1])

    def sibling_reference(
        self, path: KeyPath, subtask: Mapping[str, Any], earlier: Mapping[str, int]
    ) -> None:
        sibling = subtask["conditional"]["skip_if_found"]
        if sibling in earlier:
            return
        siblings = path[:-3]  # the `subtasks` list
        all_names = [spec.get("name") for spec in value_at(self.data, siblings)]
        if sibling == subtask.get("name"):
            problem = "a subtask cannot depend on itself"
        elif sibling in all_names:
            problem = f"`{sibling}` comes later; a conditional rule can only read earlier siblings"
        else:
            problem = f"no earlier subtask template is named `{sibling}`" + suggestion_suffix(
                sibling, earlier
            )
        self.emit(
            "R116",
            f"skip_if_found: {problem}",
            path,
            hint="name an earlier template of the same `subtasks` list with `name:`"
            if earlier
            else "give an earlier subtask template a `name:` and refer to it",
        )

    # --- domain-wide templates, regexes, scripted rules ------------------------------------

    def domain_templates(self) -> None:
        if "answer" in self.data:
            self.template_pair(("answer",), PURPOSE_VARIABLES[Purpose.ANSWER])
        gatekeeper = self.data.get("deep_fallback", {}).get("gatekeeper")
        if gatekeeper is not None:
            self.template_pair(
                ("deep_fallback", "gatekeeper"), PURPOSE_VARIABLES[Purpose.GATEKEEPER]
            )
        for purpose in self.data.get("llm", {}).get("templates", {}):
            self.file_template(("llm", "templates", purpose), PURPOSE_VARIABLES[Purpose(purpose)])
        for key in ("cassette", "script_file"):
            if key in self.data.get("llm", {}):
                self.inside_folder(self.data["llm"][key], ("llm", key))
        cache = self.data.get("llm", {}).get("cache")
        if isinstance(cache, Mapping):
            self.inside_folder(cache["path"], ("llm", "cache", "path"))
        if "state_dir" in self.data:
            self.inside_folder(self.data["state_dir"], ("state_dir",))

    def regexes(self) -> None:
        places: list[KeyPath] = []
        for path, tool in self.tool_items():
            if isinstance(tool.get("activation"), Mapping) and "pattern" in tool["activation"]:
                places.append((*path, "activation", "pattern"))
        for name, spec in self.data.get("prompt_types", {}).get("types", {}).items():
            if isinstance(spec, Mapping) and "pattern" in spec:
                places.append(("prompt_types", "types", name, "pattern"))
        for index, rule in enumerate(self.data.get("llm", {}).get("script", ())):
            places += [("llm", "script", index, key) for key in ("task", "prompt") if key in rule]
        for path in places:
            self.regex(path)

    def regex(self, path: KeyPath, document: Document | None = None) -> None:
        document = document or self.document
        pattern = value_at(document.data, path)
        try:
            compile_pattern(pattern)
        except re.error as error:
            position = document.position(path)
            quoted = 1 if position.style in ("'", '"') else 0
            col = position.col + quoted + (error.pos or 0)
            self.emit_at(
                "R114",
                f"the regular expression does not compile: {error.msg}",
                document.path,
                position.line,
                col,
                path,
                hint="in YAML, quote a pattern with single quotes so backslashes stay as written",
            )

    def script_file(self) -> None:
        relative = self.data.get("llm", {}).get("script_file")
        if relative is None:
            return
        target = self.existing_path(relative, ("llm", "script_file"))
        if target is None:
            return
        try:
            document = read_document(target)
        except LoadError as error:
            self.diagnostics.append(error.diagnostic)
            return
        if not isinstance(document.data, list | dict):
            self.emit(
                "R121",
                "a script file must be a YAML list of rules, or a mapping with `rules:`",
                (),
                document=document,
                hint="- {purpose: answer, reply: ...}",
            )
            return
        validator = definition_validator("script_file")
        diagnostics = humanize(validator.iter_errors(document.data), document, validator.schema)
        self.diagnostics.extend(diagnostics)
        if diagnostics:
            return
        rules = document.data if isinstance(document.data, list) else document.data["rules"]
        prefix: KeyPath = () if isinstance(document.data, list) else ("rules",)
        for index, rule in enumerate(rules):
            for key in ("task", "prompt"):
                if key in rule:
                    self.regex((*prefix, index, key), document)
            if "tool" in rule and self.simple_name(rule["tool"]) not in self.tools:
                self.emit(
                    "R102",
                    f"unknown tool `{rule['tool']}` in a scripted rule"
                    + suggestion_suffix(self.simple_name(rule["tool"]), self.tools),
                    (*prefix, index, "tool"),
                    document=document,
                )


# --- helpers --------------------------------------------------------------------------------


def _unknown(reads: Reads, allowed: frozenset[str] | set[str]) -> Reads:
    return tuple((name, line) for name, line in reads if name not in allowed)


@lru_cache(maxsize=1024)
def _metaschema_error(schema_json: str) -> ValidationError | None:
    """The most relevant metaschema error of an extraction schema (cached by its JSON)."""
    return best_match(metaschema_validator().iter_errors(json.loads(schema_json)))


def _column_of(name: str, text: str, start: int = 0) -> int:
    """1-based column of `name` as a whole word in `text` (from `start`), or 0."""
    match = re.compile(rf"(?<![\w.]){re.escape(name)}\b").search(text, start)
    return match.start() + 1 if match else 0


def _metaschema_problem(error: ValidationError) -> str:
    """A metaschema error in an author's words, e.g. `properties.products.type`: `list` is not
    a JSON Schema type; expected one of: array, boolean, …"""
    where = ".".join(str(part) for part in error.absolute_path) or "the schema"
    enums = [e for e in error.context or () if e.validator == "enum"]
    if enums:
        allowed = [str(value) for value in enums[0].validator_value]
        return (
            f"`{where}`: `{error.instance}` is not allowed; expected one of: {', '.join(allowed)}"
            + suggestion_suffix(str(error.instance), allowed)
        )
    if error.validator == "type" and isinstance(error.validator_value, str):
        wanted = TYPE_NAMES.get(error.validator_value, error.validator_value)
        return f"`{where}` must be {wanted}, not {describe(error.instance)}"
    return f"`{where}`: {error.message}"


def _nearby_names(target: Path) -> list[str]:
    try:
        return [entry.name for entry in target.parent.iterdir()]
    except OSError:
        return []


def _table_columns(table: Path) -> list[str]:
    """The column names of a lookup table. Raises ValueError for an unreadable table."""
    suffix = table.suffix.lower()
    try:
        if suffix == ".csv":
            with table.open(encoding="utf-8", newline="") as handle:
                return [name.strip() for name in next(csv.reader(handle), [])]
        if suffix == ".json":
            rows = json.loads(table.read_text(encoding="utf-8"))
        else:
            rows = read_document(table).data
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise ValueError(str(error)) from error
    except LoadError as error:
        raise ValueError(error.diagnostic.message) from error
    if not isinstance(rows, list) or not all(isinstance(row, Mapping) for row in rows):
        raise ValueError("it must be a list of rows (mappings from column to value)")
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(str(key) for key in row))
    return list(columns)
