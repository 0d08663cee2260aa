"""A server's refusal of a structured mode is remembered in the state folder, per provider,
`api_base` and model, so that the next process starts in the mode that works (issue 22, item
10)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from runner.llm.accepted_modes import FILE, AcceptedModes, server_key

from .fake_servers import FakeLLMServer, reply
from .test_fallback_notice import QUESTION, SUITABLE, _refusing, _rounds

KEY = server_key("openai_like", "http://127.0.0.1:8080/v1", "smollm2")


def test_the_next_process_starts_in_the_mode_the_server_accepted(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    _refusing(llm_server)
    _rounds(tmp_path, llm_server, QUESTION)
    assert llm_server.refused == 1
    llm_server.script(reply(SUITABLE), reply("Fill it with vinegar."))
    [second] = _rounds(tmp_path, llm_server, QUESTION)  # a new runtime: a new LLM client
    assert second.outcome == "answer"
    assert llm_server.refused == 1  # not refused again
    modes = [
        body["response_format"]["type"] for body in llm_server.requests if "response_format" in body
    ]
    assert modes == ["json_schema", "json_object", "json_object"]


def test_the_refusal_is_kept_in_the_pipelines_state_folder(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    _refusing(llm_server)
    _rounds(tmp_path, llm_server, QUESTION)
    kept = json.loads((tmp_path / ".runner" / FILE).read_text(encoding="utf-8"))
    [(key, entry)] = kept["servers"].items()
    assert key == server_key("openai_like", f"{llm_server.url}/v1", "test-model")
    assert (entry["mode"], entry["refused"]) == ("json_object", "json_schema")


def test_another_model_on_the_same_server_is_asked_in_the_highest_mode(tmp_path: Path) -> None:
    modes = AcceptedModes(tmp_path / FILE)
    modes.remember(KEY, "json_object", refused="json_schema")
    assert modes.recall(KEY) == "json_object"
    assert modes.recall(server_key("openai_like", "http://127.0.0.1:8080/v1", "qwen")) is None
    assert modes.recall(server_key("openai_like", "http://127.0.0.1:9090/v1", "smollm2")) is None


def test_an_unreadable_file_counts_as_nothing_remembered(tmp_path: Path) -> None:
    path = tmp_path / FILE
    for text in ("{not json", '["a list"]', json.dumps({"servers": {KEY: {"mode": "yaml"}}})):
        path.write_text(text, encoding="utf-8")
        assert AcceptedModes(path).recall(KEY) is None


def test_a_state_folder_that_cannot_be_written_costs_only_the_memory(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file-not-a-folder"
    blocked.write_text("", encoding="utf-8")
    modes = AcceptedModes(blocked / FILE)
    modes.remember(KEY, "json_object", refused="json_schema")  # no error
    assert modes.recall(KEY) is None


def test_processes_remembering_at_once_both_land_and_leave_no_temporary_file(
    tmp_path: Path,
) -> None:
    keys = [server_key("openai_like", "http://h/v1", f"model-{n}") for n in range(8)]
    threads = [
        threading.Thread(
            target=AcceptedModes(tmp_path / FILE).remember, args=(key, "prompt", "json_object")
        )
        for key in keys
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(AcceptedModes(tmp_path / FILE).recall(key) == "prompt" for key in keys)
    assert sorted(p.name for p in tmp_path.iterdir()) == [FILE, FILE + ".lock"]
