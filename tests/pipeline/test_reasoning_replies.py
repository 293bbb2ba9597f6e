"""Reasoning models through the whole agent and runner: think blocks never become the answer,
truncated replies are flagged per item and per run, and scored as the official parser scores them."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest

from ledgermind.backends.base import GenerationRequest, Reply
from ledgermind.backends.scripted import Rule, ScriptedBackend
from ledgermind.experiment.runner import RunOptions, identity_for, run_items
from ledgermind.grounding import GroundingCascade
from ledgermind.pipeline import AblationFlags, LedgerMindAgent, PipelineConfig
from ledgermind.pipeline.agent import grounding_config
from ledgermind.runs.trajectories import trajectory_path
from ledgermind.scoring import score
from tests.pipeline.conftest import FixedCrop, FixedOCR, item

QUESTION = "What color is the sign?"
OPTIONS = ["red", "blue", "green"]
THINK_REPLY = "<think>Maybe A, red? No: the sign is clearly C.</think>\nAnswer: B"


class WordLimitedBackend(ScriptedBackend):
    """Scripted replies cut at ``request.max_tokens`` words, with ``finish_reason="length"`` as vLLM reports."""

    async def generate(self, request: GenerationRequest) -> Reply:
        reply = await super().generate(request)
        words = reply.text.split(" ")
        if len(words) <= request.max_tokens:
            return reply
        return replace(reply, text=" ".join(words[: request.max_tokens]), finish_reason="length")


def agent_for(
    reply: str, ner, monkeypatch, max_tokens: int = 512
) -> tuple[LedgerMindAgent, WordLimitedBackend]:
    monkeypatch.setenv("LEDGERMIND_ALLOW_SCRIPTED", "1")
    backend = WordLimitedBackend({"name": "scripted"}, [Rule(reply=reply, pattern="color is the sign")])
    cfg, flags = PipelineConfig(max_tokens=max_tokens), AblationFlags()
    cascade = GroundingCascade(grounding_config(cfg, flags), ner=ner)
    return LedgerMindAgent(
        backend, {"ocr": FixedOCR(), "crop_zoom": FixedCrop()}, cascade, cfg, flags
    ), backend


def run(agent, items, out: Path) -> dict:
    ident = identity_for(items, model="scripted", backend="scripted", benchmark="t", variant="full", seed=0)
    return asyncio.run(
        run_items(
            items,
            agent,
            identity=ident,
            options=RunOptions(out, progress=False),
            scorer=score,
            summarize=None,
        )
    )


def rows(out: Path) -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}


def test_think_block_letter_is_never_the_answer_nor_a_claim(ner, monkeypatch, image, tmp_path):
    agent, backend = agent_for(THINK_REPLY, ner, monkeypatch)
    metrics = run(agent, [item(QUESTION, image, options=OPTIONS, answer="B")], tmp_path)
    row = rows(tmp_path)["q1"]
    assert row["prediction"] == "B" and row["score"] == 1.0 and row["truncated"] is False
    traj = json.loads(trajectory_path(tmp_path, "q1").read_text())
    call = traj["model_calls"][0]
    assert (
        "clearly C" in call["reasoning"] and "<think>" not in call["reply"] and call["reply"] == "Answer: B"
    )
    claims = json.dumps(traj["ledger"].get("claims", []))
    assert "clearly C" not in claims and "red?" not in claims  # reasoning is never grounded as claims
    assert all(
        "clearly C" not in m.text_content() for r in backend.history for m in r.messages
    )  # never re-sent
    assert (
        metrics["truncated"] == 0
        and row["images_sent"] >= 1
        and row["image_pixels"] == 120 * 80 * row["images_sent"]
    )


def test_reply_cut_inside_think_block_is_unparsed_truncated_not_the_considered_letter(
    ner, monkeypatch, image, tmp_path
):
    agent, _ = agent_for(THINK_REPLY, ner, monkeypatch, max_tokens=6)  # cut before </think>
    items = [item(QUESTION, image, options=OPTIONS, answer="A")]  # the letter the reasoning considered
    metrics = run(agent, items, tmp_path)
    row = rows(tmp_path)["q1"]
    assert (
        row["truncated"] is True
        and row["parsed"] is False
        and row["score"] == 0.0
        and row["prediction"] is None
    )
    assert metrics["truncated"] == 1 and metrics["unparsed"] == 1
    call = json.loads(trajectory_path(tmp_path, "q1").read_text())["model_calls"][0]
    assert call["finish_reason"] == "length" and call["truncated"] and call["reply"] == ""


@pytest.mark.parametrize(("max_tokens", "truncated"), [(3, True), (512, False)])
def test_length_cut_answer_is_scored_as_official_protocol_and_flagged(
    ner, monkeypatch, image, tmp_path, max_tokens, truncated
):
    agent, _ = agent_for(
        "Answer: B because the sign looks blue from here", ner, monkeypatch, max_tokens=max_tokens
    )
    metrics = run(agent, [item(QUESTION, image, options=OPTIONS, answer="B")], tmp_path)
    row = rows(tmp_path)["q1"]
    assert row["prediction"] == "B" and row["score"] == 1.0  # same verdict as the official parser gives
    assert row["truncated"] is truncated and metrics["truncated"] == int(truncated)
