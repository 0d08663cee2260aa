"""Finding and loading test-case files, with the same diagnostics `runner validate` gives.

A file goes through the config package's stages: YAML loading with positions
(`runner.documents.loader`), the JSON Schema (`schemas/testcase.schema.json`, errors rewritten by
`runner.config.humanize`), then the checks a schema cannot make (codes `T1xx`, docs/testing.md):
turns in a sensible order, unique case names, files that exist, regular expressions that
compile, and tool names that the pipeline has.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from runner.config import PipelineError, find_pipeline_files, find_yaml_files
from runner.config.humanize import humanize, suggestion_suffix
from runner.config.model import Pipeline, ScriptRule, Where
from runner.config.script_rules import script_rule
from runner.documents.diagnostics import Diagnostic, KeyPath, format_key_path, sort_diagnostics
from runner.documents.loader import LoadError, YamlFile, read_document, read_head, shorten
from runner.resources import schema_path
from runner.testing.model import (
    CallBound,
    Case,
    CaseFile,
    Expect,
    LLMSpec,
    RetrievedExpect,
    SourceExpect,
    TextExpect,
    Turn,
)

_MODELINE = re.compile(r"yaml-language-server:\s*\$schema=\S*testcase\.schema\.json")
_CASES_KEY = re.compile(r"^cases\s*:", re.MULTILINE)


class CaseFileError(Exception):
    """A test-case file that cannot be run; carries every diagnostic found."""

    def __init__(self, path: Path, diagnostics: Iterable[Diagnostic]) -> None:
        self.path = path
        self.diagnostics = tuple(sort_diagnostics(diagnostics))
        super().__init__(f"{path}: {len(self.diagnostics)} problem(s)")


# --- finding files --------------------------------------------------------------------------


def find_case_files(paths: Iterable[Path | str]) -> list[Path]:
    """Files as given, and the test-case files found in folders: YAML files whose top level has
    `cases` (or that carry the test-case schema's modeline), searched the way `runner validate`
    searches for pipelines (hidden folders such as `.runner` are skipped). Raises
    FileNotFoundError for a path that does not exist."""
    return find_yaml_files(paths, looks_like_case_file)


def looks_like_case_file(path: Path) -> bool:
    """Decided on the text, so that a file broken beyond parsing is still reported."""
    text = read_head(path)
    if text is None:
        return False
    return bool(_MODELINE.search(text[:2000]) or _CASES_KEY.search(text))


def default_pipeline(case_file: Path) -> list[Path]:
    """The pipeline files in the test file's own folder, or else in its parent folder."""
    for folder in (case_file.parent, case_file.parent.parent):
        found = [p for p in find_pipeline_files([folder]) if p.parent == folder]
        if found:
            return found
    return []


# --- the schema -------------------------------------------------------------------------------


@cache
def _schema_file() -> dict[str, Any]:
    return json.loads(schema_path("testcase").read_text(encoding="utf-8"))


def _inlined(node: Any) -> Any:
    """A part of the test-case schema with its local `$ref`s written out, so that the
    diagnostics code (which resolves references against the pipeline schema) reads it as it
    is."""
    if isinstance(node, dict):
        if "$ref" in node:
            name = str(node["$ref"]).removeprefix("#/$defs/")
            rest = {key: value for key, value in node.items() if key != "$ref"}
            return _inlined({**_schema_file()["$defs"][name], **rest})
        return {key: _inlined(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_inlined(item) for item in node]
    return node


@cache
def case_schema() -> dict[str, Any]:
    """`schemas/testcase.schema.json`, its references written out."""
    return _inlined({key: value for key, value in _schema_file().items() if key != "$defs"})


@cache
def _case_validator() -> Draft202012Validator:
    return Draft202012Validator(case_schema())


@cache
def _script_file_validator() -> Draft202012Validator:
    return Draft202012Validator(_inlined(_schema_file()["$defs"]["script_file"]))


# --- loading ----------------------------------------------------------------------------------


def _file_at(folder: Path, relative: str, root: Path | None = None) -> tuple[Path, str | None]:
    """A path a test file names, resolved, and why it cannot be read as a file (or None).
    With `root`, a path that resolves outside it (`/etc/passwd`, `../../x`, a symbolic link
    out) is refused before anything is looked up: whether it exists is not told either."""
    try:
        target = (folder / Path(relative)).resolve()
        if root is not None and not target.is_relative_to(root.resolve()):
            return folder, "is outside the pipeline's folder, where a test's files must be"
        if target.is_file():
            return target, None
        if target.is_dir():
            return target, f"is a folder, not a file ({target})"
        return target, f"not found (looked for {target})"
    except (OSError, ValueError) as error:  # a name too long for the file system, a NUL byte
        reason = getattr(error, "strerror", None) or str(error)
        return folder, f"cannot be opened: {reason}"


PipelineLoader = Callable[[Path], Pipeline]


def load_case_file(path: Path, pipelines: PipelineLoader) -> tuple[CaseFile, Pipeline]:
    """The cases of one file and the pipeline they test. Raises CaseFileError (the file) or
    PipelineError (the pipeline it names is invalid)."""
    document = _read(path)
    diagnostics = humanize(_case_validator().iter_errors(document.data), document)
    if diagnostics:
        raise CaseFileError(path, diagnostics)
    builder = _Builder(document)
    pipeline_path = builder.pipeline_path()
    if pipeline_path is not None:
        builder.root = pipeline_path.parent
    cases = builder.cases()
    if builder.diagnostics or pipeline_path is None:
        raise CaseFileError(path, builder.diagnostics)
    case_file = CaseFile(path, pipeline_path, cases, document.data.get("description", ""))
    pipeline = pipelines(pipeline_path)
    builder.check_tools(pipeline, case_file)
    if builder.diagnostics:
        raise CaseFileError(path, builder.diagnostics)
    return case_file, pipeline


def _read(path: Path) -> YamlFile:
    try:
        return read_document(path)
    except LoadError as error:
        raise CaseFileError(path, [error.diagnostic]) from None


class _Builder:
    """Turns a schema-valid document into the model, collecting T1xx diagnostics."""

    def __init__(self, document: YamlFile) -> None:
        self.document = document
        self.data: Mapping[str, Any] = document.data
        self.folder = document.path.parent
        # the folder a test's script files and cassettes must be in: its pipeline's folder
        # (a test file is shared, kept from the playground and run by CI: it reads no file
        # of the machine beyond the pipeline's)
        self.root = self.folder.parent
        self.diagnostics: list[Diagnostic] = []

    def emit(
        self,
        code: str,
        message: str,
        path: KeyPath,
        hint: str = "",
        document: YamlFile | None = None,
    ) -> None:
        target = document or self.document
        self.diagnostics.append(target.diagnostic(code, message, path, hint=hint))

    def line(self, path: KeyPath) -> int:
        return self.document.position(path).line

    # --- the pipeline ------------------------------------------------------------------

    def pipeline_path(self) -> Path | None:
        given = self.data.get("pipeline")
        if given is not None:
            target, problem = _file_at(self.folder, given)
            if problem is not None:
                self.emit(
                    "T104",
                    f"pipeline file `{shorten(given)}` {problem}",
                    ("pipeline",),
                    hint="the path is relative to this test file",
                )
                return None
            return target
        found = default_pipeline(self.document.path)
        if len(found) == 1:
            return found[0].resolve()
        names = ", ".join(str(p) for p in found)
        self.emit(
            "T104",
            f"several pipeline files could be the one under test: {names}"
            if found
            else "no pipeline file in this file's folder or its parent folder",
            (),
            hint="name it with `pipeline: ../<domain>.yaml` (relative to this file)",
        )
        return None

    # --- cases -------------------------------------------------------------------------

    def cases(self) -> tuple[Case, ...]:
        file_llm = self.llm(self.data.get("llm"), ("llm",))
        seen: dict[str, int] = {}
        cases = []
        for index, data in enumerate(self.data["cases"]):
            path: KeyPath = ("cases", index)
            name = data["name"]
            if name in seen:
                self.emit(
                    "T103",
                    f"two cases are named `{name}` (the first at line {seen[name]})",
                    (*path, "name"),
                    hint="give every case of a file its own name: reports name cases by it",
                )
            seen.setdefault(name, self.line(path))
            case_llm = self.llm(data.get("llm"), (*path, "llm"))
            turns = tuple(
                self.turn(turn, (*path, "turns", i)) for i, turn in enumerate(data["turns"])
            )
            cases.append(
                Case(
                    name=name,
                    turns=turns,
                    llm=case_llm.then(file_llm),
                    line=self.line(path),
                    description=data.get("description", ""),
                )
            )
        return tuple(cases)

    def turn(self, data: Mapping[str, Any], path: KeyPath) -> Turn:
        if "message" in data and "answer" in data:
            self.emit(
                "T101",
                "a turn is a `message` (a new question) or an `answer` (to the clarifying "
                "question the previous turn asked), not both",
                (*path, "answer"),
                hint="split it into two turns, or keep one of the keys",
            )
        if "answer" in data and path[-1] == 0:
            self.emit(
                "T102",
                "the first turn of a case is an `answer`, but no question was asked yet",
                (*path, "answer"),
                hint="start the case with `message:`",
            )
        is_answer = "message" not in data
        text = data["answer"] if is_answer else data["message"]
        return Turn(
            text, is_answer, self.expect(data.get("expect", {}), (*path, "expect")), self.line(path)
        )

    def expect(self, data: Mapping[str, Any], path: KeyPath) -> Expect:
        return Expect(
            outcome=data.get("outcome"),
            answer=self.text(data.get("answer"), (*path, "answer")),
            question=self.text(data.get("question"), (*path, "question")),
            error=self.text(data.get("error"), (*path, "error")),
            sources=tuple(self.source(s) for s in data.get("sources", ())),
            no_sources=bool(data.get("no_sources", False)),
            degraded=data.get("degraded"),
            ran=tuple(data.get("ran", ())),
            not_ran=tuple(data.get("not_ran", ())),
            skipped=tuple(data.get("skipped", ())),
            not_skipped=tuple(data.get("not_skipped", ())),
            llm_calls=tuple(
                (purpose, self.bound(bound)) for purpose, bound in data.get("llm_calls", {}).items()
            ),
            retrieved=tuple(
                RetrievedExpect(r["tool"], r["document"], r.get("page"), r.get("top"))
                for r in data.get("retrieved", ())
            ),
        )

    def text(self, data: Any, path: KeyPath) -> TextExpect | None:
        if data is None:
            return None
        if isinstance(data, str):
            return TextExpect(contains=(data,))
        matches = data.get("matches")
        if matches is not None:
            self.regex(matches, (*path, "matches"))
        return TextExpect(
            contains=_texts(data.get("contains")),
            not_contains=_texts(data.get("not_contains")),
            matches=matches,
        )

    @staticmethod
    def source(data: str | Mapping[str, Any]) -> SourceExpect:
        if isinstance(data, str):
            return SourceExpect(data)
        return SourceExpect(data["document"], data.get("page"), data.get("heading"))

    @staticmethod
    def bound(data: int | Mapping[str, int]) -> CallBound:
        if isinstance(data, int):
            return CallBound(exact=data)
        return CallBound(min=data.get("min"), max=data.get("max"))

    # --- the LLM -----------------------------------------------------------------------

    def llm(self, data: Mapping[str, Any] | None, path: KeyPath) -> LLMSpec:
        if data is None:
            return LLMSpec()
        rules = [
            self.rule(rule, (*path, "script", i)) for i, rule in enumerate(data.get("script", ()))
        ]
        fallback = data.get("fallback")
        if "script_file" in data:
            file_rules, file_fallback = self.script_file(
                data["script_file"], (*path, "script_file")
            )
            rules.extend(file_rules)
            fallback = fallback or file_fallback
        cassette = None
        if "cassette" in data:
            cassette = self.existing(data["cassette"], (*path, "cassette"), "cassette")
        return LLMSpec(data.get("provider"), tuple(rules), fallback, cassette)

    def rule(
        self, data: Mapping[str, Any], path: KeyPath, document: YamlFile | None = None
    ) -> ScriptRule:
        document = document or self.document
        position = document.position(path)
        for key in ("task", "prompt"):
            if key in data:
                self.regex(data[key], (*path, key), document)
        return script_rule(data, Where(document.path, position.line, position.col))

    def regex(self, pattern: str, path: KeyPath, document: YamlFile | None = None) -> None:
        try:
            re.compile(pattern)
        except re.error as error:
            self.emit(
                "T106",
                f"{format_key_path(path)}: `{pattern}` is not a valid regular expression ({error})",
                path,
                hint="escape special characters such as ( ) ? + . with a backslash",
                document=document,
            )

    def existing(self, relative: str, path: KeyPath, what: str) -> Path | None:
        target, problem = _file_at(self.folder, relative, self.root)
        if problem is not None:
            self.emit(
                "T105",
                f"{what} file `{shorten(relative)}` {problem}",
                path,
                hint="the path is relative to this test file and stays in the pipeline's "
                "folder: copy the file there",
            )
            return None
        return target

    def script_file(self, relative: str, path: KeyPath) -> tuple[list[ScriptRule], str | None]:
        target = self.existing(relative, path, "script")
        if target is None:
            return [], None
        try:
            document = read_document(target)
        except LoadError as error:
            self.diagnostics.append(error.diagnostic)
            return [], None
        problems = humanize(_script_file_validator().iter_errors(document.data), document)
        if problems:
            self.diagnostics.extend(problems)
            return [], None
        listed = isinstance(document.data, list)
        items = document.data if listed else document.data["rules"]
        prefix: KeyPath = () if listed else ("rules",)
        rules = [self.rule(item, (*prefix, i), document) for i, item in enumerate(items)]
        return rules, None if listed else document.data.get("fallback")

    # --- names the pipeline must have ---------------------------------------------------

    def check_tools(self, pipeline: Pipeline, case_file: CaseFile) -> None:
        """A misspelt tool in `not_ran` would make a check that cannot fail, and one in a rule
        a rule that never answers: refuse both."""
        known = [tool.name for tool in pipeline.tools]
        places: list[tuple[str, Where, KeyPath]] = []
        for rule in dict.fromkeys(r for case in case_file.cases for r in case.llm.script):
            if rule.tool is not None and rule.where is not None:
                places.append((rule.tool, rule.where, ()))
        for path, name in self._expected_tools():
            position = self.document.position(path)
            places.append((name, Where(self.document.path, position.line, position.col), path))
        for name, where, path in places:
            if "*" in name or pipeline.find_tool(name) is not None:
                continue
            self.diagnostics.append(
                Diagnostic(
                    "T107",
                    f"the pipeline `{pipeline.domain}` has no tool `{name}`"
                    + suggestion_suffix(name, known),
                    where.file,
                    where.line,
                    where.col,
                    path=path,
                    hint=f"its tools: {', '.join(known)}",
                    depth=len(path),
                )
            )

    def _expected_tools(self) -> Iterator[tuple[KeyPath, str]]:
        for c, case in enumerate(self.data["cases"]):
            for t, turn in enumerate(case["turns"]):
                expect = turn.get("expect", {})
                for key in ("ran", "not_ran"):
                    for k, completion in enumerate(expect.get(key, ())):
                        path: KeyPath = ("cases", c, "turns", t, "expect", key, k)
                        yield path, completion.rpartition(":")[2]
                for k, retrieved in enumerate(expect.get("retrieved", ())):
                    where: KeyPath = ("cases", c, "turns", t, "expect", "retrieved", k, "tool")
                    yield where, retrieved["tool"]


def _texts(value: str | list[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def cached_pipeline_loader() -> PipelineLoader:
    """`load_pipeline`, once per file per run; an invalid pipeline raises its PipelineError
    each time it is asked for."""
    from runner.config import load_pipeline

    loaded: dict[Path, Pipeline | PipelineError] = {}

    def load(path: Path) -> Pipeline:
        if path not in loaded:
            try:
                loaded[path] = load_pipeline(path)
            except PipelineError as error:
                loaded[path] = error
        result = loaded[path]
        if isinstance(result, PipelineError):
            raise result
        return result

    return load
