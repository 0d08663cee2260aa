"""What a chat front end shows for each outcome of a round (the OpenAI API's message text)."""

from __future__ import annotations

from runner.serve.openai_api import completion, message_text


def result(**fields):
    return {"session": "s1", "round": 1, "sources": [], "stats": {}, **fields}


def test_an_answer_lists_its_sources_at_the_end():
    text = message_text(
        result(outcome="answer", answer="Yes.", sources=[{"document": "m.pdf", "page": 3}])
    )
    assert text == "Yes.\n\nSources:\n[1] m.pdf, page 3"


def test_a_question_is_the_message():
    assert message_text(result(outcome="clarification", question="Which model?")) == (
        "Which model?"
    )


def test_a_failed_round_says_it_could_not_answer_and_why():
    text = message_text(result(outcome="error", error="LLM timed out (purpose answer)"))
    assert text == "The pipeline could not answer: LLM timed out (purpose answer)"


def test_usage_comes_from_the_round_stats():
    body = completion(
        result(outcome="answer", answer="x", stats={"prompt_tokens": 7, "completion_tokens": 2}),
        "shop",
    )
    assert body["usage"] == {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}
    assert body["id"] == "chatcmpl-s1-1"
