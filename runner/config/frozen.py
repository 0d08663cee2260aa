"""Read-only plain data for the typed model: a loaded pipeline never changes under the rounds
that share it, yet its free data (extraction schemas, python settings, scripted replies) still
goes to json.dumps and jsonschema as dicts and lists."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class FrozenDict(dict[str, Any]):
    """A dict that refuses changes. A dict subclass (not MappingProxyType) on purpose: free
    data — extraction schemas, python settings, scripted replies — goes to json.dumps and to
    jsonschema, which both want real dicts and lists."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a loaded pipeline is immutable")

    # every mutator is one refusal, whatever its signature
    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]
    __ior__ = _refuse  # type: ignore[assignment]  # the same refusal

    def __hash__(self) -> int:  # type: ignore[override]  # a frozen dict is hashable
        return hash(tuple(sorted(self.items(), key=repr)))

    def __reduce__(self) -> tuple[Any, ...]:  # copy, deepcopy and pickle build a new one
        return (FrozenDict, (dict(self),))


class FrozenList(list[Any]):
    """A list that refuses changes (see FrozenDict)."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a loaded pipeline is immutable")

    # every mutator is one refusal, whatever its signature
    __setitem__ = __delitem__ = append = extend = insert = pop = remove = _refuse
    clear = sort = reverse = __iadd__ = __imul__ = _refuse  # type: ignore[assignment]  # ditto

    def __hash__(self) -> int:  # type: ignore[override]  # a frozen list is hashable
        return hash(tuple(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))


def frozen(value: Any) -> Any:
    """A read-only deep copy of plain data that json and jsonschema still take as dicts/lists."""
    if isinstance(value, Mapping):
        return FrozenDict({key: frozen(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return FrozenList(frozen(item) for item in value)
    return value
