"""A question is embedded on weights of the precision its corpus's page vectors were made with
(runner.embedding.models.runtime_for), whatever runtime is the default now: an index built on
float32 weights is searched with float32 queries after onnxruntime's int8 runtime arrives."""

from __future__ import annotations

import pytest

from runner.embedding import models
from runner.embedding.models import RUNTIME_VARIABLE, runtime_for


@pytest.fixture
def onnx_present(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(RUNTIME_VARIABLE, raising=False)
    monkeypatch.setattr(models, "onnx_installed", lambda: True)


@pytest.fixture
def onnx_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(RUNTIME_VARIABLE, raising=False)
    monkeypatch.setattr(models, "onnx_installed", lambda: False)


def test_int8_vectors_are_searched_on_the_default_int8_runtime(onnx_present) -> None:
    assert runtime_for("int8") == "onnx-int8"


def test_float32_vectors_are_searched_on_onnxruntime_float32_when_int8_is_the_default(
    onnx_present,
) -> None:
    assert runtime_for("float32") == "onnx"


def test_float32_vectors_are_searched_on_numpy_without_onnxruntime(onnx_absent) -> None:
    assert runtime_for("float32") == "numpy"


def test_int8_vectors_fall_back_to_the_default_when_onnxruntime_is_gone(onnx_absent) -> None:
    assert runtime_for("int8") == "numpy"


def test_a_chosen_runtime_of_the_right_precision_is_kept(onnx_present, monkeypatch) -> None:
    monkeypatch.setenv(RUNTIME_VARIABLE, "numpy")
    assert runtime_for("float32") == "numpy"
