"""`runner explain --sessions` on a store that holds none says which store it read, by the
store's location: a file's path, or a PostgreSQL URL without its password (a PostgreSQL store
has no path)."""

from __future__ import annotations

from typing import Any, cast

from runner.explain.session import session_lines


class EmptyStore:
    location = "postgresql://runner@db.example/runner"

    def sessions(self) -> list[Any]:
        return []


def test_an_empty_store_is_named_by_its_location() -> None:
    lines = session_lines(cast(Any, EmptyStore()))
    assert lines == ["no sessions in postgresql://runner@db.example/runner"]
