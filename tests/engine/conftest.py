"""Every test here builds its rounds through `world(...)`: each round's result and trace are
validated against schemas/result.schema.json and schemas/trace.schema.json, and the session
state's JSON round trip is checked, before the test sees the result (kit.check_round)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .kit import FakeTool, World


@pytest.fixture
def world() -> Callable[..., World]:
    def make(*tools: FakeTool, script: Any = (), **settings: Any) -> World:
        return World(list(tools), list(script), settings)

    return make
