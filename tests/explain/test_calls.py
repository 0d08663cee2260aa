"""The worst-case LLM calls per question, counted from the pipeline file by the engine's rules."""

from __future__ import annotations

from collections.abc import Sequence

from runner.config.model import Pipeline
from runner.explain.calls import PathBound, PathSpec, count_path, worst_cases
from runner.retrieval.navigation import paginate_all
from runner.retrieval.pages import corpus_files, corpus_folder, read_document

from .conftest import Write, example

SPLITTER = """
version: 1
domain: t
limits: {max_subtasks: 4}
tools:
  - name: split
    kind: prompt
    instruction: Does the user ask about several things?
    prompt: "Compare: {{ task }}"
    decompose:
      extract:
        schema: {type: object, properties: {things: {type: array, items: {type: string}}}}
      subtasks:
        - for_each: params.things
          prompt: "About {{ item }}"
          required_tools: [worker]
  - name: worker
    kind: prompt
    activation: coordinator_only
    prompt: "Facts: {{ task }}"
"""

DEEP = """
version: 1
domain: t
corpora:
  docs: {{path: corpus}}
retrieval_tool: rag
deep_fallback:
  coordinator: deep
  gatekeeper: {{mode: {gatekeeper}}}
tools:
  - name: rag
    kind: retrieve
    corpus: docs
    top_k: 3
  - name: search
    kind: search
    corpus: docs
    activation: coordinator_only
    top_k: {top_k}
    {limit}
  - name: around
    kind: neighbor_search
    corpus: docs
    activation: coordinator_only
    window: 2
  - name: deep
    kind: deep_search
    search_tool: search
    {neighbor}
    max_missing: 3
"""

THREE_PAGES = {
    "corpus/a.md": "# A\n\nalpha\n",
    "corpus/b.md": "# B\n\nbeta\n",
    "corpus/c.md": "# C\n\ngamma\n",
}


def deep_pipeline(
    write: Write,
    *,
    gatekeeper: str = "llm",
    top_k: int = 4,
    limit: int | None = None,
    neighbor: bool = True,
) -> Pipeline:
    text = DEEP.format(
        gatekeeper=gatekeeper,
        top_k=top_k,
        limit=f"max_brute_force_page_count: {limit}" if limit is not None else "",
        neighbor="neighbor_search_tool: around" if neighbor else "",
    )
    return write(text, THREE_PAGES)


def path(
    pipeline: Pipeline, prompt_type: str, decomposes: Sequence[str] = (), deep: bool = False
) -> PathBound:
    return next(
        bound
        for bound in worst_cases(pipeline)
        if bound.spec.prompt_type == prompt_type
        and bound.decomposes == tuple(decomposes)
        and bound.spec.deep_fallback is deep
    )


def calls(bound: PathBound) -> dict[str, int]:
    return dict(bound.count.calls)


# --- classification and activation -----------------------------------------------------------


def test_prompt_type_costs_a_call_only_when_the_llm_chooses_between_types(write: Write) -> None:
    tool = "tools: [{name: a, kind: prompt, activation: always, prompt: x}]"
    one_type = write(f"version: 1\ndomain: t\n{tool}\n")
    by_rule = write(
        "version: 1\ndomain: t\nprompt_types: {default: q, classify: rule, types: "
        f"{{q: Q, chat: {{description: C, keywords: [hello]}}}}}}\n{tool}\n"
    )
    by_llm = write(
        f"version: 1\ndomain: t\nprompt_types: {{default: q, classify: llm, types: {{q: Q, "
        f"chat: C}}}}\n{tool}\n"
    )
    assert path(one_type, "question").count.calls.get("prompt_type", 0) == 0
    assert path(by_rule, "q").count.calls.get("prompt_type", 0) == 0
    assert path(by_llm, "q").count.calls["prompt_type"] == 1


def test_suitability_is_one_call_for_all_the_candidates_left_to_the_llm(write: Write) -> None:
    pipeline = write(
        """
        version: 1
        domain: t
        tools:
          - {name: one, kind: prompt, instruction: One?, prompt: x}
          - {name: two, kind: prompt, instruction: Two?, prompt: x}
          - {name: ruled, kind: prompt, activation: {keywords: [price]}, prompt: x}
          - {name: every, kind: prompt, activation: always, prompt: x}
        """
    )
    assert calls(path(pipeline, "question")) == {"suitability": 1, "tool": 4, "answer": 1}


def test_rules_and_always_alone_need_no_suitability_call(write: Write) -> None:
    pipeline = write(
        """
        version: 1
        domain: t
        tools:
          - {name: ruled, kind: prompt, activation: {pattern: "KW-\\\\d+"}, prompt: x}
          - {name: every, kind: prompt, activation: always, prompt: x}
        """
    )
    assert "suitability" not in path(pipeline, "question").count.calls


def test_c13_a_forced_subtask_makes_no_suitability_call(write: Write) -> None:
    pipeline = write(SPLITTER)
    decomposed = path(pipeline, "question", ["split"])
    # the root's one suitability call; none on the 4 forced subtasks
    assert calls(decomposed) == {"suitability": 1, "decompose": 1, "tool": 5, "answer": 1}
    assert decomposed.count.subtasks == {"split": 4}


def test_a_subtask_without_required_tools_has_its_own_suitability_call(write: Write) -> None:
    pipeline = write(
        """
        version: 1
        domain: t
        limits: {max_subtasks: 4}
        tools:
          - name: split
            kind: prompt
            instruction: Does the user ask about several things?
            prompt: "Compare: {{ task }}"
            decompose:
              extract:
                schema: {type: object, properties: {things: {type: array, items: {type: string}}}}
              subtasks:
                - {for_each: params.things, prompt: "About {{ item }}"}
          - {name: worker, kind: prompt, instruction: Facts?, prompt: "Facts: {{ task }}"}
        """
    )
    decomposed = path(pipeline, "question", ["split"])
    # the root and 4 subtasks: one suitability call each; split and worker run on all five
    assert calls(decomposed) == {"suitability": 5, "decompose": 1, "tool": 10, "answer": 1}


def test_c11_c12_a_coordinator_decomposes_once_a_question_not_once_a_task(write: Write) -> None:
    pipeline = write(SPLITTER)
    assert path(pipeline, "question").count.calls["decompose"] == 1
    assert path(pipeline, "question", ["split"]).count.calls["decompose"] == 1


def test_a_coordinator_outside_its_prompt_types_neither_decomposes_nor_makes_a_path(
    write: Write,
) -> None:
    pipeline = write(
        SPLITTER.replace(
            "limits:", "prompt_types: {default: q, types: {q: Q, c: C}}\nlimits:"
        ).replace("    instruction: Does", "    prompt_types: [c]\n    instruction: Does")
    )
    on_q = [bound.decomposes for bound in worst_cases(pipeline) if bound.spec.prompt_type == "q"]
    assert on_q == [()]
    assert "decompose" not in path(pipeline, "q").count.calls
    assert path(pipeline, "c", ["split"]).count.calls["decompose"] == 1


def test_c4_for_each_subtasks_are_counted_up_to_max_subtasks(write: Write) -> None:
    pipeline = write(SPLITTER.replace("max_subtasks: 4", "max_subtasks: 7"))
    decomposed = path(pipeline, "question", ["split"])
    assert decomposed.count.subtasks == {"split": 7}
    assert decomposed.spec.decomposes == {"split": {"params.things": 7}}
    assert decomposed.count.calls["tool"] == 7 + 1


def test_c4_templates_over_one_list_share_its_length_when_the_limit_cuts_them(
    write: Write,
) -> None:
    # two templates over the same list: n items make n cheap + n dear subtasks; past
    # max_subtasks the dear ones are cut first, so the worst length fills both halves
    text = (
        SPLITTER.replace(
            "          required_tools: [worker]\n",
            "          required_tools: [worker]\n"
            "        - for_each: params.things\n"
            '          prompt: "Look up {{ item }}"\n'
            "          required_tools: [cheap]\n",
        )
        + "  - {name: cheap, kind: lookup, activation: coordinator_only, table: t.csv, key: k}\n"
    )
    pipeline = write(text, {"t.csv": "k,v\nx,1\n"})
    decomposed = path(pipeline, "question", ["split"])
    assert decomposed.spec.decomposes == {"split": {"params.things": 4}}
    assert decomposed.count.calls["tool"] == 4 + 1


def test_c20e_a_coordinator_runs_on_its_task_once_its_subtasks_close(write: Write) -> None:
    pipeline = write(
        """
        version: 1
        domain: t
        limits: {max_subtasks: 4}
        tools:
          - name: split
            kind: prompt
            activation: coordinator_only
            consumes_context: true
            prompt: "Compare: {% for p in context %}{{ p.text }}{% endfor %}"
            decompose:
              extract:
                schema: {type: object, properties: {things: {type: array, items: {type: string}}}}
              subtasks:
                - {for_each: params.things, prompt: "About {{ item }}", required_tools: [worker]}
              activate_after_subtasks: true
          - {name: worker, kind: prompt, activation: coordinator_only, prompt: "Facts"}
        """
    )
    # coordinator_only: never a candidate, so it runs only after the subtasks it made
    assert "tool" not in path(pipeline, "question").count.calls
    assert path(pipeline, "question", ["split"]).count.calls["tool"] == 4 + 1


def test_extraction_is_a_call_per_run_of_a_tool_with_parameters(write: Write) -> None:
    pipeline = write(
        """
        version: 1
        domain: t
        tools:
          - name: price
            kind: prompt
            activation: always
            parameters: {schema: {type: object, properties: {model: {type: string}}}}
            prompt: "Price of {{ params.model }}"
          - {name: rows, kind: lookup, activation: always, table: t.csv, key: k, match: params,
             parameter: k}
          - {name: plain, kind: lookup, activation: always, table: t.csv, key: k}
        """,
        {"t.csv": "k,v\nx,1\n"},
    )
    assert calls(path(pipeline, "question")) == {"extract": 2, "tool": 1, "answer": 1}


def test_an_mcp_tool_counts_one_extraction_its_servers_schema_may_spare(write: Write) -> None:
    pipeline = write(
        """
        version: 1
        domain: t
        mcp_servers:
          weather: {command: python, args: [weather.py]}
        tools:
          - {name: forecast, kind: mcp, server: weather, activation: always}
        """
    )
    assert calls(path(pipeline, "question")) == {"extract": 1, "answer": 1}


# --- the deep fallback ---------------------------------------------------------------------------


def test_c27_the_gatekeeper_is_a_call_in_llm_mode_and_none_by_rule(write: Write) -> None:
    assert path(deep_pipeline(write), "question").count.calls["gatekeeper"] == 1
    by_rule = deep_pipeline(write, gatekeeper="rule")
    assert "gatekeeper" not in path(by_rule, "question").count.calls


def test_c28_a_prompt_type_without_a_fallback_has_no_deep_path(write: Write) -> None:
    text = DEEP.replace("  coordinator: deep\n", "  coordinator: deep\n  prompt_types: [q]\n")
    text = "prompt_types: {{default: q, types: {{q: Q, chat: C}}}}\n" + text
    pipeline = write(text.format(gatekeeper="llm", top_k=4, limit="", neighbor=""), THREE_PAGES)
    assert [(b.spec.prompt_type, b.spec.deep_fallback) for b in worst_cases(pipeline)] == [
        ("q", False),
        ("q", True),
        ("chat", False),
    ]
    assert "gatekeeper" not in path(pipeline, "chat").count.calls


def test_c29_each_missing_piece_reads_its_neighbours_and_then_searches(write: Write) -> None:
    deep = path(deep_pipeline(write, top_k=4, limit=40), "question", deep=True)
    # 3 pieces x (.n: 2 x window 2 x rag's 3 pages = 12, .s: top_k 4) = 48
    assert calls(deep) == {
        "gatekeeper": 1,
        "missing_info": 1,
        "read_page": 48,
        "compose": 1,
        "answer": 1,
    }
    assert deep.count.subtasks == {"deep": 6}


def test_c29_without_a_neighbour_tool_each_piece_is_one_search(write: Write) -> None:
    deep = path(deep_pipeline(write, top_k=2, limit=40, neighbor=False), "question", deep=True)
    assert deep.count.calls["read_page"] == 3 * 2
    assert deep.count.subtasks == {"deep": 3}


def test_c31_a_limit_below_top_k_caps_the_pages_read(write: Write) -> None:
    deep = path(deep_pipeline(write, top_k=5, limit=2, neighbor=False), "question", deep=True)
    assert deep.count.calls["read_page"] == 3 * 2
    assert deep.count.scan_reads == 0


def test_c31_without_a_limit_a_search_may_read_every_page_of_its_corpus(write: Write) -> None:
    deep = path(deep_pipeline(write, top_k=1, neighbor=False), "question", deep=True)
    assert deep.count.calls["read_page"] == 3 * 3  # 3 pieces, each the whole 3-page corpus
    assert deep.count.scan_reads == 3 * 2
    assert deep.count.full_scans == ("search",)


def test_c4_deep_search_subtasks_share_max_subtasks_with_the_others(write: Write) -> None:
    text = DEEP.format(
        gatekeeper="llm",
        top_k=4,
        limit="max_brute_force_page_count: 9",
        neighbor="neighbor_search_tool: around",
    )
    pipeline = write(text.replace("tools:", "limits: {max_subtasks: 3}\ntools:"), THREE_PAGES)
    deep = path(pipeline, "question", deep=True)
    # 3 subtasks: the .n and .s of the first piece, the .n of the second
    assert deep.count.subtasks == {"deep": 3}
    assert deep.count.calls["read_page"] == 12 + 4 + 12


# --- what the bound leaves out, and how a round may end early ---------------------------------


def test_c25_a_terminal_tool_is_an_early_end_not_a_saving_in_the_bound(write: Write) -> None:
    pipeline = write(
        """
        version: 1
        domain: t
        tools:
          - {name: first, kind: prompt, instruction: First?, prompt: x}
          - {name: last, kind: prompt, activation: always, output: answer, priority: 200, prompt: x}
        """
    )
    bound = path(pipeline, "question")
    assert bound.total == 4  # suitability, two tools, the answer
    assert [(e.tool, e.outcome, e.calls) for e in bound.count.exits] == [("last", "answer", 3)]


def test_c24_a_tool_that_may_ask_is_an_early_end(write: Write) -> None:
    pipeline = write(
        """
        version: 1
        domain: t
        tools:
          - name: price
            kind: prompt
            activation: always
            parameters:
              schema: {type: object, properties: {model: {type: string}}, required: [model]}
            clarify: {question: Which model?}
            prompt: "Price of {{ params.model }}"
        """
    )
    exits = path(pipeline, "question").count.exits
    assert [(e.tool, e.outcome, e.calls) for e in exits] == [("price", "question", 1)]


def test_a_python_tool_is_reported_as_not_counted(write: Write) -> None:
    pipeline = write(
        """
        version: 1
        domain: t
        tools:
          - {name: custom, kind: python, class: "my_tools:Custom", activation: always}
        """
    )
    bound = path(pipeline, "question")
    assert bound.total == 1
    assert any("custom" in item and "python" in item for item in bound.count.uncounted)


def test_count_path_follows_the_given_lengths(write: Write) -> None:
    pipeline = write(SPLITTER)
    spec = PathSpec("question", {"split": {"params.things": 2}})
    assert dict(count_path(pipeline, spec).calls) == {
        "suitability": 1,
        "decompose": 1,
        "tool": 3,
        "answer": 1,
    }


# --- the example pipelines ------------------------------------------------------------------------


def test_the_support_example_costs_at_most_33_calls_on_its_deep_fallback_path() -> None:
    bounds = worst_cases(example("support"))
    summary = [(b.spec.prompt_type, b.decomposes, b.spec.deep_fallback, b.total) for b in bounds]
    assert summary == [
        ("question", (), False, 7),
        ("question", (), True, 33),
        ("comparison", (), False, 3),
        ("comparison", ("compare_products",), False, 19),
        ("smalltalk", (), False, 2),
    ]
    deep = bounds[1]
    # 2 pieces x (8 neighbour pages around handbook_rag's 4 + handbook_search's top 4)
    assert deep.count.calls["read_page"] == 24
    assert [(e.tool, e.outcome) for e in deep.count.exits] == [
        ("safety_alert", "answer"),
        ("warranty_check", "question"),
    ]


def test_the_hr_example_reads_its_whole_corpus_per_missing_piece_in_the_worst_case() -> None:
    pipeline = example("hr")
    corpus = pipeline.corpora["policies"]
    folder = corpus_folder(corpus, pipeline.folder)
    documents = [read_document(folder, p) for p in corpus_files(folder, corpus.include)]
    pages = len(paginate_all(documents, corpus.max_words))
    totals = [(b.spec.prompt_type, b.spec.deep_fallback, b.total) for b in worst_cases(pipeline)]
    # speak_up, missing_info, 2 full scans, compose, answer
    assert totals == [("policy", False, 2), ("policy", True, 4 + 2 * pages), ("personal", False, 4)]
