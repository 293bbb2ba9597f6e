"""Fakes for harness tests: items, an agent whose answers depend on the ablation, a scorer.

The agent is driven by environment variables so that it can be steered inside a subprocess
(scripts/run.py or a python -c runner):

- ``FAKE_AGENT_DELAY``: seconds each solve() sleeps (lets a test kill a run mid-way)
- ``FAKE_AGENT_COUNTER``: a file that gets one line per solve() call (counts recomputation)
- ``FAKE_AGENT_FAIL``: comma-separated item ids whose solve() raises
- ``FAKE_AGENT_BUSY``: seconds each solve() then spends in synchronous Python on the event loop's
  thread (in short slices), as the real agent's grounding and NER do: where a signal lands
- ``FAKE_AGENT_STARTED`` / ``FAKE_AGENT_GATE``: solve() creates the first file (the run holds its
  directory and is solving) and then waits until the second exists — an explicit signal from the
  test, so a concurrency test never depends on how fast a loaded machine starts a process
"""

from __future__ import annotations

import asyncio
import errno
import os
import time
from dataclasses import dataclass
from typing import Any

from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.trajectory import ModelCall, PathKind, Trajectory
from perception.ocr import RapidOCREngine

DIFFS = ("Easy", "Medium", "Hard")


def fake_items(n: int = 6, **_: Any) -> list[Item]:
    """Item q{i}: gold "A", difficulty cycling Easy/Medium/Hard."""
    return [
        Item(
            id=f"q{i}",
            question=f"question {i}?",
            options=["right", "wrong", "also wrong", "nope"],
            answer="A",
            answer_type=AnswerType.MCQ,
            difficulty=DIFFS[i % 3],
            meta={"subject": "Physics" if i % 2 else "Art"},
        )
        for i in range(int(n))
    ]


@dataclass
class FakeScore:
    prediction: str | None
    correct: bool
    parsed: bool


def fake_score(item: Item, text: str) -> FakeScore:
    """Exact option-letter match; anything that is not a single letter is unparsed."""
    text = (text or "").strip()
    parsed = len(text) == 1 and text.isalpha()
    return FakeScore(text if parsed else None, parsed and text == item.answer, parsed)


class FakeAgent:
    """Right on every item except the ones ``wrong_on(item)`` selects."""

    def __init__(self, wrong_difficulties: tuple[str, ...] = (), unparsed_ids: tuple[str, ...] = ()) -> None:
        self.wrong = set(wrong_difficulties)
        self.unparsed = set(unparsed_ids)
        self.delay = float(os.environ.get("FAKE_AGENT_DELAY", "0"))
        self.counter = os.environ.get("FAKE_AGENT_COUNTER")
        self.fail = {s for s in os.environ.get("FAKE_AGENT_FAIL", "").split(",") if s}
        self.busy = float(os.environ.get("FAKE_AGENT_BUSY", "0"))
        self.in_flight = 0
        self.max_in_flight = 0

    async def solve(self, item: Item) -> Trajectory:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.counter:
                with open(self.counter, "a") as fh:
                    fh.write(item.id + "\n")
            await asyncio.sleep(self.delay)
            await _signal_and_wait()
            await _busy(self.busy)
            if item.id in self.fail:
                raise RuntimeError(f"corrupt image in {item.id}")
            answer = (
                "not a letter"
                if item.id in self.unparsed
                else ("B" if item.difficulty in self.wrong else "A")
            )
            return Trajectory(
                item_id=item.id,
                question=item.question,
                path=PathKind.DIRECT if item.difficulty == "Easy" else PathKind.FULLPIPE,
                answer=answer,
                raw_answer=f"Answer: {answer}",
                model_calls=[
                    ModelCall(stage="decision", latency_s=0.01, prompt_tokens=10, completion_tokens=2)
                ]
                * 2,
                profile={"types": ["read"] if item.difficulty == "Hard" else ["mcq"]},
            )
        finally:
            self.in_flight -= 1


async def _signal_and_wait() -> None:
    started, gate = os.environ.get("FAKE_AGENT_STARTED"), os.environ.get("FAKE_AGENT_GATE")
    if started:
        with open(started, "a") as fh:
            fh.write(f"{os.getpid()}\n")
    while gate and not os.path.exists(gate):
        await asyncio.sleep(0.01)  # polls the test's signal file; the test decides when to go on


async def _busy(seconds: float, slice_s: float = 0.2) -> None:
    """Hold the event loop's thread in plain Python for ``seconds``, yielding between slices."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        stop = min(end, time.monotonic() + slice_s)
        while time.monotonic() < stop:
            pass
        await asyncio.sleep(0)


# How each ablation degrades the fake agent, so that Table 3 deltas are known in advance.
WRONG_BY_VARIANT = {"full": (), "no_ledger": ("Hard", "Medium"), "no_ecc": ("Hard",)}


def build_fake_agent(cfg: Any, backend: Any) -> FakeAgent:
    variant = cfg.ablation.name if cfg.get("ablation") is not None else "full"
    return FakeAgent(WRONG_BY_VARIANT.get(variant, ()))


def fake_summarize(trajectories: list[Trajectory], scores: list[float], gamma: float) -> dict[str, float]:
    """Stand-in for ledgermind.metrics.summarize with checkable values."""
    return {"n_traj": len(trajectories), "mean_score": sum(scores) / len(scores), "gamma": gamma}


class DiskFailingOCR(RapidOCREngine):
    """The real CPU OCR engine (same constructor, same settings), whose disk fails while the file
    named by ``FAKE_OCR_EIO`` exists: ``recognize`` raises ``OSError(EIO)`` as a failing drive or
    a vanished network mount would. Remove the file and the engine reads again (a resume retries)."""

    def _recognize(self, image: Any) -> Any:
        marker = os.environ.get("FAKE_OCR_EIO")
        if marker and os.path.exists(marker):
            raise OSError(errno.EIO, "Input/output error", marker)
        return super()._recognize(image)
