"""The ``BENCHMARKS`` registry: benchmark name → loader.

A loader is a plain function ``(LoaderConfig) -> list[Item]``. Loaders read local files only;
a missing path is a ``DataError`` with one line naming the path and the expected layout, so a
mistyped ``benchmark.path=`` never turns into a stack trace from deep inside a run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

from ledgermind.benchmarks.item import Item
from ledgermind.confutil import SHARED_DATA_ENV, cache_root
from ledgermind.errors import ConfigError, DataError
from ledgermind.registry import Registry


@dataclass(frozen=True)
class LoaderConfig:
    """What every loader understands (``conf/benchmark/_loader.yaml``). ``setting`` selects a variant
    (MMMU-Pro: standard10/standard4/vision). A loader's own keys go to ``options`` (``own_options``),
    so one loader's need never grows this shared set."""

    path: str | None = None
    setting: str | None = None
    split: str | None = None  # no loader has splits: a value is refused (``load_benchmark``)
    limit: int | None = None  # first ``limit`` items in file order (deterministic)
    cache_dir: str | None = None  # derived files (rendered pages, decoded images); default: user cache
    strict: bool = False  # True: the first bad row aborts the load; False: it becomes a per-item error
    # One relative tolerance for every numeric answer, when the benchmark's protocol fixes one (ChartQA's
    # relaxed accuracy: 0.05); None: the scorer's type-aware rule (scoring/numeric.py)
    numeric_tolerance: float | None = None
    # the loader's own options: an instance of the dataclass it declares (``own_options``)
    options: Any = None

    @classmethod
    def from_mapping(cls, cfg: Mapping[str, Any] | None, benchmark: str | None = None) -> LoaderConfig:
        """Build from a Hydra node; ``name``/``_target_`` are not options, unknown keys are an error.
        Keys the benchmark's loader declares (``own_options``) become its ``options``."""
        cfg = dict(cfg or {})
        own = options_type(benchmark or cfg.get("name"))
        cfg.pop("name", None)
        cfg.pop("_target_", None)
        shared = {f.name for f in fields(cls)} - {"options"}
        mine = {f.name for f in fields(own)} if own is not None else set()
        if unknown := sorted(set(cfg) - shared - mine):
            raise ConfigError(f"unknown benchmark option(s) {unknown}; known: {sorted(shared | mine)}")
        limit = cfg.get("limit")
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
            raise ConfigError(f"benchmark.limit must be a non-negative integer or null, got {limit!r}")
        tol = cfg.get("numeric_tolerance")
        if tol is not None and (
            isinstance(tol, bool) or not isinstance(tol, int | float) or not 0 <= tol < 1
        ):
            raise ConfigError(
                f"benchmark.numeric_tolerance must be a fraction in [0, 1) or null, got {tol!r}"
            )
        options = own(**{k: cfg.pop(k) for k in mine & set(cfg)}) if own is not None else None
        paths = {k: str(cfg[k]) for k in ("path", "cache_dir") if cfg.get(k) is not None}
        return cls(**cfg | paths, options=options)

    def require_path(self, benchmark: str, layout: str) -> Path:
        """The configured path, which must exist; otherwise one clear ``DataError`` line."""
        if not self.path:
            raise DataError(
                f"benchmark {benchmark!r} needs a data path (benchmark.path=...); expected {layout}"
            )
        p = Path(self.path).expanduser()
        if not p.exists():
            env = os.environ.get(SHARED_DATA_ENV)
            source = f"{SHARED_DATA_ENV}={env}" if env else f"{SHARED_DATA_ENV} is unset"
            raise DataError(
                f"benchmark {benchmark!r}: data path not found: {p} (expected {layout}); {source}: set it to "
                f"the folder that holds the benchmarks, or give benchmark.path=..."
            )
        return p

    def cache_path(self, benchmark: str) -> Path:
        return (Path(self.cache_dir).expanduser() if self.cache_dir else cache_root()) / benchmark


Loader = Callable[[LoaderConfig], list[Item]]
BENCHMARKS: Registry[Loader] = Registry("benchmark")
L = TypeVar("L", bound=Callable[..., Any])


def own_options(options: type) -> Callable[[L], L]:
    """Decorator: the loader reads its own keys from ``config.options``, an instance of the
    dataclass ``options`` (its defaults are the keys' defaults; an unknown key stays an error)::

        @BENCHMARKS.register("charts")
        @own_options(ChartOptions)
        def load_charts(config: LoaderConfig) -> list[Item]: ...
    """

    def deco(loader: L) -> L:
        loader.options_type = options  # type: ignore[attr-defined]
        return loader

    return deco


def has_settings(loader: L) -> L:
    """Decorator: the loader reads ``setting`` (MMMU-Pro: standard10/standard4/vision). Any other
    loader refuses a value for it in ``load_benchmark``: it would load its one set under the
    asked-for name (``benchmark=sample benchmark.setting=vision`` recorded as "sample/vision")."""
    loader.has_settings = True  # type: ignore[attr-defined]
    return loader


def _check_setting(name: str, loader: Loader, cfg: LoaderConfig) -> None:
    if cfg.split is not None:
        raise ConfigError(f"benchmark.split={cfg.split!r} would be ignored: no loader has splits; drop it")
    if cfg.setting is not None and not getattr(loader, "has_settings", False):
        readers = sorted(n for n in BENCHMARKS.names() if getattr(BENCHMARKS.get(n), "has_settings", False))
        raise ConfigError(
            f"benchmark {name!r} has no settings, so benchmark.setting={cfg.setting!r} would be ignored; "
            f"drop it (read by: {', '.join(readers)})"
        )


def options_type(benchmark: str | None) -> type | None:
    """The options dataclass a registered loader declares (None: shared keys only, or unknown name)."""
    if not benchmark or benchmark not in BENCHMARKS:
        return None
    return getattr(BENCHMARKS.get(benchmark), "options_type", None)


def load_benchmark(name: str, config: LoaderConfig | Mapping[str, Any] | None = None) -> list[Item]:
    """Look up ``name`` in ``BENCHMARKS`` and run its loader. Item ids must be unique."""
    loader = BENCHMARKS.get(name)  # an unknown name fails here, naming the closest one
    cfg = config if isinstance(config, LoaderConfig) else LoaderConfig.from_mapping(config, name)
    _check_setting(name, loader, cfg)
    items = loader(cfg)
    seen: set[str] = set()
    for it in items:
        if it.id in seen:
            raise DataError(f"benchmark {name!r}: duplicate item id {it.id!r}")
        seen.add(it.id)
        if cfg.numeric_tolerance is not None:  # what the scorer reads (scoring/numeric.py)
            it.meta["numeric_tolerance"] = cfg.numeric_tolerance
    return items
