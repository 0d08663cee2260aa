"""Which of runner's extras are installed: `runner --version` lists them, so that an author can
see what `pip install 'runner[embed]'` (and the others) brought before a command says so.

An extra counts as installed when every package it requires is installed (its version is
pip's business); the installed distribution's metadata says what each extra requires, so the
list is always the one of the runner that runs. `dev` is the project's own and not listed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import metadata

HIDDEN = frozenset({"dev"})
# `onnxruntime>=1.17,<2; extra == "embed"`: the package's name and the extra it belongs to
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


@dataclass(frozen=True)
class Extra:
    name: str
    missing: tuple[str, ...]  # the packages it requires that are not installed

    @property
    def installed(self) -> bool:
        return not self.missing


def extras(distribution: str = "runner") -> list[Extra]:
    """Every extra of the distribution, in the order its metadata gives them."""
    meta = metadata.metadata(distribution)
    names = [name for name in meta.get_all("Provides-Extra") or [] if name not in HIDDEN]
    packages: dict[str, list[str]] = {name: [] for name in names}
    for text in meta.get_all("Requires-Dist") or []:
        name, extra = _NAME.match(text), _EXTRA.search(text)
        if name and extra and extra[1] in packages:
            packages[extra[1]].append(name[1])
    return [
        Extra(name, tuple(package for package in wanted if not _installed(package)))
        for name, wanted in packages.items()
    ]


def _installed(package: str) -> bool:
    try:
        metadata.version(package)
    except metadata.PackageNotFoundError:
        return False
    return True


def version_text(distribution: str = "runner") -> str:
    """`runner, version X` and a line per extra: installed, or what it lacks and how to add it."""
    lines = [f"{distribution}, version {metadata.version(distribution)}", "extras:"]
    for extra in extras(distribution):
        if extra.installed:
            lines.append(f"  {extra.name:<11} installed")
        else:
            lacking = ", ".join(extra.missing)
            lines.append(
                f"  {extra.name:<11} not installed (lacks {lacking}): "
                f"pip install '{distribution}[{extra.name}]'"
            )
    return "\n".join(lines)
