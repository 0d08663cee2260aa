"""The engine's map of the rules (runner/engine/__init__.py) names functions that exist: a
step renamed or moved must move its line in the map too."""

from __future__ import annotations

import importlib
import re

import runner.engine

ENTRY = re.compile(r"\b(C\d+[a-e]?)\s+((?:[a-z_]+\.)+[A-Za-z_]+)(?:, ((?:[a-z_]+\.)+[A-Za-z_]+))?")


def _mapped() -> dict[str, list[str]]:
    doc = runner.engine.__doc__ or ""
    found: dict[str, list[str]] = {}
    for rule, *targets in ENTRY.findall(doc[doc.index("Where each rule") :]):
        found.setdefault(rule, []).extend(t for t in targets if t)
    return found


def _resolves(target: str) -> bool:
    """`module.function` (of runner.engine, or a full `runner.` path) exists."""
    parts = (target if target.startswith("runner.") else f"runner.engine.{target}").split(".")
    for cut in range(len(parts), 1, -1):  # the longest prefix that is a module
        try:
            thing = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(thing, name):
                return False
            thing = getattr(thing, name)
        return True
    return False


def test_every_rule_c1_to_c33_is_in_the_map() -> None:
    rules = {f"C{n}" for n in range(1, 34)} | {"C15a", "C20a", "C20b", "C20c", "C20d", "C20e"}
    assert rules <= set(_mapped()), sorted(rules - set(_mapped()))


def test_every_function_the_map_names_exists() -> None:
    missing = [
        (rule, target)
        for rule, targets in _mapped().items()
        for target in targets
        if not _resolves(target)
    ]
    assert missing == []
