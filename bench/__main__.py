"""`python -m bench [NAME ...]`: run the benchmarks (all of them by default, in this order), then
write the summary table of bench/README.md from every result there is.

    python -m bench                  # what `make bench` runs
    python -m bench multipart        # one benchmark (its own options: python -m bench.multipart -h)
"""

from __future__ import annotations

import importlib
import sys
import time

# cheap and independent first; each writes bench/results/<name>.json and its README section
BENCHMARKS = ("startup", "retrieval", "multipart", "overhead", "serve")


def main(argv: list[str] | None = None) -> None:
    names = argv if argv else list(BENCHMARKS)
    unknown = [name for name in names if name not in BENCHMARKS]
    if unknown:
        raise SystemExit(f"unknown benchmark {', '.join(unknown)}; choose from {BENCHMARKS}")
    for name in names:
        print(f"== bench.{name}", flush=True)
        started = time.perf_counter()
        importlib.import_module(f"bench.{name}").main()
        print(f"== bench.{name}: {time.perf_counter() - started:.0f} s", flush=True)
    importlib.import_module("bench.summary").main()


if __name__ == "__main__":
    main(sys.argv[1:])
