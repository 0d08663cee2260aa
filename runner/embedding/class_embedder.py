"""`embedding: {provider: llama_index, class: ...}`: a llama-index embedding class embeds —
HuggingFaceEmbedding, OpenAILikeEmbedding, Bedrock, Gemini, Azure OpenAI, Voyage… (the user
installs its package, e.g. `pip install llama-index-embeddings-openai-like`).

    embedding:
      provider: llama_index
      class: llama_index.embeddings.openai_like.OpenAILikeEmbedding
      model: nomic-embed-text           # the class's `model_name` (or `model`)
      api_base: http://127.0.0.1:8080/v1
      options: {dimensions: 256}

Only classes under `llama_index.embeddings.` (and llama-index-core's own,
`llama_index.core.embeddings.`) can be named: a pipeline file must not be a way to import
arbitrary code. The key comes only from the environment variable the pipeline names, passed as
the class's `api_key`.

The class is built once with the model, `batch_size` as its `embed_batch_size` (so that one
call of runner's is one of the class's), `timeout_s` as its `timeout` and no retries of its own
where it has such fields, then `options`. Runner calls `get_text_embedding_batch` on each batch
(pages) and `get_query_embedding` on a question (a class may embed the two differently), bounds
each call by `timeout_s` (it stops waiting for a class that has no timeout of its own) and tries
a call that raised again as endpoint.py does, except on the errors that say the input or the
class is wrong (TypeError, ValueError), which would only fail again.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as WaitedTooLong
from typing import Any

import numpy as np

from runner.embedding import endpoint
from runner.embedding.dotted_class import import_dotted_class
from runner.embedding.endpoint import cut
from runner.embedding.remote import EmbeddingServiceError, RemoteEmbedder, RemoteSpec

CLASS_PREFIXES = ("llama_index.embeddings.", "llama_index.core.embeddings.")
_NOT_RETRIED = (TypeError, ValueError, EmbeddingServiceError)


def distribution_of(path: str) -> str:
    """The pip package that carries a llama-index embedding class."""
    if path.startswith(CLASS_PREFIXES[1]):
        return "llama-index-core"
    return "llama-index-embeddings-" + path.split(".")[2].replace("_", "-")


def not_installed(path: str) -> str | None:
    """Why the class's module cannot be imported here (found, not imported: validation must
    not run a package's code), or None when it is installed."""
    module_name = path.rpartition(".")[0]
    try:
        found = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        found = None
    if found is None:
        return f"its module {module_name} is not installed: pip install {distribution_of(path)}"
    return None


def import_class(path: str | None) -> type:
    """The class `llama_index.embeddings.<package>.<Class>`; an error naming the pip package
    when its module is not installed."""
    return import_dotted_class(
        path,
        key="embedding.class",
        prefixes=CLASS_PREFIXES,
        example="llama_index.embeddings.openai_like.OpenAILikeEmbedding",
        distribution=distribution_of,
        error=EmbeddingServiceError,
    )


def class_options(found: type, spec: RemoteSpec, key: str | None) -> dict[str, Any]:
    """The class's keyword arguments: the model under the name the class gives it, runner's
    bounds where the class has such fields, `api_base`, then `options`, then the key."""
    fields = set(getattr(found, "model_fields", {}) or {})
    parameters = inspect.signature(found.__init__).parameters  # type: ignore[misc]  # a class
    # OpenAIEmbedding takes `model` and sets `model_name` from it; most take `model_name`
    named = "model" if "model" in parameters and "model_name" not in parameters else "model_name"
    kwargs: dict[str, Any] = {named: spec.model}
    if "embed_batch_size" in fields:
        kwargs["embed_batch_size"] = spec.batch_size
    if "timeout" in fields:
        kwargs["timeout"] = spec.timeout_s
    if "max_retries" in fields:
        kwargs["max_retries"] = 0  # runner retries; the class's on top would multiply them
    if spec.api_base:
        if "api_base" not in fields and "api_base" not in parameters:
            raise EmbeddingServiceError(
                f"embedding.class {spec.embed_class} takes no `api_base`: give its own option "
                "for the endpoint in `embedding.options`"
            )
        kwargs["api_base"] = spec.api_base
    kwargs.update(spec.options)
    if key is not None:
        kwargs["api_key"] = key
    return kwargs


class ClassEmbedder(RemoteEmbedder):
    """A llama-index embedding object, built once, asked in runner's batches."""

    def __init__(self, spec: RemoteSpec, timeout_s: float | None = None) -> None:
        super().__init__(spec, timeout_s)
        self._built: Any = None
        self._building = threading.Lock()

    def question(self, text: str) -> tuple[np.ndarray, None]:
        """A search's question, by the class's `get_query_embedding`."""
        held = cut(text, self.spec.max_chars)
        sent = self._call(lambda model: [model.get_query_embedding(held)])
        return self._checked(sent, 1)[0], None

    def _vectors(self, texts: list[str]) -> Any:
        return self._call(lambda model: model.get_text_embedding_batch(texts))

    def _model(self) -> Any:
        with self._building:
            if self._built is None:
                found = import_class(self.spec.embed_class)
                variable = self.spec.api_key_env
                key = os.environ.get(variable, "") if variable else None
                if variable and not key:
                    raise self._error(f"the environment variable {variable} is not set")
                try:
                    self._built = found(**class_options(found, self.spec, key))
                except (TypeError, ValueError) as error:  # pydantic's ValidationError is one
                    raise self._error(
                        f"the class could not be built from `embedding.options`: {error}"
                    ) from None
            return self._built

    def _call(self, ask: Callable[[Any], Any]) -> Any:
        """`ask(model)`, waited for `timeout_s` at most, tried again as endpoint.py does."""
        model = self._model()
        why = ""
        attempt = 0
        for attempt in range(endpoint.ATTEMPTS):
            if attempt:
                time.sleep(endpoint.BACKOFF_S * 2 ** (attempt - 1))
            pool = ThreadPoolExecutor(1, thread_name_prefix="runner-embedding-class")
            try:
                return pool.submit(ask, model).result(timeout=self.timeout_s)
            except WaitedTooLong:
                why = f"no reply within {self.timeout_s:g} s"
            except _NOT_RETRIED as error:
                raise self._error(_said(error)) from None
            except Exception as error:  # a class's own errors: its service failing
                why = _said(error)
            finally:
                pool.shutdown(wait=False)  # a call that timed out is not waited for
        raise self._error(f"{why} (tried {attempt + 1} times)")


def _said(error: Exception, limit: int = 300) -> str:
    """A class's error in a line: its type and the start of its message (pydantic's run to
    dozens of lines)."""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:limit]}{'…' if len(text) > limit else ''}"
