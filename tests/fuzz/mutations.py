"""Hostile variations of real files, for the fuzz tests: the project's own pipeline and
test-case files, changed as a careless editor or an attacker would change them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
PIPELINES = [
    ROOT / "pipelines" / "minimal.yaml",
    *sorted((ROOT / "pipelines").glob("*/*.yaml")),
    *sorted((ROOT / "tests" / "fixtures" / "valid").glob("*.yaml")),
]
CASE_FILES = sorted((ROOT / "pipelines").glob("*/tests/*.yaml"))

# Text that breaks YAML, or that YAML reads into something a pipeline does not expect.
FRAGMENTS = [
    ":", ": ", "- ", "{", "}", "[", "]", ",", "'", '"', "#", "\n", "  ", "\t", "---\n", "...\n",
    "? ", "|", ">", "&a ", "*a", "<<: *a\n", "%YAML 1.1\n", "!!int ", '!!int ""', "!!bool maybe",
    "!!float ", "!!timestamp x", "!!binary ", "!!set ", "!!omap ", "!!python/object:os.system ",
    "!custom ", "\x00", "\x07", "\x1b", "\ufeff", "\x85", "\u2028", "é", "\r", "\r\n",
    "[" * 300 + "]" * 300, "{a: " * 150 + "}" * 150, "x" * 20_000, "- " * 200 + "a",
]  # fmt: skip

# Values a key may be given instead of the one it expects.
SPECIAL_STRINGS = [
    "", " ", "x" * 300 + ".j2", "x" * 300, "../outside.yaml", "/etc/passwd", "a\x00b", "~",
    "{{ 'a' * 10**9 }}", "{{ ", "{% for i in range(100000) %}{% for j in range(100000) %}"
    "{% endfor %}{% endfor %}", "params.x | length >= 2", "(", "[a-", "*", "😀", "KD-460",
    "x" * 10_000,
]  # fmt: skip
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(SPECIAL_STRINGS),
    st.text(max_size=20),
    st.dates(),
)
KEYS = st.one_of(st.text(max_size=8), st.sampled_from(["kind", "name", "properties", "type"]))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(st.text(max_size=8), st.sampled_from(["kind", "name"])), inner, max_size=4
        ),
    ),
    max_leaves=8,
)


@st.composite
def mutated_text(draw: st.DrawFn, text: str) -> str:
    """`text` with a few fragments inserted, lines cut, dropped or repeated."""
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "insert", "cut", "drop_line", "repeat_line"]))
        if action == "insert":
            text = text[:at] + draw(st.sampled_from(FRAGMENTS)) + text[at:]
        elif action == "cut":
            text = text[:at] + text[at + draw(st.integers(1, 40)) :]
        else:
            lines = text.splitlines(keepends=True) or [""]
            index = draw(st.integers(0, len(lines) - 1))
            lines[index : index + 1] = [] if action == "drop_line" else [lines[index]] * 2
            text = "".join(lines)
    return text


@st.composite
def mutated_data(draw: st.DrawFn, data: Any) -> Any:
    """`data` (loaded YAML) with one value somewhere replaced, a key removed or one added."""
    holder, key = None, None
    node = data
    for _ in range(draw(st.integers(0, 6))):
        if isinstance(node, dict) and node:
            holder, key = node, draw(st.sampled_from(sorted(node, key=str)))
        elif isinstance(node, list) and node:
            holder, key = node, draw(st.integers(0, len(node) - 1))
        else:
            break
        node = holder[key]
    if holder is None:
        return draw(VALUES)
    action = draw(st.sampled_from(["replace", "replace", "remove", "add"]))
    if action == "remove" and isinstance(holder, dict):
        del holder[key]
    elif action == "add" and isinstance(holder, dict):
        holder[draw(st.sampled_from(["extra", "kind", "template", "properties", "key"]))] = draw(
            VALUES
        )
    else:
        holder[key] = draw(VALUES)
    return data


@st.composite
def hostile_file(draw: st.DrawFn, sources: list[Path]) -> tuple[Path, str]:
    """One of `sources` and its text, changed in the text itself or in the data it holds."""
    source = draw(st.sampled_from(sources))
    text = source.read_text(encoding="utf-8")
    if draw(st.booleans()):
        return source, draw(mutated_text(text))
    data = draw(mutated_data(yaml.safe_load(text)))
    return source, yaml.safe_dump(data, allow_unicode=True, sort_keys=False)


def copy_of(source: Path, copies: Path) -> Path:
    """Where `source` sits in the copy of the project's example files (see conftest.py)."""
    return copies / source.relative_to(ROOT)
