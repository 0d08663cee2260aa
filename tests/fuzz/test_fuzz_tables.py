"""Hostile lookup tables: validation reports a broken table at the pipeline's `table:` key; a
table that passes gives a lookup tool that matches, lists and answers without failing; nothing
ever raises anything but the documented errors."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runner.config import validate_file
from runner.llm.known_values import known_values
from runner.tools import ToolServices, build_tools
from runner.tools.base import ToolBuildError

from .mutations import FRAGMENTS, SPECIAL_STRINGS, VALUES

CELLS = st.one_of(st.text(max_size=12), st.sampled_from(SPECIAL_STRINGS[:18]))


@st.composite
def csv_tables(draw: st.DrawFn) -> bytes:
    header = draw(
        st.lists(st.sampled_from(["model", "name", "", "model", "x,y", '"q"']), max_size=4)
    )
    rows = draw(st.lists(st.lists(CELLS, max_size=5), max_size=8))
    text = "\n".join([",".join(header), *(",".join(row) for row in rows)])
    raw = text.encode("utf-8", errors="surrogatepass")
    return draw(
        st.sampled_from([raw, b"\xef\xbb\xbf" + raw, raw + b"\xff\xfe", raw.replace(b",", b"\x00")])
    )


@st.composite
def yaml_tables(draw: st.DrawFn) -> bytes:
    rows = draw(
        st.lists(st.dictionaries(st.sampled_from(["model", "name", "1"]), VALUES), max_size=5)
    )
    text = json.dumps(rows, default=str)  # JSON is YAML
    if draw(st.booleans()):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(FRAGMENTS)) + text[at:]
    return text.encode("utf-8", errors="surrogatepass")


@st.composite
def json_tables(draw: st.DrawFn) -> bytes:
    data = draw(
        st.one_of(VALUES, st.just([[] for _ in range(3)]), st.just("[" * 5000 + "]" * 5000))
    )
    text = data if isinstance(data, str) else json.dumps(data, default=str)
    return text.encode("utf-8", errors="surrogatepass")


TABLES = st.one_of(
    st.tuples(st.just("csv"), csv_tables()),
    st.tuples(st.just("yaml"), yaml_tables()),
    st.tuples(st.just("json"), json_tables()),
)
QUESTIONS = st.one_of(st.text(max_size=40), st.sampled_from(["price of KD-460?", "x" * 5000]))


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(TABLES, st.sampled_from(["model", "name", "missing"]), QUESTIONS)
def test_a_hostile_table_is_reported_or_looked_up(
    tmp_path: Path, table, key: str, question: str
) -> None:  # type: ignore[no-untyped-def]
    suffix, content = table
    (tmp_path / f"t.{suffix}").write_bytes(content)
    path = tmp_path / "p.yaml"
    path.write_text(
        f"domain: shop\ntools:\n  - name: models\n    kind: lookup\n    table: t.{suffix}\n"
        f"    key: {key}\n",
        encoding="utf-8",
    )
    report = validate_file(path)
    for diagnostic in report.diagnostics:
        assert not diagnostic.code.startswith("X"), diagnostic.headline()
        assert diagnostic.line >= 1 and diagnostic.col >= 1, diagnostic.headline()
    if report.pipeline is None:
        return
    try:
        tool = build_tools(report.pipeline, ToolServices(report.pipeline))["models"]
    except ToolBuildError as error:
        assert "t." in str(error)  # it names the table
        return
    tool.find_keys(question)
    tool.rows_for(question)
    known_values(report.pipeline, question)
