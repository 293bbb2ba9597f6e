"""Name → object registries for pluggable parts (tools, backends, operators, benchmarks, metrics).

In the spirit of lm-evaluation-harness's ``api/registry.py``: registering the same name twice is
an error, because silently replacing a component would make a run's configuration lie about
what actually ran.

This is the project's one way to pick a component by name from the config: a registry entry is
either the object itself or a lazy ``"module:attr"`` string (``add_lazy``), imported on first
``get`` so that naming a heavy component (an agent that pulls in vLLM) costs nothing until it is
used. Only a Hydra ``_target_`` node *configures* an object (backends, loggers, perception
parts); choosing which agent factory, scorer or command runs goes through a registry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

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
            raise RegistryError(
                f"duplicate {self.kind} name {name!r}: already registered as {self._items[name]!r}"
            )
        self._items[name] = obj

    def add_lazy(self, name: str, target: str) -> None:
        """Register ``"module:attr"`` under ``name``, imported on first use."""
        if target.count(":") != 1:
            raise RegistryError(f"lazy {self.kind} {name!r} must be 'module:attr', got {target!r}")
        self.add(name, _Lazy(target))  # type: ignore[arg-type]

    def get(self, name: str) -> T:
        try:
            obj = self._items[name]
        except KeyError:
            raise RegistryError(self.unknown(name)) from None
        return obj.load(self.kind, name) if isinstance(obj, _Lazy) else obj

    def unknown(self, name: str) -> str:
        """The one-line miss: the closest registered name first (a typo is the usual cause), then all."""
        import difflib

        close = difflib.get_close_matches(str(name), list(self._items), n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return f"unknown {self.kind} {name!r}; {hint}known: {', '.join(sorted(self._items)) or '(none)'}"

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))

    def __len__(self) -> int:
        return len(self._items)


def import_attr(path: str) -> Any:
    """``"module:attr"`` or ``"module.attr"`` → the attribute: the project's one dotted-path import.

    Raises ``ImportError`` / ``AttributeError`` / ``ValueError``; callers turn them into the error
    of their own layer (a registry error, a one-line config error).
    """
    import importlib

    module, _, attr = str(path).replace(":", ".").rpartition(".")
    if not module:
        raise ValueError(f"{path!r} is not a dotted path")
    return getattr(importlib.import_module(module), attr)


class _Lazy:
    """A ``"module:attr"`` entry, imported when first looked up."""

    def __init__(self, target: str) -> None:
        self.target = target

    def load(self, kind: str, name: str) -> Any:
        try:
            return import_attr(self.target)
        except (ImportError, AttributeError, ValueError) as e:
            raise RegistryError(f"{kind} {name!r} ({self.target}) cannot be loaded: {e}") from e

    def __repr__(self) -> str:
        return f"<lazy {self.target}>"
