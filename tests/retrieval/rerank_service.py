"""A tiny rerank server for tests, on 127.0.0.1 and a free port, in both request shapes:
`POST /rerank` as Hugging Face TEI ({query, texts} -> [{index, score}], best first) and
`POST /v1/rerank` as Cohere, Jina and llama.cpp's server ({model, query, documents, top_n} ->
{results: [{index, relevance_score}]}). A text's score is the share of the query's words it
holds, plus `favour`'s bonus for a text that holds that word (a reranker that knows better than
the search). `failures` replies 503 that many times first (None: always); `drop` leaves the last
text out of the reply."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from .json_service import JSONHandler, serving


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


@dataclass
class Reranker:
    url: str = ""  # http://127.0.0.1:PORT
    failures: int | None = 0
    favour: str | None = None
    drop: bool = False
    requests: list[tuple[str, dict[str, object]]] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)

    def score(self, query: str, text: str) -> float:
        asked = words(query)
        found = len(asked & words(text)) / max(1, len(asked))
        return found + (10.0 if self.favour and self.favour in words(text) else 0.0)


@contextmanager
def rerank_service(failures: int | None = 0, favour: str | None = None) -> Iterator[Reranker]:
    service = Reranker(failures=failures, favour=favour)

    class Handler(JSONHandler):
        def do_POST(self) -> None:
            body = self.body()
            service.requests.append((self.path, body))
            service.keys.append(self.headers.get("Authorization", ""))
            if self.still_loading(service):
                return
            if self.path == "/rerank" and "texts" in body:
                self.reply(200, self._scored(body["query"], body["texts"], "score"))
            elif self.path == "/v1/rerank" and "documents" in body:
                scored = self._scored(body["query"], body["documents"], "relevance_score")
                self.reply(200, {"model": body.get("model"), "results": scored[: body["top_n"]]})
            else:
                self.reply(422, {"error": f"no such request at {self.path}"})

        def _scored(self, query: str, texts: list[str], name: str) -> list[dict[str, object]]:
            scored: list[dict[str, object]] = [
                {"index": i, name: service.score(query, t)} for i, t in enumerate(texts)
            ]
            scored.sort(key=lambda item: -float(item[name]))  # type: ignore[arg-type]
            if service.drop:
                scored = [item for item in scored if item["index"] != len(texts) - 1]
            return scored

    with serving(Handler) as url:
        service.url = url
        yield service
