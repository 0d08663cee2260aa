"""`--format mermaid`: a flowchart Mermaid accepts, with every label quoted and escaped.

`check_syntax` holds our flowchart to the subset of Mermaid it uses: every line a node
declaration or an edge, ids declared before any edge uses them, labels in double quotes with
no raw quote, `<`, `>`, `|` or backtick inside. (The example charts were also parsed with
Mermaid 11's own parser when this was written.)
"""

from __future__ import annotations

import re

from runner.explain.mermaid import flowchart, label

from .conftest import Write, example

QUOTED = r'"[^"<>|`]*"'
SHAPES = (r"\(\[{}\]\)", r"\[\[{}\]\]", r"\[{}\]", r"\({}\)", r"\{{{}\}}")
NODE = re.compile(rf"^    (?P<id>\w+)({'|'.join(shape.format(QUOTED) for shape in SHAPES)})$")
EDGE = re.compile(rf"^    (?P<source>\w+) (?P<arrow>-->|-\.->)(\|{QUOTED}\|)? (?P<target>\w+)$")


def check_syntax(chart: str) -> list[tuple[str, str, str]]:
    """The chart's edges as (source, arrow, target); fails on any line outside the subset."""
    lines = chart.splitlines()
    assert lines[0] == "flowchart TD"
    declared: set[str] = set()
    edges = []
    for line in lines[1:]:
        node = NODE.match(line)
        if node is not None:
            assert node["id"] not in declared, f"declared twice: {line}"
            assert node["id"] != "end"
            declared.add(node["id"])
            continue
        edge = EDGE.match(line)
        assert edge is not None, f"not a node or an edge: {line!r}"
        assert {edge["source"], edge["target"]} <= declared, f"undeclared id: {line}"
        edges.append((edge["source"], edge["arrow"], edge["target"]))
    return edges


def test_the_example_pipelines_draw_as_valid_flowcharts() -> None:
    for name in ("support", "hr"):
        assert check_syntax(flowchart(example(name)))


def test_c13_c16_coordinators_lead_to_templates_and_their_forced_tools() -> None:
    edges = check_syntax(flowchart(example("support")))
    coordinator = "n_coordinator_compare_products"
    assert ("question", "-->", coordinator) in edges
    assert (coordinator, "-->", "n_subtask_compare_products_1") in edges
    # the conditional handbook template hangs on a dashed edge
    assert (coordinator, "-.->", "n_subtask_compare_products_2") in edges
    assert ("n_subtask_compare_products_1", "-->", "n_tool_product_lookup") in edges
    assert ("n_subtask_compare_products_2", "-->", "n_tool_handbook_search") in edges


def test_c27_c29_the_deep_fallback_is_a_branch_through_the_gatekeeper() -> None:
    chart = flowchart(example("support"))
    edges = check_syntax(chart)
    assert ("question", "-->", "gatekeeper") in edges
    assert ("gatekeeper", "-->", "answer") in edges
    assert ("gatekeeper", "-.->", "n_coordinator_deep_search") in edges
    assert ("n_coordinator_deep_search", "-->", "n_subtask_deep_search_n") in edges
    assert ("n_coordinator_deep_search", "-.->", "n_subtask_deep_search_s") in edges
    assert ("n_subtask_deep_search_n", "-->", "n_tool_handbook_neighbors") in edges
    assert '"no fallback: comparison, smalltalk"' in chart


def test_labels_escape_what_mermaid_would_read_as_syntax() -> None:
    assert label('say "hi" <b> | `x` #1') == '"say #34;hi#34; #60;b#62; #124; #96;x#96; #35;1"'
    assert label("two\n  lines") == '"two lines"'


def test_awkward_names_and_prompts_still_make_a_valid_chart(write: Write) -> None:
    pipeline = write(
        """
        version: 1
        domain: t
        tools:
          - name: end
            kind: prompt
            prompt: x
            decompose:
              relevant_if: "true"
              subtasks:
                - prompt: 'Is "{{ task }}" <b>bold</b> | a #tag? `code` [x] {y} (z)'
                  required_tools: [o_tool]
          - {name: o_tool, kind: prompt, activation: coordinator_only, prompt: y}
        """
    )
    chart = flowchart(pipeline)
    edges = check_syntax(chart)
    assert ("n_subtask_end_1", "-->", "n_tool_o_tool") in edges
    assert "#34;{{ task }}#34; #60;b#62;bold#60;/b#62; #124; a #35;tag? #96;code#96;" in chart
