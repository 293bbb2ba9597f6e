"""A live item for repair tests: the real per-item executor over test tools and a scripted model.

The model is request-driven (``ScriptedBackend`` rules match the prompt, default reply ""); the
tools are the ones a test passes (their real signatures), plus the item's model-backed tools."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from ledgermind.backends.scripted import Rule, ScriptedBackend
from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.dispatch import profile
from ledgermind.grounding import GroundingCascade
from ledgermind.pipeline.config import AblationFlags, PipelineConfig
from ledgermind.pipeline.context import ItemContext
from ledgermind.tools.base import Tool
from ledgermind.trajectory import PathKind


@pytest.fixture
def item_ctx(monkeypatch):
    monkeypatch.setenv("LEDGERMIND_ALLOW_SCRIPTED", "1")

    def make(
        tools: Sequence[Tool] = (),
        *,
        budget: int = 2,
        rules: Sequence[Rule] = (),
        flags: AblationFlags | None = None,
        question: str = "What does the sign say?",
        images: Sequence[Any] = (),
        **cfg: Any,
    ) -> ItemContext:
        config = PipelineConfig(repair_budget=budget, structured_output=False, **cfg)
        backend = ScriptedBackend({"name": "scripted"}, list(rules), default="")
        item = Item("q1", question, list(images), None, None, AnswerType.OPEN)
        return ItemContext(
            item,
            profile(question, None),
            PathKind.FULLPIPE,
            backend,
            {t.name: t for t in tools},
            GroundingCascade(replace(config.grounding, ecc_enabled=False)),  # no NER: repair never reads it
            config,
            flags or AblationFlags(),
        )

    return make
