"""A benchmark's items from a (composed or recorded) config: the one way a config becomes ``Item``s.

Why its own module: the run builds its items from the composed config, and every reader of a
finished run folder (report, rescore, audit) rebuilds them from the recorded one. Both go
through ``load_items``, so a recorded config is read exactly as the run read it, and the readers
do not have to import the run's machinery (``experiment/app.py``) to get there.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from enum import Enum
from typing import Any

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import MissingMandatoryValue

from ledgermind.benchmarks.item import Item
from ledgermind.confutil import container
from ledgermind.errors import ConfigError
from ledgermind.registry import import_attr


class LimitOrder(str, Enum):
    """Which ``limit`` items a run takes (``limit_order``).

    Why not always the first N: benchmark files are sorted (MMMU-Pro by subject), so ``limit=20``
    was twenty clinical-medicine items. ``shuffle`` takes N items of a seeded shuffle, ``stratified``
    takes them round-robin over the strata (``limit_by``: subject or difficulty, each stratum
    shuffled) so every subject appears before any repeats. Both are seeded by ``limit_seed``, never by
    the run's ``seed``: every seed and every ablation of a Table 3 must see the same items.
    """

    FIRST = "first"
    SHUFFLE = "shuffle"
    STRATIFIED = "stratified"

    @classmethod
    def parse(cls, value: Any) -> LimitOrder:
        try:
            return cls(str(value or "first"))
        except ValueError:
            raise ConfigError(f"limit_order must be first, shuffle or stratified, got {value!r}") from None


def take(
    items: Sequence[Item], limit: int, order: LimitOrder, seed: int = 0, by: str = "subject"
) -> list[Item]:
    """``limit`` items of ``items`` in the given order (module docstring of ``LimitOrder``)."""
    if order is LimitOrder.FIRST:
        return list(items[:limit])
    rng = random.Random(seed)
    if order is LimitOrder.SHUFFLE:
        return rng.sample(list(items), min(limit, len(items)))
    strata: dict[str, list[Item]] = {}
    for item in items:
        value = getattr(item, by, None)  # a field of the item, else its meta
        strata.setdefault(str(value if value is not None else item.meta.get(by)), []).append(item)
    queues = [rng.sample(group, len(group)) for _, group in sorted(strata.items())]
    rounds = itertools.zip_longest(*queues)  # round-robin: the first of each stratum, then the second, ...
    return [item for one_each in rounds for item in one_each if item is not None][:limit]


def load_items(cfg: DictConfig, limit: int | None, *, trusted: bool = True) -> list[Item]:
    """The configured benchmark's items (``limit`` of them, in ``limit_order``). ``trusted=False``
    (a config read from a run folder: report, rescore, audit) never imports a ``_target_`` from it;
    benchmarks come from the registry by name."""
    order = LimitOrder.parse(cfg.get("limit_order"))
    if limit is not None and order is not LimitOrder.FIRST:
        everything = _load(cfg, None, trusted=trusted)
        return take(
            everything, limit, order, int(cfg.get("limit_seed") or 0), str(cfg.get("limit_by") or "subject")
        )
    return _load(cfg, limit, trusted=trusted)


def _load(cfg: DictConfig, limit: int | None, *, trusted: bool) -> list[Item]:
    # a hand-made or foreign config (run folders are read back too) may lack the node or hold a name
    if not OmegaConf.is_dict(cfg.get("benchmark")):
        raise ConfigError("the config names no benchmark (benchmark=NAME)")
    try:
        node = container(cfg.benchmark, throw_on_missing=True)
    except MissingMandatoryValue as e:
        key = e.full_key if str(e.full_key).startswith("benchmark.") else f"benchmark.{e.full_key}"
        raise ConfigError(f"{key} is required: add {key}=... to the command line") from None
    own = node.get("limit")  # a bad value is left for the loader's own one-line refusal
    if limit is not None and (own is None or (isinstance(own, int) and not isinstance(own, bool))):
        node["limit"] = limit if own is None else min(limit, own)
    if "_target_" in node:  # a user-supplied loader: callable(**params) -> list[Item]
        target = node.pop("_target_")
        if not trusted:
            raise ConfigError(
                f"the run's benchmark names a loader by import path ({target}); a run folder is data, so "
                "only registered benchmarks are reloaded (pass --trust-config if you made this run yourself)"
            )
        try:
            loader = import_attr(target)
        except (ImportError, AttributeError, ValueError) as e:
            raise ConfigError(f"benchmark._target_ {target!r} cannot be imported: {e}") from e
        node.pop("name", None)
        items = list(loader(**node))
        return items if limit is None else items[:limit]
    from ledgermind.benchmarks.registry import load_benchmark

    if not (name := node.get("name")):
        raise ConfigError("the benchmark config needs a 'name' (a registered benchmark)")
    return load_benchmark(name, node)
