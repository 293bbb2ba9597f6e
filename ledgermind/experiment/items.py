"""A benchmark's items from a (composed or recorded) config: the one way a config becomes ``Item``s.

Why its own module: the run builds its items from the composed config, and every reader of a
finished run folder (report, rescore, audit) rebuilds them from the recorded one. Both go
through ``load_items``, so a recorded config is read exactly as the run read it, and the readers
do not have to import the run's machinery (``experiment/app.py``) to get there.
"""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import MissingMandatoryValue

from ledgermind.benchmarks.item import Item
from ledgermind.errors import ConfigError
from ledgermind.registry import import_attr


def import_object(dotted: str, what: str) -> Any:
    """``package.module.attr`` → the attribute, or a one-line ConfigError naming ``what``."""
    try:
        return import_attr(dotted)
    except (ImportError, AttributeError, ValueError) as e:
        raise ConfigError(f"{what} {dotted!r} cannot be imported: {e}") from e


def load_items(cfg: DictConfig, limit: int | None, *, trusted: bool = True) -> list[Item]:
    """The configured benchmark's items. ``trusted=False`` (a config read from a run folder:
    report, rescore, audit) never imports a ``_target_`` from it; benchmarks come from the
    registry by name."""
    try:
        node = OmegaConf.to_container(cfg.benchmark, resolve=True, throw_on_missing=True)
    except MissingMandatoryValue as e:
        key = e.full_key if str(e.full_key).startswith("benchmark.") else f"benchmark.{e.full_key}"
        raise ConfigError(f"{key} is required: add {key}=... to the command line") from None
    assert isinstance(node, dict)
    if limit is not None:
        node["limit"] = limit if node.get("limit") is None else min(limit, node["limit"])
    if "_target_" in node and not trusted:
        raise ConfigError(
            f"the run's benchmark names a loader by import path ({node['_target_']}); a run folder is data, so "
            "only registered benchmarks are reloaded (pass --trust-config if you made this run yourself)"
        )
    if "_target_" in node:  # a user-supplied loader: callable(**params) -> list[Item]
        loader = import_object(node.pop("_target_"), "benchmark._target_")
        node.pop("name", None)
        items = list(loader(**node))
        return items if limit is None else items[:limit]
    from ledgermind.benchmarks.registry import load_benchmark

    name = node.get("name")
    if not name:
        raise ConfigError("the benchmark config needs a 'name' (a registered benchmark)")
    return load_benchmark(name, node)
