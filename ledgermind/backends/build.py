"""Build the configured backend, optionally behind the response cache.

``backend_cfg`` is either a Hydra node with ``_target_`` (what ``conf/backend/*.yaml`` holds) or a
mapping with ``name`` naming a registered backend; the remaining keys are its parameters.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ledgermind.backends.base import BACKENDS, Backend
from ledgermind.backends.budget import BudgetedBackend, ImageBudget
from ledgermind.backends.cache import CachedBackend, CacheMode, ResponseCache, cache_identity
from ledgermind.backends.reasoning import ReasoningBackend, ReasoningSpec
from ledgermind.confutil import to_plain
from ledgermind.errors import ConfigError, option


def build_backend(
    backend_cfg: Mapping[str, Any],
    model_cfg: Mapping[str, Any],
    cache_mode: CacheMode | str = CacheMode.OFF,
    cache_path: str | Path | None = None,
    cache_origin: str = "",
) -> Backend:
    """reasoning( cache( budget( backend ) ) ): the image rule applies to every backend, and the cache
    key includes the budget, the backend kind and both configs as far as they shape replies
    (``backends/cache.py``), so a reply is never replayed for another configuration. A thinking model's reasoning wrapper sits outside the cache, so the cache
    keeps raw replies (think blocks included) and keys on the enlarged ``max_tokens``.

    ``cache_origin`` labels the rows this run writes (its directory), so a hit from a cache shared
    with other runs is counted as shared (``backends/cache.py``).

    Both configs become plain containers here, where they leave Hydra: nothing below sees OmegaConf."""
    backend_cfg, model_cfg = to_plain(backend_cfg) or {}, to_plain(model_cfg) or {}
    inner = _instantiate(backend_cfg, model_cfg)
    budget = ImageBudget.from_model(model_cfg)
    backend: Backend = BudgetedBackend(inner, budget)
    mode = option(CacheMode, cache_mode, "cache.mode")
    if mode is not CacheMode.OFF and backend.cacheable:
        if cache_path is None:
            raise ConfigError(f"cache mode {mode.value!r} needs a cache path")
        if mode is CacheMode.REPLAY and not Path(cache_path).exists():
            raise ConfigError(f"cache=replay but the cache file {cache_path} does not exist")
        identity = cache_identity(model_cfg, backend_cfg, inner.name, budget)
        cache = ResponseCache(cache_path, recover=mode is not CacheMode.REPLAY, origin=cache_origin)
        backend = CachedBackend(backend, cache, mode, identity)
    spec = ReasoningSpec.from_model(model_cfg)
    return ReasoningBackend(backend, spec) if spec is not None else backend


# A backend that is its own model (the simulated backbone) declares it under this key; the run adopts
# it in place of the composed ``model`` node (``experiment.app.adopt_backend_model``).
OWN_MODEL_KEY = "own_model"


def _instantiate(backend_cfg: Mapping[str, Any], model_cfg: Mapping[str, Any]) -> Backend:
    cfg = dict(backend_cfg)
    cfg.pop(OWN_MODEL_KEY, None)
    if "_target_" in cfg:
        from ledgermind.confutil import instantiate

        return instantiate(cfg, "backend", model=model_cfg, _convert_="all")
    name = cfg.pop("name", None)
    if not name:
        raise ConfigError("backend config needs '_target_' or 'name'")
    return BACKENDS.get(name)(model=model_cfg, **cfg)  # type: ignore[call-arg]  # every registered backend takes model= (the abstract base does not)
