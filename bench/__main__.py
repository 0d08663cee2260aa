"""`python -m bench [NAME ...]`: run the benchmarks (all of them by default, in this order), then
write the summary table of bench/README.md from every result there is.

    python -m bench                  # what `make bench` runs
    python -m bench multipart        # one benchmark (its own options: python -m bench.multipart -h)
    python -m bench realmodel        # SmolLM2-135M on llama.cpp's server: needs make test-llm's env
"""

from __future__ import annotations

import importlib
import sys
import time
from typing import Any

# cheap and independent first; each writes bench/results/<name>.json and its README section.
# The last three need what `make bench` builds besides the bench extra: `realmodel` and `rewrite`
# the model server's .venv-llm (as make test-llm), `page_vectors` the embedding model (it embeds
# the corpora again, whole: tens of minutes).
BENCHMARKS = (
    "startup",
    "bombs",
    "tables",
    "retrieval",
    "faq",
    "gatekeeper",
    "users",
    "answers",
    "reach",
    "embed_runtimes",
    "index_open",
    "vector_search",
    "multipart",
    "overhead",
    "streaming",
    "serve",
    "eval",
    "realmodel",
    "rewrite",
    "page_vectors",
)
ON_REQUEST: tuple[str, ...] = ()  # none: every figure in bench/README.md comes from `make bench`

# The options a benchmark runs with under `make bench`: those whose figures bench/README.md shows
# (streaming's on SmolLM2-135M too: the model server's .venv-llm, which `make bench` builds).
OPTIONS: dict[str, list[str]] = {"streaming": ["--smollm2"]}

# Sections a benchmark writes only under an option of its own, run right after its main run so
# that `make bench` regenerates them too: (function, arguments). `after` files this tree's
# figures beside the `before` ones its results keep.
ALSO: dict[str, tuple[tuple[str, tuple[Any, ...]], ...]] = {
    "startup": (("main", (["--question", "after"],)),),  # One question on the standard install
    "vector_search": (("queries_main", ("after",)),),  # Hybrid queries on real corpora
}


def main(argv: list[str] | None = None) -> None:
    names = argv if argv else list(BENCHMARKS)
    unknown = [name for name in names if name not in (*BENCHMARKS, *ON_REQUEST)]
    if unknown:
        choices = ", ".join((*BENCHMARKS, *ON_REQUEST))
        raise SystemExit(f"unknown benchmark {', '.join(unknown)}; choose from {choices}")
    for name in names:
        print(f"== bench.{name}", flush=True)
        started = time.perf_counter()
        module = importlib.import_module(f"bench.{name}")
        if name in OPTIONS:
            module.main(OPTIONS[name])
        else:
            module.main()
        for function, arguments in ALSO.get(name, ()):
            getattr(module, function)(*arguments)
        print(f"== bench.{name}: {time.perf_counter() - started:.0f} s", flush=True)
    importlib.import_module("bench.summary").main()


if __name__ == "__main__":
    main(sys.argv[1:])
