"""Safe YAML loading that remembers where every value came from.

PyYAML's own constructors forget positions, silently keep the last of two equal keys and expand
aliases without limit. So this module only lets PyYAML *compose* the node graph (safe tags only)
and turns the nodes into plain data itself: it records the line and column of every value and
every mapping key, reports duplicate keys, and stops a "billion laughs" document once alias
expansion passes a fixed budget of nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

from runner.config.diagnostics import Diagnostic, KeyPath, Severity

# A pipeline has a few hundred nodes; nothing legitimate comes near this after expansion.
MAX_NODES = 100_000

_Loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"
_COLLECTION_TAGS = {"tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"}


@dataclass(frozen=True)
class Position:
    line: int  # 1-based
    col: int  # 1-based
    style: str | None = None  # the scalar style: None plain, "'", '"', "|", ">"
    end_line: int = 0  # where the value ends (templates' lines are searched up to it)


@dataclass
class Document:
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


def read_document(path: Path) -> Document:
    """Read and parse a YAML file. Raises LoadError with a positioned diagnostic."""
    try:
        text = path.read_text(encoding="utf-8")
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
    except OSError as error:
        raise LoadError(
            Diagnostic("Y006", f"cannot read the file: {error.strerror}", path)
        ) from error
    return parse_document(path, text)


def parse_document(path: Path, text: str) -> Document:
    """Parse YAML text (one document) into plain data with positions."""
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as error:
        raise LoadError(_syntax_diagnostic(path, text, error)) from error
    except yaml.YAMLError as error:  # unmarked errors (e.g. a bad encoding marker)
        raise LoadError(Diagnostic("Y001", f"YAML syntax error: {error}", path)) from error
    document = Document(path, text)
    if root is not None:
        document.data = _Converter(document).convert(root, ())
    return document


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
    line, col = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
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

    def __init__(self, document: Document) -> None:
        self.document = document
        self.constructor = SafeConstructor()
        self.visited = 0
        self.active: set[int] = set()  # ids of the collection nodes being converted (cycles)
        self.top_level_keys: dict[str, yaml.Node] = {}

    def convert(self, node: yaml.Node, path: KeyPath) -> Any:
        self.visited += 1
        if self.visited > MAX_NODES:
            # Point at the top-level key whose value explodes: the aliased node itself may sit
            # anywhere in the file.
            node = self.top_level_keys.get(path[0], node) if path else node
            under = f" under `{path[0]}`" if path else ""
            raise LoadError(
                self._error(
                    "Y003",
                    node,
                    f"expanding the aliases{under} makes more than {MAX_NODES:,} nodes",
                    path[:1],
                    hint="a file that expands aliases this far is either "
                    "a mistake or an attack; write the values out",
                )
            )
        self.document.value_nodes.setdefault(path, node)
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, path)
        if node.tag not in _COLLECTION_TAGS:
            message = f"unsupported YAML tag `{node.tag}`"
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
            return self._mapping(node, path)
        finally:
            self.active.discard(id(node))

    def _scalar(self, node: yaml.ScalarNode, path: KeyPath) -> Any:
        try:
            return self.constructor.construct_object(node)
        except yaml.MarkedYAMLError as error:  # a tag safe loading does not allow
            message = f"unsupported YAML tag `{node.tag}`"
            raise LoadError(
                self._error("Y008", node, message, path, hint="remove the tag")
            ) from error
        except ValueError as error:  # e.g. a timestamp with month 13
            message = f"`{node.value}` is not a valid {node.tag.rsplit(':', 1)[-1]}: {error}"
            raise LoadError(
                self._error("Y008", node, message, path, hint="quote the value")
            ) from error

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


def _position(node: yaml.Node) -> Position:
    mark = node.start_mark
    style = getattr(node, "style", None) or None  # the C parser says "" for plain
    return Position(mark.line + 1, mark.column + 1, style, node.end_mark.line + 1)
