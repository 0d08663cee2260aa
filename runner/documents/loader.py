"""Safe YAML loading that remembers where every value came from.

PyYAML's own constructors forget positions, silently keep the last of two equal keys and expand
aliases without limit. So this module only lets PyYAML *compose* the node graph (safe tags only)
and turns the nodes into plain data itself: it records the line and column of every value and
every mapping key, reports duplicate keys, and stops a "billion laughs" document once alias
expansion passes a fixed budget of nodes.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from runner.documents.composing import (
    DEFAULT_LIMITS,
    TOO_DEEP,
    Place,
    Refused,
    YamlLimits,
    compose,
    too_deep_message,
)
from runner.documents.diagnostics import Diagnostic, KeyPath, Severity

_MERGE_TAG = "tag:yaml.org,2002:merge"
_SEQ_TAG, _MAP_TAG = "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"
_STR_TAG, _INT_TAG, _FLOAT_TAG = (f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float"))
# the scalar tags safe loading builds, and what a value of each is
_SCALAR_TAGS = {
    f"tag:yaml.org,2002:{name}": f"!!{name} ({meaning})"
    for name, meaning in (
        ("str", "a text"),
        ("int", "a whole number"),
        ("float", "a number"),
        ("bool", "true or false"),
        ("null", "an empty value"),
        ("timestamp", "a date or a time"),
    )
}


@dataclass(frozen=True)
class Position:
    """Where a value is in its YAML file, and how it was written."""

    line: int  # 1-based
    col: int  # 1-based
    style: str | None = None  # the scalar style: None plain, "'", '"', "|", ">"
    end_line: int = 0  # where the value ends (templates' lines are searched up to it)


@dataclass
class YamlFile:
    """A loaded YAML file: plain data plus the node each key path's value (and key) came from.
    Positions are made from the nodes when asked for: most are never needed."""

    path: Path
    text: str
    data: Any = None
    value_nodes: dict[KeyPath, yaml.Node] = field(default_factory=dict)
    key_nodes: dict[KeyPath, yaml.Node] = field(default_factory=dict)

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    def position(self, path: KeyPath, *, at_key: bool = False) -> Position:
        """Where the value at `path` starts (or its key, with `at_key`); the nearest existing
        ancestor when the path itself is absent (a missing key points at its parent)."""
        for end in range(len(path), -1, -1):
            prefix = path[:end]
            if at_key and prefix in self.key_nodes:
                return _position(self.key_nodes[prefix])
            if prefix in self.value_nodes:
                return _position(self.value_nodes[prefix])
        return Position(1, 1)

    def diagnostic(
        self,
        code: str,
        message: str,
        path: KeyPath,
        *,
        hint: str = "",
        severity: Severity = Severity.ERROR,
        at_key: bool = False,
    ) -> Diagnostic:
        """A diagnostic placed where the value at `path` (or, with `at_key`, its key) starts;
        deeper paths sort first (the most specific problem leads)."""
        position = self.position(path, at_key=at_key)
        return Diagnostic(
            code,
            message,
            self.path,
            position.line,
            position.col,
            severity,
            path,
            hint,
            depth=len(path),
        )


class LoadError(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def read_document(path: Path, limits: YamlLimits = DEFAULT_LIMITS) -> YamlFile:
    """Read and parse a YAML file. Raises LoadError with a positioned diagnostic."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(limits.max_bytes + 1)
    except OSError as error:
        reason = error.strerror or str(error)
        raise LoadError(Diagnostic("Y006", f"cannot read the file: {reason}", path)) from error
    if len(raw) > limits.max_bytes:
        raise LoadError(
            Diagnostic(
                "Y011",
                f"the file is larger than {limits.max_bytes:,} bytes; it is refused unread",
                path,
                1,
                1,
                hint="a pipeline or test-case file this large is a mistake (generated data "
                "belongs in a table or a corpus)",
            )
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        before = error.object[: error.start]
        line = before.count(b"\n") + 1
        col = error.start - (before.rfind(b"\n") + 1) + 1
        raise LoadError(
            Diagnostic(
                "Y005",
                f"the file is not UTF-8 text (byte 0x{error.object[error.start]:02x})",
                path,
                line,
                col,
                hint="save the file as UTF-8",
            )
        ) from error
    # as Path.read_text would give it: universal newlines
    return parse_document(path, text.replace("\r\n", "\n").replace("\r", "\n"), limits)


def read_head(path: Path, limits: YamlLimits = DEFAULT_LIMITS) -> str | None:
    """The text of a file's first `max_bytes` (what the loader would read), for deciding what
    kind of file it is; None when it cannot be read. Bytes that are not UTF-8 are replaced, so
    that a pipeline with a stray byte, or saved as UTF-16, is still found, and then refused
    with Y005 (it was skipped, unreported). A file over the limit is judged by its head, so
    that it is still found, and then refused with Y011."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(limits.max_bytes)
    except OSError:
        return None
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return raw.decode("utf-16", errors="replace")
    return raw.decode("utf-8", errors="replace")


def parse_document(path: Path, text: str, limits: YamlLimits = DEFAULT_LIMITS) -> YamlFile:
    """Parse YAML text (one document) into plain data with positions."""
    try:
        root = compose(text, limits)
    except Refused as refused:
        line, col = _mark_place(refused.mark)
        raise LoadError(
            Diagnostic(refused.code, refused.message, path, line, col, hint=refused.hint)
        ) from None
    except yaml.MarkedYAMLError as error:
        if "maximum nesting depth" in str(error.problem):
            # libyaml's own limit (1,000), met while it reads ahead of a deep flow collection
            # before the composer's: the same refusal, where libyaml stopped.
            line, col = _mark_place(error.problem_mark)
            raise LoadError(
                Diagnostic("Y010", too_deep_message(limits), path, line, col, hint=TOO_DEEP)
            ) from None
        raise LoadError(_syntax_diagnostic(path, text, error)) from error
    except yaml.reader.ReaderError as error:  # a control character, e.g. a NUL byte
        raise LoadError(_reader_diagnostic(path, text, error)) from error
    except yaml.YAMLError as error:  # other unmarked errors
        raise LoadError(Diagnostic("Y001", f"YAML syntax error: {error}", path, 1, 1)) from error
    document = YamlFile(path, text)
    if root is not None:
        document.data = _Converter(document, limits).convert(root, ())
    return document


def _mark_place(mark: Place | None) -> tuple[int, int]:
    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)


def _reader_diagnostic(path: Path, text: str, error: yaml.reader.ReaderError) -> Diagnostic:
    """libyaml counts the position in UTF-8 bytes (a BOM included); a person reads line:col."""
    before = text.encode("utf-8")[: error.position].decode("utf-8", errors="ignore")
    before = before.removeprefix("\ufeff")  # the byte order mark is no column of its own
    line = before.count("\n") + 1
    col = len(before) - (before.rfind("\n") + 1) + 1
    character = error.character
    shown = f"U+{character:04X}" if isinstance(character, int) else repr(character)
    return Diagnostic(
        "Y012",
        f"the file holds a control character ({shown}), which YAML does not allow",
        path,
        line,
        col,
        hint="remove the character; write it as an escape inside a double-quoted text "
        '(e.g. "\\t") if it is meant',
    )


def _syntax_diagnostic(path: Path, text: str, error: yaml.MarkedYAMLError) -> Diagnostic:
    mark = error.problem_mark or error.context_mark
    problem = error.problem or "invalid YAML"
    message = f"YAML syntax error: {problem}"
    if "another document" in problem:
        message = "YAML syntax error: a second document starts here"
    elif error.context:
        message += f" ({error.context}"
        if error.context_mark is not None and error.context_mark is not mark:
            message += f" at line {error.context_mark.line + 1}"
        message += ")"
    hint = _syntax_hint(message, _char_at(text, mark))
    line, col = _mark_place(mark)
    return Diagnostic("Y001", message, path, line, col, hint=hint)


def _char_at(text: str, mark: yaml.Mark | None) -> str:
    """The character a syntax error points at (the C parser's marks carry no buffer)."""
    lines = text.splitlines()
    if mark is None or mark.line >= len(lines) or mark.column >= len(lines[mark.line]):
        return ""
    return lines[mark.line][mark.column]


def _syntax_hint(message: str, char: str) -> str:
    if char == "\t" or "tab character" in message:
        return "YAML indents with spaces only: replace the tab"
    if "mapping values are not allowed" in message:
        return "a value containing ': ' must be quoted"
    if "second document" in message:
        return "a pipeline file holds one YAML document: remove the extra '---'"
    return ""


class _Converter:
    """Nodes -> plain data, recording positions, refusing duplicate keys and alias bombs."""

    def __init__(self, document: YamlFile, limits: YamlLimits) -> None:
        self.document = document
        self.limits = limits
        self.constructor = SafeConstructor()
        self.resolver = Resolver()
        self.visited = 0
        self.active: set[int] = set()  # ids of the collection nodes being converted (cycles)
        self.top_level_keys: dict[str | int, yaml.Node] = {}

    def convert(self, node: yaml.Node, path: KeyPath) -> Any:
        self.visited += 1
        if self.visited > self.limits.max_nodes:
            # Point at the top-level key whose value explodes: the aliased node itself may sit
            # anywhere in the file.
            node = self.top_level_keys.get(path[0], node) if path else node
            under = f" under `{path[0]}`" if path else ""
            raise LoadError(
                self._error(
                    "Y003",
                    node,
                    f"expanding the aliases{under} makes more than {self.limits.max_nodes:,} nodes",
                    path[:1],
                    hint="a file that expands aliases this far is either "
                    "a mistake or an attack; write the values out",
                )
            )
        if len(path) > self.limits.max_depth:  # aliases can nest deeper than the text does
            raise LoadError(
                self._error(
                    "Y010",
                    self.top_level_keys.get(path[0], node),
                    f"expanding the aliases under `{path[0]}` nests lists and mappings more "
                    f"than {self.limits.max_depth} deep",
                    path[:1],
                    hint="write the values out; aliases are for sharing a few settings",
                )
            )
        self.document.value_nodes.setdefault(path, node)
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, path)
        wanted = _SEQ_TAG if isinstance(node, yaml.SequenceNode) else _MAP_TAG
        if node.tag != wanted:
            message = f"unsupported YAML tag `{_short_tag(node.tag)}`"
            if node.tag in _SCALAR_TAGS or node.tag in (_SEQ_TAG, _MAP_TAG):
                message = f"`{_short_tag(node.tag)}` cannot tag a {_kind_of(node)}"
            raise LoadError(self._error("Y008", node, message, path, hint="remove the tag"))
        if id(node) in self.active:
            raise LoadError(
                self._error(
                    "Y004", node, "an alias refers to its own anchor (a recursive structure)", path
                )
            )
        self.active.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                return [self.convert(item, (*path, i)) for i, item in enumerate(node.value)]
            assert isinstance(node, yaml.MappingNode)  # the one kind of node left
            return self._mapping(node, path)
        finally:
            self.active.discard(id(node))

    def _scalar(self, node: yaml.ScalarNode, path: KeyPath) -> Any:
        tag = node.tag
        if tag not in _SCALAR_TAGS:
            message = f"unsupported YAML tag `{_short_tag(tag)}`"
            if tag in (_SEQ_TAG, _MAP_TAG):
                message = f"`{_short_tag(tag)}` tags a single value here"
            hint = "remove the tag; safe loading takes !!str, !!int, !!float, !!bool, !!null "
            raise LoadError(self._error("Y008", node, message, path, hint=hint + "and !!timestamp"))
        if not self._tag_fits(node):
            message = f"{_written(node.value)} cannot be read as {_SCALAR_TAGS[tag]}"
            hint = "correct the value, or remove the tag (quote the value to keep it as text)"
            raise LoadError(self._error("Y008", node, message, path, hint=hint))
        try:
            return self.constructor.construct_object(node)
        except (ValueError, ArithmeticError, yaml.YAMLError) as error:  # e.g. month 13
            message = f"{_written(node.value)} cannot be read as {_SCALAR_TAGS[tag]}: {error}"
            raise LoadError(
                self._error("Y008", node, message, path, hint="quote the value")
            ) from error

    def _tag_fits(self, node: yaml.ScalarNode) -> bool:
        """Whether an explicitly tagged value reads as its tag: `!!bool maybe` does not (and
        would crash PyYAML's constructor). An integer written out fits `!!float` too."""
        if node.tag == _STR_TAG:
            return True
        implicit = self.resolver.resolve(yaml.ScalarNode, node.value, (True, False))
        return implicit == node.tag or (node.tag == _FLOAT_TAG and implicit == _INT_TAG)

    def _mapping(self, node: yaml.MappingNode, path: KeyPath) -> dict[str, Any]:
        result: dict[str, Any] = {}
        seen: dict[str, yaml.Node] = {}
        merged: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                merged.update(self._merge(value_node, path))
                continue
            key = self._key(key_node, path)
            if key in seen:
                first = seen[key].start_mark.line + 1
                raise_duplicate = self._error(
                    "Y002",
                    key_node,
                    f"duplicate key `{key}` (first given at line {first})",
                    (*path, key),
                    hint="YAML keeps only the last value: remove one of them",
                )
                raise LoadError(raise_duplicate)
            seen[key] = key_node
            if not path:
                self.top_level_keys[key] = key_node
            self.document.key_nodes[(*path, key)] = key_node
            result[key] = self.convert(value_node, (*path, key))
        # `<<: *base` fills in only the keys the mapping does not give itself
        return {**{k: v for k, v in merged.items() if k not in result}, **result}

    def _merge(self, node: yaml.Node, path: KeyPath) -> dict[str, Any]:
        sources = node.value if isinstance(node, yaml.SequenceNode) else [node]
        merged: dict[str, Any] = {}
        for source in reversed(sources):  # earlier sources win, as YAML's merge key says
            if not isinstance(source, yaml.MappingNode):
                raise LoadError(self._error("Y001", source, "`<<` merges mappings only", path))
            merged.update(self.convert(source, path))
        return merged

    def _key(self, node: yaml.Node, path: KeyPath) -> str:
        if not isinstance(node, yaml.ScalarNode):
            raise LoadError(
                self._error(
                    "Y007",
                    node,
                    "a mapping key must be a plain value, not a list or a mapping",
                    path,
                )
            )
        # The text as written: `yes:` stays the key "yes", `1:` the key "1".
        return str(node.value)

    def _error(
        self, code: str, node: yaml.Node, message: str, path: KeyPath, *, hint: str = ""
    ) -> Diagnostic:
        position = _position(node)
        return Diagnostic(
            code, message, self.document.path, position.line, position.col, path=path, hint=hint
        )


def _short_tag(tag: str) -> str:
    return "!!" + tag.removeprefix("tag:yaml.org,2002:") if tag.startswith("tag:yaml") else tag


def _kind_of(node: yaml.Node) -> str:
    return "list" if isinstance(node, yaml.SequenceNode) else "mapping"


def _written(value: str) -> str:
    return f"`{shorten(value)}`" if value else "an empty value"


def shorten(value: object, width: int = 60) -> str:
    """A value for a message: whole when short, its start and an ellipsis when long; control
    characters are shown as escapes (`\\x1b`), never sent to the terminal or a report."""
    text = str(value)[: width + 1]
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return text if len(text) <= width else text[: width - 1] + "…"


def _position(node: yaml.Node) -> Position:
    mark = node.start_mark
    style = getattr(node, "style", None) or None  # the C parser says "" for plain
    return Position(mark.line + 1, mark.column + 1, style, node.end_mark.line + 1)
