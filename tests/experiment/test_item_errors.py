"""Failures recorded inside a trajectory (or by the loader) reach results.jsonl and metrics.json as errors."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from ledgermind.benchmarks.item import AnswerType, Item, failed_item
from ledgermind.experiment.runner import RunOptions, identity_for, run_items
from ledgermind.scoring import score
from ledgermind.tools.base import Tool, ToolKind
from ledgermind.trajectory import ModelCall, PathKind, Trajectory


class _ImageTool(Tool):
    """A real ``Tool`` whose input image cannot be read, as perception's loader reports it."""

    name, kind = "ocr", ToolKind.OCR

    def _run(self, **inputs):
        from ledgermind.image_decode import CorruptImageError

        raise CorruptImageError(f"image {inputs['image']} is truncated")


class _Agent:
    """Records every call; its trajectories carry the failure named by the item's ``meta["fail"]``."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def solve(self, item: Item) -> Trajectory:
        self.seen.append(item.id)
        traj = Trajectory(item.id, item.question, PathKind.DIRECT, answer="A", raw_answer="Answer: A")
        fail = item.meta.get("fail")
        if fail == "model":
            traj.model_calls.append(
                ModelCall("decide", 0.1, error="vLLM server unavailable after 6 attempts; last error: x")
            )
        elif fail == "image":
            traj.ledger.record(await _ImageTool().ainvoke(image="page.png"))
        return traj


def _items() -> list[Item]:
    def mk(i, **meta):
        return Item(f"q{i}", "q?", options=["a", "b"], answer="A", answer_type=AnswerType.MCQ, meta=meta)

    return [
        mk(0),
        mk(1, fail="model"),
        mk(2, fail="image"),
        failed_item("q3", "items.jsonl:4: options are nested"),
        mk(4),
    ]


def _run(tmp_path: Path, agent: _Agent) -> dict:
    items = _items()
    ident = identity_for(items, model="m", backend="b", benchmark="x", variant="full", seed=0)
    return asyncio.run(
        run_items(
            items,
            agent,
            identity=ident,
            options=RunOptions(tmp_path, progress=False),
            scorer=score,
            summarize=None,
        )
    )


def test_trajectory_and_loader_failures_are_errors_excluded_from_accuracy(tmp_path: Path) -> None:
    agent = _Agent()
    metrics = _run(tmp_path, agent)
    assert "q3" not in agent.seen  # an item that could not be loaded never reaches the agent
    rows = {d["id"]: d for d in map(json.loads, (tmp_path / "results.jsonl").read_text().splitlines())}
    assert rows["q0"]["error"] is None and rows["q0"]["score"] == 1.0
    assert (
        rows["q1"]["error"]
        == "model call failed (decide): vLLM server unavailable after 6 attempts; last error: x"
    )
    assert rows["q2"]["error"].startswith(
        "image failed (ocr): CorruptImageError: image page.png is truncated"
    )
    assert rows["q3"]["error"] == "input: items.jsonl:4: options are nested"
    assert all(rows[i]["score"] == 0.0 and not rows[i]["parsed"] for i in ("q1", "q2", "q3"))
    assert (metrics["n_items"], metrics["n_scored"], metrics["errors"], metrics["accuracy"]) == (5, 2, 3, 1.0)
    assert metrics["unparsed"] == 0 and sum(metrics["error_causes"].values()) == 3


def test_resume_redoes_errored_items_and_keeps_finished_ones(tmp_path: Path) -> None:
    _run(tmp_path, _Agent())
    again = _Agent()
    metrics = _run(tmp_path, again)
    assert sorted(again.seen) == ["q1", "q2"]  # q0, q4 finished; q3 still cannot be loaded
    assert (
        metrics["errors"] == 3 and metrics["n_scored"] == 2
    )  # the retried failures superseded the old lines
