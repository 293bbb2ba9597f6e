"""The async runner: per-item persistence, concurrency bound, errors, resume, metrics.json."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ledgermind.errors import DataError
from ledgermind.experiment.runner import RunOptions, identity_for, run_items, start_order
from ledgermind.runs.reader import RunDir
from ledgermind.runs.results import ItemResult, ResultsWriter
from ledgermind.runs.trajectories import trajectory_path
from ledgermind.trajectory import PathKind, Trajectory
from tests.experiment.fakes import FakeAgent, fake_items, fake_score, fake_summarize


def _run(items, agent, out: Path, concurrency: int = 3):
    ident = identity_for(items, model="fake-model", backend="fake", benchmark="fake", variant="full", seed=0)
    opts = RunOptions(out, concurrency=concurrency, gamma=0.5, progress=False)
    return asyncio.run(
        run_items(items, agent, identity=ident, options=opts, scorer=fake_score, summarize=fake_summarize)
    )


def test_results_trajectories_and_metrics(tmp_path: Path) -> None:
    items = fake_items(9)
    agent = FakeAgent(wrong_difficulties=("Hard",), unparsed_ids=("q1",))
    metrics = _run(items, agent, tmp_path, concurrency=3)

    lines = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert sorted(d["id"] for d in lines) == [f"q{i}" for i in range(9)]
    q2 = next(d for d in lines if d["id"] == "q2")  # Hard -> answered B, wrong
    assert q2 | {"latency_s": 0} == {
        "id": "q2",
        "prediction": "B",
        "gold": "A",
        "score": 0.0,
        "parsed": True,
        "path": "FULLPIPE",
        "difficulty": "Hard",
        "question_types": ["read"],
        "subject": "Art",
        "model_calls": 2,
        "tool_calls": 0,
        "tokens": 24,
        "latency_s": 0,
        "error": None,
        "truncated": False,
        "prompt_tokens": 20,
        "images_sent": 0,
        "image_pixels": 0,
        "item_sha256": items[2].content_sha256(),
    }
    traj = Trajectory.from_dict(json.loads(trajectory_path(tmp_path, "q2").read_text()))
    assert traj.answer == "B" and traj.n_model_calls == 2

    # 9 items: Easy q0,q3,q6 right; Medium q1 (unparsed) wrong, q4,q7 right; Hard q2,q5,q8 wrong.
    assert metrics == json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["n_items"] == 9
    assert metrics["accuracy"] == pytest.approx(5 / 9)
    assert metrics["by_difficulty"] == {
        "Easy": {"n": 3, "accuracy": 1.0},
        "Medium": {"n": 3, "accuracy": pytest.approx(2 / 3)},
        "Hard": {"n": 3, "accuracy": 0.0},
    }
    assert metrics["by_path"]["DIRECT"] == {"n": 3, "accuracy": 1.0}
    assert metrics["by_question_type"]["read"] == {"n": 3, "accuracy": 0.0}
    assert metrics["unparsed"] == 1 and metrics["errors"] == 0
    assert metrics["model_calls_per_item"] == 2 and metrics["tokens_per_item"] == 24
    assert metrics["trajectory_metrics"] == {"n_traj": 9, "mean_score": pytest.approx(5 / 9), "gamma": 0.5}
    assert metrics["identity"]["model"] == "fake-model" and metrics["identity"]["n_items"] == 9
    assert 1 < agent.max_in_flight <= 3  # concurrency used, and bounded


def test_concurrency_one_is_sequential(tmp_path: Path) -> None:
    agent = FakeAgent()
    _run(fake_items(4), agent, tmp_path, concurrency=1)
    assert agent.max_in_flight == 1


def test_item_that_raises_is_recorded_and_run_completes(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_AGENT_FAIL", "q1")
    metrics = _run(fake_items(4), FakeAgent(), tmp_path)
    by_id = {r.id: r for r in RunDir(tmp_path).results()}
    assert by_id["q1"].error == "RuntimeError: corrupt image in q1"
    assert by_id["q1"].score == 0.0 and by_id["q1"].path is None
    assert not trajectory_path(tmp_path, "q1").exists()
    assert all(by_id[i].error is None and by_id[i].score == 1.0 for i in ("q0", "q2", "q3"))
    # an error is not a wrong answer: accuracy is over the 3 scored items
    assert metrics["errors"] == 1 and metrics["unparsed"] == 0 and metrics["accuracy"] == 1.0
    assert (metrics["n_items"], metrics["n_scored"]) == (4, 3)
    assert "ERROR" not in metrics["by_path"] and sum(g["n"] for g in metrics["by_path"].values()) == 3


def test_resume_skips_done_ids_and_tolerates_truncated_line(tmp_path: Path, monkeypatch) -> None:
    items = fake_items(5)
    with ResultsWriter(tmp_path) as w:
        for result in (
            ItemResult("q0", "A", "A", 1.0, True, "DIRECT", "Easy"),
            ItemResult("q3", "B", "A", 0.0, True, "DIRECT", "Easy"),
        ):
            w.write(result, Trajectory(item_id=result.id, question="q?", path=PathKind.DIRECT).to_dict())
    with (tmp_path / "results.jsonl").open("a") as fh:
        fh.write('{"id": "q4", "predic')  # a kill in the middle of a write
    counter = tmp_path / "calls.txt"
    monkeypatch.setenv("FAKE_AGENT_COUNTER", str(counter))

    metrics = _run(items, FakeAgent(), tmp_path)

    assert sorted(counter.read_text().split()) == ["q1", "q2", "q4"]  # q0, q3 not recomputed
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert len(lines) == 5 and all(json.loads(x) for x in lines)  # the partial line was cut
    assert metrics["accuracy"] == pytest.approx(4 / 5)  # q3's earlier (wrong) result was kept
    assert metrics["trajectory_metrics"]["n_traj"] == 5


def test_a_finished_item_whose_trajectory_is_gone_is_solved_again(tmp_path: Path, monkeypatch) -> None:
    counter = tmp_path / "calls.txt"
    monkeypatch.setenv("FAKE_AGENT_COUNTER", str(counter))
    _run(fake_items(3), FakeAgent(), tmp_path)
    trajectory_path(tmp_path, "q1").unlink()
    metrics = _run(fake_items(3), FakeAgent(), tmp_path)
    assert counter.read_text().split()[3:] == ["q1"]
    assert [r.id for r in RunDir(tmp_path).results()] == ["q0", "q2", "q1"]  # its old line was removed
    assert metrics["trajectory_metrics"]["n_traj"] == 3


def test_resume_with_smaller_limit_reports_only_requested_items(tmp_path: Path) -> None:
    _run(fake_items(6), FakeAgent(), tmp_path)
    metrics = _run(fake_items(3), FakeAgent(), tmp_path)
    assert metrics["n_items"] == 3 and metrics["identity"]["n_items"] == 3


def test_duplicate_item_ids_are_a_data_error(tmp_path: Path) -> None:
    items = fake_items(2)
    items[1].id = items[0].id
    with pytest.raises(DataError, match="duplicate item id 'q0'"):
        _run(items, FakeAgent(), tmp_path)


def test_item_ids_that_are_not_filenames_stay_inside_the_run_dir(tmp_path: Path) -> None:
    items = fake_items(1)
    items[0].id = "../../etc/passwd"
    _run(items, FakeAgent(), tmp_path)
    written = list((tmp_path / "trajectories").iterdir())
    assert (
        len(written) == 1
        and written[0].name.startswith("etc_passwd-")
        and written[0].parent == tmp_path / "trajectories"
    )
    assert RunDir(tmp_path).results()[0].id == "../../etc/passwd"


def test_partial_credit_from_a_judge_is_kept(tmp_path: Path) -> None:
    from ledgermind.experiment.runner import ScoreView
    from tests.experiment.fakes import FakeScore

    assert ScoreView.of(FakeScore("x", 0.5, True)).score == 0.5  # type: ignore[arg-type]
    assert ScoreView.of(FakeScore("A", True, True)).score == 1.0
    assert ScoreView.of(FakeScore(None, False, False)) == ScoreView(None, 0.0, False)


def test_question_types_come_from_the_profile_the_agent_records() -> None:
    # The breakdown by question type read a key the agent never wrote, so it was always empty.
    from ledgermind.dispatch import profile
    from ledgermind.experiment.runner import question_types
    from ledgermind.pipeline.context import _profile_dict
    from ledgermind.trajectory import PathKind

    t = Trajectory(
        "g1",
        "What is the reading on the pressure gauge?",
        PathKind.FULLPIPE,
        profile=_profile_dict(profile("What is the reading on the pressure gauge?")),
    )
    assert "read" in question_types(t)


# ------------------------------------------------------------------------------ start order (LPT)
class _CostedAgent(FakeAgent):
    """A fake agent that can estimate its cost, like LedgerMindAgent.expected_cost."""

    def __init__(self, costs: dict[str, float]) -> None:
        super().__init__()
        self.costs, self.started = costs, []

    def expected_cost(self, item) -> float:
        return self.costs.get(item.id, 0.0)

    async def solve(self, item):
        self.started.append(item.id)
        return await super().solve(item)


def test_items_with_the_longest_expected_chain_start_first(tmp_path: Path) -> None:
    items = fake_items(6)
    agent = _CostedAgent({"q4": 2.0, "q1": 1.0, "q5": 2.0})
    _run(items, agent, tmp_path, concurrency=1)
    assert agent.started == ["q4", "q5", "q1", "q0", "q2", "q3"]  # costly first, ties in benchmark order
    plain = FakeAgent()
    assert [i.id for i in start_order(items, plain)] == [f"q{i}" for i in range(6)]


def test_ledgermind_agent_estimates_fullpipe_items_as_the_costly_ones() -> None:
    from ledgermind.benchmarks.item import Item
    from ledgermind.pipeline import AblationFlags
    from ledgermind.pipeline.agent import LedgerMindAgent

    simple = Item("s", "What color is the car?", [])
    reading = Item("r", "What is the temperature reading on the thermometer?", [])
    agent = LedgerMindAgent(backend=None, tools={}, cascade=None)  # type: ignore[arg-type]
    assert agent.expected_cost(reading) > agent.expected_cost(simple)
    assert [i.id for i in start_order([simple, reading], agent)] == ["r", "s"]
    baseline = LedgerMindAgent(backend=None, tools={}, cascade=None, flags=AblationFlags(baseline=True))  # type: ignore[arg-type]
    assert [i.id for i in start_order([simple, reading], baseline)] == [
        "s",
        "r",
    ]  # one call each: benchmark order


def test_writer_keeps_an_item_whose_record_holds_an_unencodable_string(tmp_path: Path) -> None:
    """A lone surrogate in some tool text must not lose a finished item (it used to abort the run)."""
    with ResultsWriter(tmp_path) as w:
        w.write(
            ItemResult("q0", "A\udebc", "A", 0.0, True, "DIRECT", "Easy"), {"id": "q0", "note": "x\udebc"}
        )
    assert [r.id for r in RunDir(tmp_path).results()] == ["q0"]
    assert json.loads(trajectory_path(tmp_path, "q0").read_text())["note"] == "x\udebc"
