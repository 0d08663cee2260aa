"""C30: the search tools of a deep search coordinator never activate on the normal branch.
Left without `activation` they are coordinator_only; any other activation written for them is
a validation error (R118) whose hint gives the fix."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from runner.app import Runtime
from runner.config import load_pipeline, validate_file
from runner.config.model import ActivationMode
from runner.engine.state import SessionState

PIPELINE = """\
domain: shop
llm:
  provider: scripted
  script:
    - {purpose: missing_info, reply: {missing: []}}
    - {purpose: suitability, reply: {faq: true, deep: false}}
    - {purpose: tool, tool: faq, reply: "It turns at 1400 rpm."}
    - {purpose: answer, reply: "1400 rpm."}
corpora:
  manual: {path: docs}
retrieval_tool: manual_rag
tools:
  - name: faq
    kind: prompt
    instruction: Is it a question about an appliance?
    prompt: "Answer {{ task }}"
  - name: manual_rag
    kind: retrieve
    corpus: manual
  - name: manual_search
    kind: search
    corpus: manual
  - name: manual_neighbors
    kind: neighbor_search
    corpus: manual
  - name: deep
    kind: deep_search
    activation: suitability  # an ordinary tool here, not the fallback (else R137)
    search_tool: manual_search
    neighbor_search_tool: shop.manual_neighbors
"""
DOCS = {"docs/drum.md": "# Drum\nThe drum of the KD-450 turns at 1400 rpm.\n"}


def test_c30_search_tools_left_without_activation_are_coordinator_only(
    write_pipeline: Callable[..., Path],
) -> None:
    pipeline = load_pipeline(write_pipeline(PIPELINE, DOCS))
    modes = {tool.name: tool.activation.mode for tool in pipeline.tools}
    assert modes["manual_search"] == ActivationMode.COORDINATOR_ONLY
    assert modes["manual_neighbors"] == ActivationMode.COORDINATOR_ONLY  # named with its prefix
    assert modes["faq"] == ActivationMode.SUITABILITY


def test_c30_search_tools_are_never_candidates_on_the_normal_branch(
    write_pipeline: Callable[..., Path],
) -> None:
    with Runtime.open(write_pipeline(PIPELINE, DOCS)) as runtime:
        state = SessionState.new("s", runtime.pipeline)
        result = asyncio.run(runtime.orchestrator().run_round(state, "how fast is the drum?"))
    [activation] = result.trace.of("activation")
    assert activation["candidates"] == ["faq", "deep"]
    ran = [event["tool"] for event in result.trace.of("tool.run")]
    assert "manual_search" not in ran and "manual_neighbors" not in ran


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("always", "`activation: always`"),
        ("suitability", "`activation: suitability`"),
        ("{keywords: [drum]}", "an activation rule (keywords / pattern)"),
    ],
)
def test_c30_another_activation_written_for_a_search_tool_is_an_error_with_the_fix(
    write_pipeline: Callable[..., Path], written: str, shown: str
) -> None:
    text = PIPELINE.replace("    kind: search\n", f"    kind: search\n    activation: {written}\n")
    report = validate_file(write_pipeline(text, DOCS))
    [error] = report.errors
    assert error.code == "R118"
    assert (error.line, error.col) == (
        text.splitlines().index(f"    activation: {written}") + 1,
        17,
    )
    assert f"{shown} would let it run on the normal branch" in error.message
    assert "remove `activation` from `manual_search`" in error.hint
    assert "activation: coordinator_only" in error.hint


def test_c30_coordinator_only_written_out_is_accepted(
    write_pipeline: Callable[..., Path],
) -> None:
    text = PIPELINE.replace(
        "    kind: neighbor_search\n",
        "    kind: neighbor_search\n    activation: coordinator_only\n",
    )
    assert validate_file(write_pipeline(text, DOCS)).diagnostics == ()
