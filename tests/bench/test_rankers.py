"""bench.rankers: the rankings of the fusion study, on score arrays small enough to check."""

from __future__ import annotations

import numpy as np

from bench.rankers import score_fusion, vector_feedback


def unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_score_fusion_weighs_bm25_over_its_best_score_beside_the_cosine() -> None:
    bm25 = np.array([10.0, 0.0, 5.0], dtype=np.float32)
    cosine = np.array([0.1, 0.9, 0.5], dtype=np.float32)
    assert score_fusion(bm25, cosine, 0.2) == [1, 2, 0]
    assert score_fusion(bm25, cosine, 0.9) == [0, 2, 1]


def test_vector_feedback_moves_the_question_towards_its_first_pages() -> None:
    # pages 0 and 1 lead and lean to one side of the question; page 3 leans the same way and
    # page 2 the other, a little nearer the question: the feedback turns the two round
    pages = np.stack([unit(1, 0.2), unit(1, 0.25), unit(1, -0.6), unit(1, 0.65)])
    question = unit(1, 0)
    bm25 = np.zeros(4, dtype=np.float32)
    cosine = pages @ question
    assert score_fusion(bm25, cosine, 0.2) == [0, 1, 2, 3]
    assert vector_feedback(bm25, cosine, pages, question, pages=2, weight=1.0) == [0, 1, 3, 2]


def test_vector_feedback_without_a_weight_is_score_fusion() -> None:
    pages = np.stack([unit(1, 0), unit(0, 1), unit(1, 1)])
    question = unit(1, 0.2)
    bm25 = np.array([0.0, 2.0, 1.0], dtype=np.float32)
    assert vector_feedback(bm25, pages @ question, pages, question, weight=0.0) == score_fusion(
        bm25, pages @ question, 0.2
    )
