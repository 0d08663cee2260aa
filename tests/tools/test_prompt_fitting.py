"""A prompt tool's context fits the model's context window (issue 12): the buffer's results it
is given are cut by relevance, as the answer's passages are, never past the window, the cut on
the call's record; what its result cites is what its prompt was given."""

from __future__ import annotations

from pathlib import Path

from runner.config.model import (
    LLMConfig,
    LookupOptions,
    PromptOptions,
    ScriptRule,
    TemplateRef,
    ToolConfig,
    ToolKind,
)
from runner.engine.results import PromptAndContext
from runner.llm import build_client
from runner.llm.fitting import prompt_tokens
from runner.llm.prompts import Prompts
from runner.sources import Source
from runner.tools import ToolServices, build_tools

from .conftest import Harness, make_pipeline, run, task

QUESTION = "How do I descale the kettle?"
RELEVANT = Source("kettle.md", page=4)
# the manual's page on descaling, and six results of no use to the question
PRIOR = {
    "1:manual": (
        PromptAndContext(
            "p", "To descale the kettle, boil a descaling solution. " * 3, sources=(RELEVANT,)
        ),
    ),
    **{
        f"1:note{n}": (
            PromptAndContext(
                "p", f"The toaster warranty note number {n}. " * 12, sources=(Source(f"t{n}"),)
            ),
        )
        for n in range(6)
    },
}
CONTEXT_TEMPLATE = "Steps for {{ task }} from:\n{% for p in context %}- {{ p.text }}\n{% endfor %}"


def consumer(template: str = CONTEXT_TEMPLATE) -> ToolConfig:
    options = PromptOptions(template=TemplateRef(inline=template))
    return ToolConfig(name="howto", kind=ToolKind.PROMPT, options=options, consumes_context=True)


def harness_with_window(
    tmp_path: Path, window: int | None, *configs: ToolConfig
) -> tuple[Harness, list[str]]:
    """A harness of the tools (default: `consumer()`) talking to the real LLM layer, a
    scripted model with that window; the list gets every prompt the model was sent."""
    pipeline = make_pipeline(tmp_path, *(configs or (consumer(),)))
    rule = ScriptRule(reply="Boil the solution.", purpose="tool")
    llm = LLMConfig(provider="scripted", script=(rule,), context_window=window, max_tokens=50)
    client = build_client(llm, environ={})
    sent: list[str] = []
    complete = client.complete

    async def recording(request):  # type: ignore[no-untyped-def]
        sent.append(request.prompt)
        return await complete(request)

    client.complete = recording  # type: ignore[method-assign]
    tools = build_tools(pipeline, ToolServices(pipeline))
    return Harness(pipeline, tools, Prompts(client, pipeline)), sent  # type: ignore[arg-type]


def execute(h: Harness, prior: dict) -> object:
    the_task = task(QUESTION)
    return run(h.tools["howto"].execute_with_prior_context(QUESTION, prior, h.env(the_task)))


def test_a_consumers_context_that_fits_is_given_whole(tmp_path: Path) -> None:
    h, sent = harness_with_window(tmp_path, 8192)
    result = execute(h, PRIOR)
    assert sent[0].count("toaster warranty note") == 6 * 12
    assert len(result.sources) == 7  # type: ignore[attr-defined]
    assert h.prompts.client.calls[0].prompt_cut is None  # type: ignore[attr-defined]


def test_a_consumers_least_relevant_results_are_dropped_to_fit_the_window(tmp_path: Path) -> None:
    h, sent = harness_with_window(tmp_path, 400)
    execute(h, PRIOR)
    assert "boil a descaling solution" in sent[0]
    assert sent[0].count("toaster warranty note number") < 6 * 12
    assert prompt_tokens(sent[0]) <= 400 - 50  # the window less the reply's max_tokens


def test_the_cut_of_a_consumers_prompt_is_on_its_calls_record(tmp_path: Path) -> None:
    h, _ = harness_with_window(tmp_path, 400)
    execute(h, PRIOR)
    [call] = h.prompts.client.calls  # type: ignore[attr-defined]
    assert (call.purpose, call.tool) == ("tool", "howto")
    cut = call.prompt_cut
    assert cut["window"] == 400 and cut["passages_dropped"] > 0
    assert cut["passages_kept"] + cut["passages_dropped"] == 7


def test_a_consumer_cites_only_the_results_its_prompt_was_given(tmp_path: Path) -> None:
    h, _ = harness_with_window(tmp_path, 400)
    result = execute(h, PRIOR)
    kept = h.prompts.client.calls[0].prompt_cut["passages_kept"]  # type: ignore[attr-defined]
    assert RELEVANT in result.sources and len(result.sources) == kept  # type: ignore[attr-defined]


def test_rows_a_template_looks_up_are_cited_once_however_often_it_is_fitted(
    tmp_path: Path,
) -> None:
    (tmp_path / "products.csv").write_text("model,name\nKT-1,Kettle One\n", encoding="utf-8")
    table = ToolConfig(
        name="products",
        kind=ToolKind.LOOKUP,
        options=LookupOptions(table=Path("products.csv"), key="model"),
    )
    looking_up = consumer(
        "{% for row in lookup('products', 'KT-1') %}{{ row.name }}{% endfor %}\n" + CONTEXT_TEMPLATE
    )
    h, sent = harness_with_window(tmp_path, 400, looking_up, table)
    result = execute(h, PRIOR)
    assert sent[0].startswith("Kettle One")
    rows = [s for s in result.sources if s.document == "products.csv"]  # type: ignore[attr-defined]
    assert len(rows) == 1
