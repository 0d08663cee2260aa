"""Paths and texts the config tests share."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"

# The smallest valid pipeline, for tests that add one thing to it.
BASE = """\
domain: shop
tools:
  - name: faq
    kind: prompt
    prompt: "Answer {{ task }}"
"""
