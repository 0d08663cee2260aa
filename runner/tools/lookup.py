"""The `lookup` kind: rows of a CSV/YAML/JSON table, matched by key.

With `match: text` the key values are searched in the task's text (case-insensitive, whole
tokens, longest first, so `KD-460i` is not also read as `KD-460`); with `match: params` the LLM
extracts the parameter named by `parameter` and its value(s) are matched. The matched rows become
the context, one compact line each, with the table file and the key as their source (C33).
When no key is found and the tool has `clarify`, it asks (C24); the answer is then searched for
the key. `rows_for(key)` is the tool's direct-call function (C26), also reachable from prompt
templates as `lookup(tool, key)`. With `key: [a, b]` a row is found by any of its key columns and
named by the first. Keys are looked up through the table's index (runner/tables/index.py), stored
on disk once per table version (runner/tables/store.py), never by a pass over the rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from runner.config.model import LookupOptions, ToolConfig
from runner.documents.table_files import Row, TableError, cell_text
from runner.engine.protocols import ToolEnv
from runner.engine.results import ToolResult
from runner.llm.types import Purpose
from runner.sources import Source
from runner.tables.index import KeyMatcher
from runner.tables.lookup_tables import table_path
from runner.tables.store import table_keys
from runner.tools.base import (
    BuiltinTool,
    Call,
    ToolBuildError,
    ToolRunError,
    clarifying_question,
    finish,
    instantiate,
    is_missing,
    may_ask,
    place,
    template_source,
    trace_warning,
    with_answer,
)

if TYPE_CHECKING:
    from runner.tools.services import ToolServices


class LookupTool(BuiltinTool):
    """Table rows matched by key."""

    def __init__(self, config: ToolConfig, services: ToolServices) -> None:
        super().__init__(config, services)
        assert isinstance(config.options, LookupOptions)
        self.options = config.options
        self.table = table_path(services.pipeline, self.options.table)
        try:  # opened (or built) now, not on the first question
            columns = table_keys(services.pipeline, self.options).table_columns
        except TableError as exc:
            raise ToolBuildError(f"{place(config)}: {exc}") from None
        missing = [key for key in self.options.matched_columns if columns and key not in columns]
        if missing:
            raise ToolBuildError(
                f"{place(config)}: its key column {missing[0]!r} is not a column of "
                f"{self.table.name} (columns: {', '.join(columns)}); fix `key:`"
            )
        clarify = self.options.clarify
        self.clarify_source = (
            template_source(config, clarify.question, "clarify question") if clarify else None
        )

    # --- C26: the direct-call function ------------------------------------------------------

    def rows_for(self, key: str) -> list[Row]:
        """The rows whose key column (any of them) equals `key` (case-insensitive), as fresh
        dicts."""
        return self._index().rows_for(key)

    def keys(self) -> list[str]:
        """Every key value of the table, in table order, without duplicates."""
        return list(self._index().keys)

    # --- orchestrated runs -----------------------------------------------------------------

    async def run(self, call: Call) -> ToolResult:
        keys = await self._keys_in(call)
        if not keys and self.clarify_source is not None and may_ask(call, self.services):
            missing = [self.options.parameter or self.options.key]
            return clarifying_question(self.config, self.clarify_source, call, {}, missing)
        rows = self._index().rows_for(*keys)  # a row named twice ("bookworm", "Debian 12"): once
        context = "\n".join(self._render_row(row) for row in rows)
        return finish(self.config, call.env, context, [self.source_of(row) for row in rows])

    def source_of(self, row: Row) -> Source:
        """Where a row came from (C33): the table file, and the row's key as the heading."""
        return Source(document=self.table.name, heading=self._key_of(row))

    async def _keys_in(self, call: Call) -> list[str]:
        if call.clarification is not None and call.clarification.answer:
            # C24: the user's answer is where the missing key should now be
            found = self.find_keys(call.clarification.answer)
            if found:
                return found
        text = with_answer(call.directive, call.clarification)
        if self.options.match == "params":
            return await self._extracted_keys(call, text)
        return self.find_keys(text)

    async def _extracted_keys(self, call: Call, text: str) -> list[str]:
        parameter = self.options.parameter or self.options.key
        schema = {
            "type": "object",
            "properties": {
                parameter: {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": f"values of the {self.options.key!r} column named in the text",
                }
            },
        }
        params = await call.env.prompts.extract(
            Purpose.EXTRACT,
            text,
            schema,
            tool=self.name,
            instruction=self.config.description or self.config.instruction,
            on_dropped=trace_warning(call.env),
        )
        value = params.get(parameter)
        values = [value] if isinstance(value, str) else list(value or [])
        index = self._index()
        spelled = (index.spelling(str(v)) for v in values if not is_missing(v))
        return list(dict.fromkeys(key for key in spelled if key is not None))

    def find_keys(self, text: str) -> list[str]:
        """Key values that occur in `text` as whole tokens, case-insensitive, longest first;
        a token already claimed by a longer key is not matched again. In order of appearance."""
        return self._index().find(text)

    def _render_row(self, row: Row) -> str:
        columns = self.options.columns or tuple(row)
        cells = [f"{column}: {cell_text(row.get(column))}" for column in columns]
        return "; ".join(cells)

    def _key_of(self, row: Row) -> str:
        return cell_text(row.get(self.options.key))

    def _index(self) -> KeyMatcher:
        try:
            return table_keys(self.services.pipeline, self.options)
        except TableError as exc:  # the file changed or went away after the tool was built
            raise ToolRunError(f"{place(self.config)}: {exc}") from None


def lookup_function(
    env: ToolEnv, drawn_on: list[Source] | None = None
) -> Callable[[str, str], list[Row]]:
    """`lookup(tool, key)` for templates: a direct call (C26) of a lookup tool's `rows_for`.
    The sources of the rows it returns are added to `drawn_on`: the calling tool's result drew
    on them (C33)."""

    def lookup(tool: str, key: str) -> list[Row]:
        target: Any = env.tool(tool)
        rows_for = getattr(target, "rows_for", None)
        if not callable(rows_for):
            raise ToolRunError(
                f"lookup({tool!r}, …) in a template: tool {tool!r} has no rows_for(); only "
                "`lookup` tools can be called this way"
            )
        rows = list(rows_for(str(key)))
        if drawn_on is not None:
            drawn_on.extend(target.source_of(row) for row in rows)
        return rows

    return lookup


def build(config: ToolConfig, services: ToolServices) -> LookupTool:
    return instantiate(LookupTool, config, services)
