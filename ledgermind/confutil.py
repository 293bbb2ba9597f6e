"""Config helpers shared by the entry points."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def to_plain(node: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A resolved plain dict from an OmegaConf node or any mapping (None stays None)."""
    if node is None:
        return None
    from omegaconf import DictConfig, OmegaConf

    if isinstance(node, DictConfig):
        return OmegaConf.to_container(node, resolve=True)  # type: ignore[return-value]
    return dict(node)
