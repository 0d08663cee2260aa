"""all-MiniLM-L6-v2 on runner's numpy runtime: what a sentence-embedding model must give."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from runner.embedding.catalog import locate
from runner.embedding.models import Embedder


def test_vectors_are_unit_length_float32_of_the_model_s_width(embedder) -> None:
    vectors = embedder.embed(["How do I descale a kettle?", "Toast settings"])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_paraphrase_is_nearer_than_an_unrelated_sentence(embedder) -> None:
    question, paraphrase, unrelated = embedder.embed(
        [
            "remove leading and trailing whitespace from a string",
            "How do I strip blank space from the beginning and end of a string?",
            "The kettle has a two-year warranty from the date of purchase.",
        ]
    )
    assert question @ paraphrase > 0.6 > question @ unrelated + 0.3


def test_a_text_embeds_the_same_alone_and_in_a_batch_of_longer_ones(embedder) -> None:
    text = "Fill the kettle with cold water."
    alone = embedder.embed([text])[0]
    batched = embedder.embed([text, "A much longer sentence " * 30])[0]
    assert np.allclose(alone, batched, atol=1e-5)  # padding does not leak into the mean


def test_batches_embedded_at_once_land_in_their_own_rows_and_count_every_page(embedder) -> None:
    texts = [
        f"Step {n}: " + "descale the kettle with citric acid " * (n % 7 + 1) for n in range(80)
    ]
    seen: list[tuple[int, int]] = []
    together = embedder.embed(texts, progress=lambda done, total: seen.append((done, total)))
    one_by_one = np.stack([embedder.embed([text])[0] for text in texts[::9]])
    assert np.allclose(together[::9], one_by_one, atol=1e-5)
    assert seen[-1] == (80, 80) and [done for done, _ in seen] == sorted(d for d, _ in seen)


def test_a_model_folder_gives_the_packaged_model_s_vectors(embedder, tmp_path: Path) -> None:
    files = locate("all-MiniLM-L6-v2")
    folder = tmp_path / "mini"
    if files.where.is_file():  # the package's zip
        with zipfile.ZipFile(files.where) as archive:
            archive.extractall(folder)
    else:
        folder = files.where
    from_folder = Embedder(str(folder), locate(str(folder)))
    text = ["Limescale builds up in hard-water areas."]
    assert np.allclose(from_folder.embed(text), embedder.embed(text), atol=1e-6)


def test_a_question_asked_again_is_not_run_through_the_model_again(embedder, monkeypatch) -> None:
    from runner.embedding import models

    monkeypatch.setattr(models, "ASKED_KEPT", 2)
    embedder._asked.clear()
    forward = embedder._forward
    runs: list[list[str]] = []
    monkeypatch.setattr(embedder, "_forward", lambda texts: runs.append(texts) or forward(texts))
    first, pieces = embedder.question("descale the kettle")
    again, pieces_again = embedder.question("descale the kettle")
    assert runs == [["descale the kettle"]]
    assert np.array_equal(first, again) and pieces_again.words == pieces.words
    assert np.allclose(first, embedder.embed(["descale the kettle"])[0], atol=1e-5)


def test_only_the_last_questions_are_kept(embedder, monkeypatch) -> None:
    from runner.embedding import models

    monkeypatch.setattr(models, "ASKED_KEPT", 2)
    embedder._asked.clear()
    for question in ("toast settings", "kettle warranty", "toast settings", "fridge noise"):
        embedder.question(question)
    assert list(embedder._asked) == ["toast settings", "fridge noise"]  # the least recent went
