"""The offline answerer reads by meaning where a retrieval's pages carry it (docs/offline.md,
"Reading by meaning"; runner.tools.meaning): the model scores each unit against the question
beside the words. The real model, as `make test-embed` runs it."""

from __future__ import annotations

import pytest

from runner.embedding import DEFAULT_MODEL
from runner.llm.prompts import Passage
from runner.sources import Source
from tests.llm.helpers import offline, run

NOT_FOUND = "The available context does not answer this question."


pytestmark = pytest.mark.usefixtures("embedder")  # the real model, or skipped


def meaning(document: str, page: int) -> dict[str, object]:
    from runner.embedding.models import default_runtime

    precision = "int8" if default_runtime() == "onnx-int8" else "float32"
    return {
        "model": DEFAULT_MODEL,
        "precision": precision,
        "first": {"document": document, "page": page},
    }


def page(text: str, document: str, number: int, *, meant: bool) -> Passage:
    heading, _, body = text.partition(": ")
    source = Source(document, number, "Web Server Manual", heading)
    return Passage(
        f"[{document}, page {number}] {source.title} › {heading}\n## {heading}\n\n{body}",
        (source,),
        "1:rag",
        meaning=meaning("server.md", 4) if meant else None,
    )


REDIRECT = (
    "Redirecting: Send every visitor of the plain web address to the encrypted address with a "
    "permanent redirect."
)
ACCESS = (
    "Access control: Restrict a directory to named users with the Require user directive and "
    "an htpasswd file."
)
# shares "stop", "one" and "opening" with the question below, and means nothing of it
SERVER = "Server control: The stop command ends one server process; opening the log shows why."


def answer(question: str, *context: Passage) -> str:
    _, prompts = offline()
    return run(prompts.answer(question, [], list(context))).text


def test_words_alone_find_nothing_in_a_page_worded_otherwise() -> None:
    reply = answer(
        "how do I force everyone onto https?", page(REDIRECT, "server.md", 4, meant=False)
    )
    assert reply.startswith(NOT_FOUND)
    assert "“Redirecting” in server.md" in reply  # it names where it looked


def test_the_first_page_by_meaning_is_read_though_it_shares_no_word_with_the_question() -> None:
    reply = answer(
        "how do I force everyone onto https?", page(REDIRECT, "server.md", 4, meant=True)
    )
    assert reply == (
        "Send every visitor of the plain web address to the encrypted address with a permanent "
        "redirect. [server.md p. 4]"
    )


def test_a_page_sharing_only_words_with_the_question_is_not_quoted_beside_the_one_meant() -> None:
    question = "how can I stop strangers from opening one folder of my site?"
    noise = page(SERVER, "server.md", 9, meant=True)
    reply = answer(question, page(ACCESS, "server.md", 4, meant=True), noise)
    assert reply == (
        "Restrict a directory to named users with the Require user directive and an htpasswd "
        "file. [server.md p. 4]"
    )
