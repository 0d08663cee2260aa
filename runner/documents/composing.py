"""YAML composition that refuses a hostile file before it costs time or memory.

`yaml.compose` builds the whole node tree before anyone can count it: a 50 MB list took 87 s
and 3.9 GB, and 500 levels of nesting overflowed Python's stack. Here libyaml still parses
(fast, in C), but the nodes are composed by PyYAML's Python composer, which this module counts as
it goes: a file past the size, node or depth limit is refused at the first node too many, with
the place where it happened. The limits are documented in docs/validate.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import yaml
from yaml.composer import Composer
from yaml.resolver import Resolver


@dataclass(frozen=True)
class YamlLimits:
    """What one YAML file may hold. A pipeline has a few hundred nodes and a depth below 10."""

    max_bytes: int = 10 * 1024 * 1024  # the file's size on disk
    max_nodes: int = 100_000  # nodes as written, and again after alias expansion
    max_depth: int = 100  # lists and mappings inside one another

    def describe(self) -> str:
        return f"{self.max_bytes:,} bytes, {self.max_nodes:,} nodes, depth {self.max_depth}"


DEFAULT_LIMITS = YamlLimits()
# Lookup tables are data: a YAML or JSON table may hold more than a pipeline, but a YAML node
# costs PyYAML ~8 µs and ~500 bytes (5,000,000 of them took 46 s and 2 GB to refuse), so that
# any table is read or refused within ~2 s and 500 MB; a larger table belongs in a CSV file
# (never composed: a million CSV rows are read in about a second).
TABLE_LIMITS = YamlLimits(max_bytes=20 * 1024 * 1024, max_nodes=250_000)


class Place(Protocol):
    """Where in a file: PyYAML's and libyaml's marks both have a 0-based line and column."""

    @property
    def line(self) -> int: ...

    @property
    def column(self) -> int: ...


class Refused(Exception):
    """A file over one of the limits: a stable code, the message, and the mark it happened at."""

    def __init__(self, code: str, message: str, mark: Place | None, hint: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.mark = mark
        self.hint = hint


try:  # libyaml's parser when PyYAML was built with it; the pure-Python one otherwise
    from yaml._yaml import CParser as _Parser

    _PARSER_READS_TEXT = True
except ImportError:  # pragma: no cover - every wheel on PyPI ships libyaml
    _PARSER_READS_TEXT = False


if _PARSER_READS_TEXT:

    class _Events(_Parser):
        def __init__(self, text: str) -> None:
            _Parser.__init__(self, text)

else:  # pragma: no cover
    # the same class on PyYAML's own parser, for a PyYAML built without libyaml
    class _Events(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):  # type: ignore[no-redef]  # either one
        def __init__(self, text: str) -> None:
            yaml.reader.Reader.__init__(self, text)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)


class _CountingComposer(Composer, _Events, Resolver):
    """PyYAML's composer on the fast parser's events, counting nodes and depth as it composes.
    (Composer comes first in the bases, so its `get_single_node` replaces libyaml's own.)"""

    def __init__(self, text: str, limits: YamlLimits) -> None:
        _Events.__init__(self, text)
        Composer.__init__(self)
        Resolver.__init__(self)
        self.limits = limits
        self.nodes = 0
        self.depth = 0

    def _here(self) -> Place | None:
        event = self.peek_event()
        return event.start_mark if event is not None else None

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self.nodes += 1
        if self.nodes > self.limits.max_nodes:
            raise Refused(
                "Y009",
                f"the file holds more than {self.limits.max_nodes:,} values (keys, items and "
                "scalars); it is refused here",
                self._here(),
                "a pipeline or test-case file this large is a mistake (generated data belongs "
                "in a table or a corpus)",
            )
        self.depth += 1
        try:
            if self.depth > self.limits.max_depth:
                raise Refused("Y010", too_deep_message(self.limits), self._here(), TOO_DEEP)
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


TOO_DEEP = "flatten the structure; nothing in a pipeline nests this deep"


def too_deep_message(limits: YamlLimits) -> str:
    return f"lists and mappings are nested more than {limits.max_depth} deep"


def compose(text: str, limits: YamlLimits = DEFAULT_LIMITS) -> yaml.Node | None:
    """The node tree of one YAML document, like `yaml.compose`. Raises Refused past a limit,
    yaml.YAMLError for a syntax error."""
    composer = _CountingComposer(text, limits)
    try:
        return composer.get_single_node()
    finally:
        composer.dispose()
