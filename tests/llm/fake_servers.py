"""A real HTTP server on 127.0.0.1 speaking OpenAI chat completions (`/v1/chat/completions`)
and Ollama chat (`/api/chat`), scripted per test: each request takes the next step of the
script (the last step repeats); a request with `stream: true` gets its reply a word at a time.
Steps: reply with content, answer an HTTP error, stall, or send
a body that is not JSON at all. `refuse_schema` makes it a server that does not know schema-
constrained output: a request carrying a schema in `response_format` (OpenAI) or `format`
(Ollama) gets that HTTP error, without taking a step."""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Step:
    status: int = 200
    content: str = "ok"  # the assistant message, for status 200
    stall_s: float = 0.0  # wait before answering (released at teardown)
    usage: tuple[int, int] | None = (11, 7)  # prompt/completion tokens reported, or none
    raw_body: str | None = None  # sent as-is instead of a well-formed body


def reply(content: str, **kwargs: Any) -> Step:
    return Step(content=content, **kwargs)


def error(status: int, message: str = "scripted failure") -> Step:
    return Step(status=status, content=message)


def stall(seconds: float) -> Step:
    return Step(stall_s=seconds)


@dataclass
class FakeLLMServer:
    steps: list[Step] = field(default_factory=lambda: [Step()])
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)  # each request's Authorization
    max_in_flight: int = 0
    hold_s: float = 0.0  # every request waits this long: lets a test observe concurrency
    refuse_schema: tuple[int, str] | None = None  # (status, message) for a json_schema request
    models_window: int | None = None  # `GET /v1/models` states this max_model_len (as vLLM does)
    word_gap_s: float = 0.0  # a streamed reply waits this long after each word it sends
    refused: int = 0
    _in_flight: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    release: threading.Event = field(default_factory=threading.Event)
    url: str = ""

    def script(self, *steps: Step) -> None:
        self.steps = list(steps)

    def next_step(self, body: dict[str, Any]) -> Step:
        with self._lock:
            self.requests.append(body)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            return self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]

    def done(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def refusal(self, body: dict[str, Any]) -> Step | None:
        """The refusal of a schema-constrained request, when this server refuses them; the
        request is kept (in `requests`) but takes no step of the script."""
        response_format = body.get("response_format") or {}
        asks = response_format.get("type") == "json_schema" or isinstance(body.get("format"), dict)
        if self.refuse_schema is None or not asks:
            return None
        with self._lock:
            self.requests.append(body)
            self._in_flight += 1
            self.refused += 1
        status, message = self.refuse_schema
        return Step(status=status, content=message)


def _handler(server_state: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
            pass

        def do_GET(self) -> None:  # `GET /v1/models`, as vLLM answers it
            entry: dict[str, Any] = {"id": "test-model", "object": "model"}
            if server_state.models_window is not None:
                entry["max_model_len"] = server_state.models_window
            data = json.dumps({"object": "list", "data": [entry]}).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            server_state.authorizations.append(self.headers.get("Authorization", ""))
            refusal = server_state.refusal(body)
            step = refusal if refusal is not None else server_state.next_step(body)
            try:
                if server_state.hold_s:
                    time.sleep(server_state.hold_s)
                if step.stall_s:
                    server_state.release.wait(step.stall_s)
                self._answer(step, body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to answer
            finally:
                server_state.done()

        def _answer(self, step: Step, body: dict[str, Any]) -> None:
            if body.get("stream") and step.status == 200 and step.raw_body is None:
                self._stream(step, body)
                return
            if step.raw_body is not None:
                payload = step.raw_body
            elif step.status != 200:
                payload = json.dumps({"error": {"message": step.content, "type": "scripted"}})
            elif self.path.startswith("/api/chat"):
                payload = json.dumps(_ollama_body(step, body))
            else:
                payload = json.dumps(_openai_body(step, body))
            data = payload.encode("utf-8")
            self.send_response(step.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, step: Step, body: dict[str, Any]) -> None:
            """The reply a word at a time, flushed one by one: OpenAI's server-sent chunks
            (the usage in a last chunk, when asked for), or Ollama's JSON lines."""
            ollama = self.path.startswith("/api/chat")
            self.send_response(200)
            self.send_header(
                "Content-Type", "application/x-ndjson" if ollama else "text/event-stream"
            )
            self.end_headers()
            lines = _ollama_lines(step, body) if ollama else _openai_events(step, body)
            for line in lines:
                self.wfile.write(line.encode("utf-8"))
                self.wfile.flush()
                time.sleep(server_state.word_gap_s)

    return Handler


def words(text: str) -> list[str]:
    """The pieces a streamed reply is sent in: each word with the blank before it."""
    return re.findall(r"\s*\S+", text)


def _openai_events(step: Step, body: dict[str, Any]) -> list[str]:
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        choices = (
            [] if extra.get("usage") else [{"index": 0, "delta": delta, "finish_reason": finish}]
        )
        data = {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": body.get("model", "test-model"),
            "choices": choices,
            **extra,
        }
        return f"data: {json.dumps(data)}\n\n"

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": piece}) for piece in words(step.content)]
    events.append(chunk({}, "stop"))
    wants_usage = (body.get("stream_options") or {}).get("include_usage")
    if wants_usage and step.usage is not None:
        prompt, completion = step.usage
        usage = {"prompt_tokens": prompt, "completion_tokens": completion}
        events.append(chunk({}, usage={**usage, "total_tokens": prompt + completion}))
    return [*events, "data: [DONE]\n\n"]


def _ollama_lines(step: Step, body: dict[str, Any]) -> list[str]:
    model = body.get("model", "test-model")
    lines = [
        {"model": model, "message": {"role": "assistant", "content": piece}, "done": False}
        for piece in words(step.content)
    ]
    last = {**_ollama_body(step, body), "message": {"role": "assistant", "content": ""}}
    return [json.dumps(line) + "\n" for line in [*lines, last]]


def _openai_body(step: Step, body: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "test-model"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": step.content},
                "finish_reason": "stop",
            }
        ],
    }
    if step.usage is not None:
        prompt, completion = step.usage
        result["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
    return result


def _ollama_body(step: Step, body: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "model": body.get("model", "test-model"),
        "created_at": "2024-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": step.content},
        "done": True,
        "done_reason": "stop",
    }
    if step.usage is not None:
        result["prompt_eval_count"], result["eval_count"] = step.usage
    return result


def start() -> tuple[FakeLLMServer, ThreadingHTTPServer]:
    state = FakeLLMServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True).start()
    return state, httpd
