"""`python -m bench`: run every benchmark module of this folder (each exposes `main()`)."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path


def main() -> None:
    folder = Path(__file__).parent
    for module in sorted(info.name for info in pkgutil.iter_modules([str(folder)])):
        if module.startswith("_"):
            continue
        print(f"== bench.{module}", flush=True)
        importlib.import_module(f"bench.{module}").main()


if __name__ == "__main__":
    main()
