"""``build_perception(node)``: the one way a run, S-RFA and the scripts get their perception stack.

A ``perception`` config node (``conf/perception/*.yaml``) names the tools, the on-disk cache and
the NER model with its extra aliases. Building them in one place keeps the agent and S-RFA
on the same OCR cache (an item a run already read costs S-RFA nothing) and the same spaCy
model, instead of each caller choosing its own defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ledgermind.tools.base import Tool
from perception.aliases import AliasTable
from perception.ner import DEFAULT_MODEL, SpacyNER


@dataclass(frozen=True)
class Perception:
    """The tools (cached as the node says), the NER model and the alias table of one config."""

    tools: dict[str, Tool]
    ner: SpacyNER
    aliases: AliasTable


def build_tools_cached(node: Mapping[str, Any] | None) -> dict[str, Tool]:
    """The node's perception tools behind its ``cache_dir`` (each image OCR'd once per sweep)."""
    from perception.cache import with_cache
    from perception.tools import build_tools

    node = dict(node or {})
    return with_cache(build_tools(node), node.get("cache_dir"))


def build_perception(node: Mapping[str, Any] | None) -> Perception:
    """The node's tools, its spaCy model (``ner.model``) and the default alias table extended by
    ``ner.aliases``."""
    ner_cfg = dict((node or {}).get("ner") or {})
    extra = ner_cfg.get("aliases") or {}
    aliases = AliasTable.default().extended(extra) if extra else AliasTable.default()
    return Perception(build_tools_cached(node), SpacyNER(ner_cfg.get("model", DEFAULT_MODEL)), aliases)
