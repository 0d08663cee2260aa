"""A llama-index class a pipeline file names by its dotted path (`llm.class`, `embedding.class`):
checked to be under the allowed prefixes, imported, and an error naming the pip distribution
to install when its module is not there.

Here, in the lowest room, because both the LLM layer (runner.llm.providers.llama_index_class)
and the embedding layer (class_embedder.py) name classes this way; each passes its own key,
distribution and error type.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable


def import_dotted_class(
    path: str | None,
    *,
    key: str,
    prefixes: tuple[str, ...],
    example: str,
    distribution: Callable[[str], str],
    error: Callable[[str], Exception],
) -> type:
    """The class at `path` (`<prefix><package>.<Class>`), for the pipeline key `key`
    ("llm.class"); `distribution(path)` is the pip package that carries it, `error(message)`
    the exception raised when the path is not allowed, its module is not installed, or it
    names no class there."""
    if not path or not path.startswith(prefixes) or path.count(".") < 3:
        raise error(
            f"provider llama_index needs `{key}: {prefixes[0]}<package>.<Class>` "
            f"(got {path!r}), e.g. {example}"
        )
    module_name, _, class_name = path.rpartition(".")
    package = distribution(path)
    try:
        module = importlib.import_module(module_name)
    except ImportError as problem:
        raise error(
            f"{key} {path}: its module is not installed; pip install {package} ({problem})"
        ) from None
    found = getattr(module, class_name, None)
    if not isinstance(found, type):
        raise error(
            f"{key} {path}: {module_name} has no class {class_name!r} (is it spelt as in the "
            f"{package} documentation?)"
        )
    return found
