"""`provider: llama_index` (issue 12): any llama-index LLM class, built from `class:` and
`options:`, its structured replies through the class's function calling, keys only from the
variable the pipeline names."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from runner.config.model import LLMConfig, ModelSettings
from runner.llm import LLMConfigError, build_client
from runner.llm.types import LLMRequest, Purpose

from . import llama_index_fakes
from .helpers import run

GATE = {
    "type": "object",
    "properties": {"enough": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["enough"],
}
GATEKEEPER = LLMRequest(Purpose.GATEKEEPER, "Enough?", schema=GATE)


@pytest.fixture(autouse=True)
def fake_package(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    module = ModuleType("llama_index.llms.runner_fake")
    module.ToolCaller = llama_index_fakes.ToolCaller  # type: ignore[attr-defined]
    module.TextOnly = llama_index_fakes.TextOnly  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_index.llms.runner_fake", module)
    llama_index_fakes.SEEN.clear()
    yield


def client(cls: str, **config: Any) -> Any:
    settings = LLMConfig(provider="llama_index", llm_class=f"llama_index.llms.runner_fake.{cls}")
    for key, value in config.items():
        settings = dataclasses.replace(settings, **{key: value})
    return build_client(settings, environ={})


def test_a_structured_reply_is_the_call_of_a_tool_whose_parameters_are_the_schema() -> None:
    answer = run(
        client("ToolCaller", options={"arguments": {"enough": True, "reason": "ok"}}).complete(
            GATEKEEPER
        )
    )
    assert answer.data == {"enough": True, "reason": "ok"}
    call = llama_index_fakes.SEEN[0]
    assert call["tool_required"] is True
    assert call["parameters"] == {
        **GATE,
        "required": ["enough", "reason"],
        "additionalProperties": False,
    }


def test_a_text_purpose_is_a_plain_chat() -> None:
    answer = run(client("ToolCaller").complete(LLMRequest(Purpose.ANSWER, "Hi")))
    assert answer.text == "prose" and "tool" not in llama_index_fakes.SEEN[0]


def test_prompt_mode_skips_function_calling() -> None:
    reply = client("ToolCaller", structured="prompt")
    with pytest.raises(Exception, match="not usable"):
        run(reply.complete(GATEKEEPER))  # "prose" is no JSON: asked again, then it fails
    assert all("tool" not in call for call in llama_index_fakes.SEEN)


def test_a_class_without_function_calling_answers_through_the_parser() -> None:
    answer = run(client("TextOnly", options={"text": "yes"}).complete(GATEKEEPER))
    assert answer.data == {"enough": True}


def test_options_build_the_class_and_a_purpose_setting_wins_over_them() -> None:
    purposes = {"gatekeeper": ModelSettings(model="small")}
    reply = client(
        "ToolCaller",
        model="big",
        options={"temperature": 0.7, "arguments": {"enough": False, "reason": ""}},
        purposes=purposes,
    )
    run(reply.complete(GATEKEEPER))
    run(reply.complete(LLMRequest(Purpose.ANSWER, "Hi")))
    gate, answer = (call["options"] for call in llama_index_fakes.SEEN)
    assert (gate["model"], gate["temperature"]) == ("small", 0.7)
    assert (answer["model"], answer["max_tokens"]) == ("big", 1024)


def test_the_key_comes_only_from_the_named_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LLM_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-named")
    run(client("ToolCaller", api_key_env="FAKE_LLM_KEY").complete(LLMRequest(Purpose.ANSWER, "x")))
    run(client("ToolCaller").complete(LLMRequest(Purpose.ANSWER, "x")))
    named, unnamed = (call["options"]["api_key"] for call in llama_index_fakes.SEEN)
    assert (named, unnamed) == ("sk-from-env", None)


def test_a_missing_package_names_the_one_to_install() -> None:
    with pytest.raises(LLMConfigError, match="pip install llama-index-llms-no-such-thing"):
        build_client(
            LLMConfig(provider="llama_index", llm_class="llama_index.llms.no_such_thing.X"),
            environ={},
        )


def test_only_llama_index_llm_classes_can_be_named() -> None:
    with pytest.raises(LLMConfigError, match=r"llama_index\.llms\.<package>\.<Class>"):
        build_client(LLMConfig(provider="llama_index", llm_class="os.system"), environ={})


def test_a_misspelt_class_says_so() -> None:
    with pytest.raises(LLMConfigError, match="has no class 'Toolcaller'"):
        client("Toolcaller")


def test_options_the_class_refuses_are_a_config_error() -> None:
    with pytest.raises(LLMConfigError, match=r"could not be built from `llm\.options`"):
        run(client("ToolCaller", options={"max_tokens": "many"}).complete(GATEKEEPER))


def test_the_real_openai_like_class_works_through_this_provider_too() -> None:
    pytest.importorskip("llama_index.llms.openai_like")
    from runner.llm.providers.llama_index_class import import_class

    assert import_class("llama_index.llms.openai_like.OpenAILike").__name__ == "OpenAILike"


PIPELINE = """\
version: 1
domain: t
description: d
llm:
  provider: llama_index
{llm}tools:
  - name: only
    kind: prompt
    description: d
    prompt: "{{{{ task }}}}"
"""


def _diagnostics(tmp_path: Any, llm: str) -> list[str]:
    from runner.config import PipelineError, load_pipeline

    path = tmp_path / "p.yaml"
    path.write_text(PIPELINE.format(llm=llm), encoding="utf-8")
    try:
        load_pipeline(path)
    except PipelineError as error:
        return [d.message for d in error.diagnostics]
    return []


def test_validate_wants_the_class_of_a_llama_index_provider(tmp_path: Any) -> None:
    assert any("`class`" in message for message in _diagnostics(tmp_path, ""))


def test_validate_refuses_a_key_among_the_options(tmp_path: Any) -> None:
    llm = "  class: llama_index.llms.groq.Groq\n  options: {api_key: sk-1}\n"
    assert any("never a key" in message for message in _diagnostics(tmp_path, llm))


def test_validate_takes_a_class_with_its_options(tmp_path: Any) -> None:
    llm = "  class: llama_index.llms.groq.Groq\n  options: {timeout: 30}\n"
    assert _diagnostics(tmp_path, llm) == []
