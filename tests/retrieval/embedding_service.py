"""A tiny OpenAI-compatible `/v1/embeddings` server for tests, on 127.0.0.1 and a free port:
each text's vector counts its words hashed into 32 dimensions (texts sharing words point the
same way), deterministic across processes. `failures` replies 503 that many times first
(None: always); `delay_s` waits before each reply; `per_token` sends a vector a word, as
llama.cpp's server does for a model that pools nothing. `/api/embed` answers as Ollama's own
API does ({model, input} -> {embeddings})."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from .json_service import JSONHandler, serving

DIMENSIONS = 32


def vector_of(text: str) -> list[float]:
    counts = [0.0] * DIMENSIONS
    for word in re.findall(r"[a-z]+", text.lower()):
        counts[hashlib.blake2b(word.encode(), digest_size=2).digest()[0] % DIMENSIONS] += 1.0
    counts[0] += 0.01  # never all zero
    return counts


def embedding(text: str, per_token: bool) -> list[float] | list[list[float]]:
    return [vector_of(word) for word in text.split()] if per_token else vector_of(text)


@dataclass
class Service:
    url: str
    failures: int | None = 0
    per_token: bool = False
    delay_s: float = 0.0  # before each reply
    requests: list[dict[str, object]] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)


@contextmanager
def embedding_service(failures: int | None = 0, per_token: bool = False) -> Iterator[Service]:
    service = Service("", failures, per_token)

    class Handler(JSONHandler):
        def do_POST(self) -> None:
            body = self.body()
            service.requests.append(body)
            service.keys.append(self.headers.get("Authorization", ""))
            time.sleep(service.delay_s)
            if self.still_loading(service):
                return
            if self.path == "/api/embed":  # Ollama's own API
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                vectors = [embedding(text, per_token) for text in texts]
                self.reply(200, {"model": body["model"], "embeddings": vectors})
                return
            if self.path != "/v1/embeddings":
                self.reply(404, {"error": "no such path"})
                return
            data = [
                {"object": "embedding", "index": i, "embedding": embedding(text, per_token)}
                for i, text in enumerate(body["input"])
            ]
            self.reply(200, {"object": "list", "data": data, "model": body["model"]})

    with serving(Handler) as url:
        service.url = f"{url}/v1"
        yield service
