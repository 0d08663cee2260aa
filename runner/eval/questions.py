"""Reading a question set — CSV, JSONL or YAML — with located errors, as `runner validate`
reports a pipeline: every problem of the file at once, each at its `file:line:col`, with a fix.

The three formats share one schema (`schemas/questions.schema.json`): a YAML file is checked
against it whole, a JSONL line and a CSV row each against its `question` definition. In a CSV
file, a cell of `sources`, `answer` or `tags` holds several values separated by `|`; a `|` that
belongs to a value is written `\\|` (and a backslash before one `\\\\`).
Codes `Q1xx` are docs/eval.md's.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from runner.config.humanize import humanize
from runner.config.suggest import suggestion_suffix
from runner.documents.diagnostics import Diagnostic, sort_diagnostics
from runner.documents.loader import LoadError, YamlFile, parse_document, read_document
from runner.eval.model import Gold, Question, QuestionSet
from runner.resources import schema_path

FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".yaml": "yaml", ".yml": "yaml"}
COLUMNS = ("id", "question", "sources", "answer", "reference", "tags", "follow_up")
LISTED = ("sources", "answer", "tags")  # several values, `|` between them in a CSV cell
SEPARATOR = "|"
ESCAPE = "\\"


class QuestionSetError(Exception):
    """A question set that cannot be used; carries every diagnostic found."""

    def __init__(self, path: Path, diagnostics: Iterable[Diagnostic]) -> None:
        self.path = path
        self.diagnostics = tuple(sort_diagnostics(diagnostics))
        super().__init__(f"{path}: {len(self.diagnostics)} problem(s) in the question set")


@dataclass(frozen=True)
class _Row:
    data: Mapping[str, Any]
    line: int


# --- the schema -------------------------------------------------------------------------------


@cache
def _schema_file() -> dict[str, Any]:
    return json.loads(schema_path("questions").read_text(encoding="utf-8"))


def _inlined(node: Any) -> Any:
    """The schema with its `$ref`s written out (the diagnostics code reads it as it is)."""
    if isinstance(node, dict):
        if "$ref" in node:
            return _inlined(_schema_file()["$defs"][str(node["$ref"]).removeprefix("#/$defs/")])
        return {key: _inlined(value) for key, value in node.items() if key != "$defs"}
    if isinstance(node, list):
        return [_inlined(item) for item in node]
    return node


@cache
def file_schema() -> dict[str, Any]:
    return _inlined(_schema_file())


@cache
def question_schema() -> dict[str, Any]:
    return _inlined(_schema_file()["$defs"]["question"])


# --- reading ----------------------------------------------------------------------------------


def load_questions(path: Path) -> QuestionSet:
    """The questions of a CSV, JSONL or YAML file. Raises QuestionSetError with every problem
    found (the file's format, a row against the schema, two questions with one id)."""
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        raise QuestionSetError(
            path,
            [
                Diagnostic(
                    "Q100",
                    f"`{path.suffix or path.name}` is not a question-set format",
                    path,
                    hint="name the file .csv, .jsonl, .yaml or .yml (docs/eval.md)",
                )
            ],
        )
    readers = {"csv": _csv_rows, "jsonl": _jsonl_rows, "yaml": _yaml_rows}
    diagnostics: list[Diagnostic] = []
    rows, description = readers[kind](path, diagnostics)
    questions = _questions(path, rows, diagnostics)
    if diagnostics:
        raise QuestionSetError(path, diagnostics)
    if not questions:
        raise QuestionSetError(
            path,
            [
                Diagnostic(
                    "Q106",
                    "the question set has no question",
                    path,
                    1,
                    1,
                    hint="add a row with a `question`",
                )
            ],
        )
    return QuestionSet(path, tuple(questions), description)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except OSError as error:
        reason = error.strerror or str(error)
        diagnostic = Diagnostic("Q107", f"cannot read the file: {reason}", path)
        raise QuestionSetError(path, [diagnostic]) from error
    except UnicodeDecodeError as error:
        raise QuestionSetError(
            path,
            [Diagnostic("Q107", "the file is not UTF-8 text", path, hint="save it as UTF-8")],
        ) from error


def _yaml_rows(path: Path, diagnostics: list[Diagnostic]) -> tuple[list[_Row], str]:
    try:
        document = read_document(path)
    except LoadError as error:
        raise QuestionSetError(path, [error.diagnostic]) from None
    validator = Draft202012Validator(file_schema())
    problems = humanize(validator.iter_errors(document.data), document, file_schema())
    if problems:
        diagnostics.extend(problems)
        return [], ""
    data = document.data
    listed = isinstance(data, list)
    items = data if listed else data["questions"]
    prefix: tuple[str, ...] = () if listed else ("questions",)
    rows = [
        _Row(item, document.position((*prefix, index)).line) for index, item in enumerate(items)
    ]
    return rows, "" if listed else str(data.get("description", ""))


def _jsonl_rows(path: Path, diagnostics: list[Diagnostic]) -> tuple[list[_Row], str]:
    rows: list[_Row] = []
    validator = Draft202012Validator(question_schema())
    for number, text in enumerate(_read_text(path).splitlines(), 1):
        if not text.strip():
            continue
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            diagnostics.append(
                Diagnostic(
                    "Q104",
                    f"this line is not a JSON object: {error.msg}",
                    path,
                    number,
                    error.colno,
                    hint='write one question a line, e.g. {"question": "…", "sources": "…"}',
                )
            )
            continue
        errors = list(validator.iter_errors(data))
        if errors:
            document = _line_document(path, text, data)
            for diagnostic in humanize(errors, document, question_schema()):
                diagnostics.append(replace(diagnostic, line=number))
            continue
        rows.append(_Row(data, number))
    return rows, ""


def _line_document(path: Path, text: str, data: Any) -> YamlFile:
    """One JSONL line as a document, for the columns of its keys (JSON is YAML)."""
    try:
        return parse_document(path, text)
    except LoadError:
        return YamlFile(path, text, data)


def _csv_rows(path: Path, diagnostics: list[Diagnostic]) -> tuple[list[_Row], str]:
    text = _read_text(path)
    lines = text.splitlines()
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header is None:
        return [], ""
    names = [cell.strip().lower() for cell in header]
    known = _check_header(path, names, lines[0] if lines else "", diagnostics)
    if "question" not in names:
        return [], ""
    validator = Draft202012Validator(question_schema())
    rows: list[_Row] = []
    line = reader.line_num + 1
    for cells in reader:
        row_line, line = line, reader.line_num + 1
        if not any(cell.strip() for cell in cells) or cells[0].lstrip().startswith("#"):
            continue  # a blank line, or a comment (a line starting with #)
        data = _csv_data(names, known, cells)
        starts = _cell_starts(lines[row_line - 1]) if row_line <= len(lines) else []
        split = _split_heading(data.get("sources") or ())
        if split is not None:
            index = names.index("sources")
            col = starts[index] + 1 if index < len(starts) else 1
            diagnostics.append(
                Diagnostic(
                    "Q108",
                    f"column `sources`: `{split[1]}` follows the heading of `{split[0]}` and "
                    "names no document: the cell's `|` cut a heading in two",
                    path,
                    row_line,
                    col,
                    hint=f"a `|` inside a heading is written `\\|`: "
                    f"{_escaped(split[0])}\\|{_escaped(split[1])}",
                )
            )
            continue
        problems = list(validator.iter_errors(data))
        for error in problems:
            column = str(error.path[0]) if error.path else _missing_column(error)
            index = names.index(column) if column in names else 0
            col = starts[index] + 1 if index < len(starts) else 1
            diagnostics.append(
                Diagnostic(
                    "Q105",
                    f"column `{column}`: {_csv_message(error)}",
                    path,
                    row_line,
                    col,
                    hint=_csv_hint(column),
                )
            )
        if not problems:
            rows.append(_Row(data, row_line))
    return rows, ""


def _check_header(
    path: Path, names: list[str], line: str, diagnostics: list[Diagnostic]
) -> list[bool]:
    """Whether each column is one of ours; an unknown or repeated one is reported."""
    starts = _cell_starts(line)
    known: list[bool] = []
    for index, name in enumerate(names):
        col = starts[index] + 1 if index < len(starts) else 1
        if name not in COLUMNS:
            diagnostics.append(
                Diagnostic(
                    "Q101",
                    f"unknown column `{name}`" + suggestion_suffix(name, COLUMNS),
                    path,
                    1,
                    col,
                    hint=f"the columns: {', '.join(COLUMNS)}",
                )
            )
        elif name in names[:index]:
            diagnostics.append(
                Diagnostic(
                    "Q101", f"column `{name}` is there twice", path, 1, col, hint="keep one of them"
                )
            )
        known.append(name in COLUMNS)
    if "question" not in names:
        diagnostics.append(
            Diagnostic(
                "Q102",
                "the header has no `question` column",
                path,
                1,
                1,
                hint="the first line names the columns, e.g. id,question,sources,tags",
            )
        )
    return known


def _csv_data(names: list[str], known: list[bool], cells: list[str]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for name, is_known, cell in zip(names, known, cells, strict=False):
        value = cell.strip()
        if not is_known or not value:
            continue
        if name in LISTED:
            data[name] = [part.strip() for part in split_cell(value) if part.strip()]
        else:
            data[name] = value
    if "question" not in data:
        data["question"] = ""  # an empty cell: reported as such, not as a missing key
    return data


def split_cell(cell: str) -> list[str]:
    """A CSV cell's values: cut at each `|` that is not written `\\|` (`\\\\` is a backslash)."""
    values, current, chars = [], [], iter(cell)
    for char in chars:
        if char == ESCAPE:
            following = next(chars, "")
            if following in (SEPARATOR, ESCAPE):
                current.append(following)
            else:
                current.append(char + following)
        elif char == SEPARATOR:
            values.append("".join(current))
            current = []
        else:
            current.append(char)
    values.append("".join(current))
    return values


def _escaped(value: str) -> str:
    return value.replace(ESCAPE, ESCAPE * 2).replace(SEPARATOR, ESCAPE + SEPARATOR)


def _split_heading(sources: Iterable[str]) -> tuple[str, str] | None:
    """A gold heading a plain `|` cut in two (`flags.html#NC|nocase`): a value after a
    `document#heading` that has no `#` and names no file (no `.`, no `/`)."""
    previous = None
    for value in sources:
        if previous is not None and "#" in previous and not any(c in value for c in "#./"):
            return previous, value
        previous = value
    return None


def _missing_column(error: Any) -> str:
    return "question" if error.validator == "required" else ""


def _csv_message(error: Any) -> str:
    # a cell's values are a list: the alternative that failed is the list's, not the text's
    specific = [e for e in error.context or () if e.validator in ("pattern", "minLength")]
    if specific:
        error = specific[0]
    if error.validator == "minLength":
        return "the cell is empty"
    if error.validator == "pattern":
        return f"`{error.instance}` is not `document` or `document#heading`"
    return str(error.message)


def _csv_hint(column: str) -> str:
    hints = {
        "question": "every row needs its question",
        "sources": "name a document by its path in the corpus, e.g. manuals/kw.md or "
        "manuals/kw.md#Error codes; several separated by | (a | inside a heading is written \\|)",
        "id": "an id has no spaces or slashes",
    }
    return hints.get(column, "")


def _cell_starts(line: str) -> list[int]:
    """Where each cell of a CSV line starts (quoted cells may hold commas)."""
    starts, quoted = [0], False
    for index, char in enumerate(line):
        if char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            starts.append(index + 1)
    return starts


# --- the questions ------------------------------------------------------------------------------


def _questions(path: Path, rows: list[_Row], diagnostics: list[Diagnostic]) -> list[Question]:
    seen: dict[str, int] = {}
    questions = []
    for number, row in enumerate(rows, 1):
        question = _question(row, number)
        if question.id in seen:
            diagnostics.append(
                Diagnostic(
                    "Q103",
                    f"two questions have the id `{question.id}` (the first at line "
                    f"{seen[question.id]})",
                    path,
                    row.line,
                    1,
                    hint="give every question its own id: results and comparisons name it by it",
                )
            )
        seen.setdefault(question.id, row.line)
        questions.append(question)
    return questions


def _question(row: _Row, number: int) -> Question:
    data = row.data
    return Question(
        id=str(data.get("id", f"q{number}")),
        question=str(data["question"]).strip(),
        sources=tuple(Gold.parse(text) for text in _listed(data.get("sources"))),
        answer=_listed(data.get("answer")),
        reference=data.get("reference"),
        tags=_listed(data.get("tags")),
        follow_up=data.get("follow_up"),
        line=row.line,
    )


def _listed(value: str | list[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    return tuple(item.strip() for item in items if item.strip())
