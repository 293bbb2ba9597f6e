"""Config helpers shared by the entry points."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: The Hydra config tree (``conf/``) every entry point and reader composes from.
CONF_DIR = Path(__file__).resolve().parents[1] / "conf"


def to_plain(node: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A resolved plain dict from an OmegaConf node or any mapping (None stays None).

    Why deep: a plain dict can still hold OmegaConf nodes (``dict(cfg.model)`` keeps
    ``vllm_args.mm_processor_kwargs.size`` a ``DictConfig``), and such a value crashes the first
    JSON writer it reaches. Everything that leaves Hydra goes through here and comes out as plain
    dicts, lists and scalars all the way down.
    """
    if node is None:
        return None
    plain = plain_value(node)
    assert isinstance(plain, dict)
    return plain


def plain_value(value: Any) -> Any:
    """Any value with every OmegaConf container (at any depth) replaced by a resolved dict or list."""
    from omegaconf import DictConfig, ListConfig, OmegaConf

    if isinstance(value, DictConfig | ListConfig):
        return OmegaConf.to_container(value, resolve=True)
    if isinstance(value, Mapping):
        return {k: plain_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(plain_value(v) for v in value)
    return value
