"""Name → object registries for pluggable parts (tools, backends, operators, benchmarks, metrics).

In the spirit of lm-evaluation-harness's ``api/registry.py``: registering the same name twice is
an error, because silently replacing a component would make a run's configuration lie about
what actually ran.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from ledgermind.errors import LedgerMindError

T = TypeVar("T")


class RegistryError(LedgerMindError):
    """A registry was asked to register a duplicate name or to look up an unknown one."""


class Registry(Generic[T]):
    """A typed mapping from unique names to components."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: ``@REGISTRY.register("name")``. Duplicate names raise ``RegistryError``."""

        def deco(obj: T) -> T:
            self.add(name, obj)
            return obj

        return deco

    def add(self, name: str, obj: T) -> None:
        if not name or not isinstance(name, str):
            raise RegistryError(f"{self.kind} name must be a non-empty string, got {name!r}")
        if name in self._items:
            raise RegistryError(f"duplicate {self.kind} name {name!r}: already registered as {self._items[name]!r}")
        self._items[name] = obj

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "(none)"
            raise RegistryError(f"unknown {self.kind} {name!r}; known: {known}") from None

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))

    def __len__(self) -> int:
        return len(self._items)
