"""The run-folder model (``runs/reader.py``) and the one JSONL reader (``ledgermind/jsonl.py``):
the rules every reader of a run folder now shares."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ledgermind.errors import DataError
from ledgermind.jsonl import BadLine, read_jsonl
from ledgermind.runs.files import TRAJECTORY_DIR, RunFileError
from ledgermind.runs.reader import RunDir, find_runs
from ledgermind.runs.results import ItemResult
from ledgermind.runs.trajectories import trajectory_path
from ledgermind.simulator.sanity import losses, variant_summary


def _row(item_id: str, score: float, **kw) -> str:
    r = ItemResult(item_id, "A", "A" if score else "B", score, True, "FULLPIPE", "Easy", **kw)
    return json.dumps(r.to_dict())


def _run(tmp_path: Path, lines: list[str], *, newline_at_end: bool = True) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    text = "\n".join(lines) + ("\n" if newline_at_end else "")
    (tmp_path / "results.jsonl").write_text(text, encoding="utf-8")
    (tmp_path / "metrics.json").write_text(json.dumps({"identity": {"variant": "full", "benchmark": "fake"}}))
    return tmp_path


def test_last_line_of_an_id_wins(tmp_path: Path) -> None:
    run = RunDir(
        _run(tmp_path, [_row("q0", 0.0, error="RuntimeError: boom"), _row("q1", 1.0), _row("q0", 1.0)])
    )
    results = run.results()
    assert [r.id for r in results] == ["q1", "q0"]
    assert results[1].score == 1.0 and results[1].error is None


def test_torn_last_line_is_tolerated_but_a_bad_middle_line_is_named(tmp_path: Path) -> None:
    run = RunDir(_run(tmp_path, [_row("q0", 1.0), _row("q1", 1.0)[:25]], newline_at_end=False))
    assert [r.id for r in run.results()] == ["q0"]
    assert [row.line_no for row in read_jsonl(run.path / "results.jsonl")] == [1]  # torn tail: silent
    with pytest.raises(DataError, match=r"results.jsonl: line 2 is not a readable result record"):
        run.results(strict=True)  # rescore rewrites the file: nothing may vanish
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"a": 1}\n{oops\n{"a": 2}\n', encoding="utf-8")
    with pytest.raises(
        DataError,
        match=r"x.jsonl: line 2 is not valid JSON \(Expecting property name enclosed in double quotes: '\{oops'\)",
    ):
        list(read_jsonl(bad))
    assert [r.value["a"] for r in read_jsonl(bad, bad=BadLine.SKIP)] == [1, 2]


def test_a_trajectory_is_found_by_its_hashed_name_only(tmp_path: Path) -> None:
    run = RunDir(_run(tmp_path, [_row("q/1", 1.0), _row("q 2", 1.0)]))
    new = trajectory_path(run.path, "q/1")
    new.parent.mkdir(parents=True)
    new.write_text(json.dumps({"item_id": "q/1", "raw_answer": "new"}))
    assert run.trajectory("q/1")["raw_answer"] == "new"
    (run.path / TRAJECTORY_DIR / "q_2.json").write_text(json.dumps({"item_id": "q 2"}))
    assert run.trajectory("q 2") is None and run.trajectory("q_2") is None  # an unhashed name is no record


def test_a_broken_json_file_is_a_one_line_error_and_runs_are_found_below(tmp_path: Path) -> None:
    run = RunDir(_run(tmp_path / "sweep" / "full", [_row("q0", 1.0)]))
    _run(tmp_path / "sweep" / "no_ecc", [_row("q0", 1.0)])
    (tmp_path / "sweep" / "report").mkdir()
    (tmp_path / "sweep" / "report" / "metrics.json").write_text("{}")  # a report never holds a run
    assert find_runs(tmp_path / "sweep") == [tmp_path / "sweep" / "full", tmp_path / "sweep" / "no_ecc"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no runs under"):
        find_runs([tmp_path / "empty"])
    (run.path / "metrics.json").write_text("{not json")
    with pytest.raises(RunFileError, match="metrics.json: not valid JSON"):
        run.metrics()


def test_sanity_counts_a_retried_item_once(tmp_path: Path) -> None:
    run_dir = _run(tmp_path, [_row("q0", 0.0, error="RuntimeError: boom"), _row("q1", 1.0), _row("q0", 1.0)])
    assert variant_summary(run_dir)["n"] == 2
    assert losses(run_dir) == []  # the retry answered q0: its failed first line is not a loss


def test_the_variant_comes_from_the_identity_then_the_claim_then_the_recorded_ablation(
    tmp_path: Path,
) -> None:
    finished = _run(tmp_path / "finished", [_row("q0", 1.0)])
    assert RunDir(finished).variant() == "full"
    unfinished = tmp_path / "unfinished"  # no metrics.json yet: run_identity.json says what it computes
    unfinished.mkdir()
    (unfinished / "run_identity.json").write_text(json.dumps({"identity": {"variant": "no_ecc"}}))
    assert RunDir(unfinished).variant() == "no_ecc"
    bare = tmp_path / "bare"  # only the recorded config: its ablation node, never a `pipeline.name`
    (bare / ".hydra").mkdir(parents=True)
    (bare / ".hydra" / "config.yaml").write_text("pipeline:\n  name: wrong\nablation:\n  name: no_ledger\n")
    assert RunDir(bare).variant() == "no_ledger"
    (bare / ".hydra" / "config.yaml").write_text("pipeline:\n  name: wrong\n")
    assert RunDir(bare).variant() is None


def test_every_json_file_of_a_folder_has_the_same_error_policy(tmp_path: Path) -> None:
    """Missing: None; not JSON: a one-line RunFileError naming the file (compare's S-RFA metrics too)."""
    from ledgermind.srfa.compare import axes_of

    run = _run(tmp_path / "run", [_row("q0", 1.0)])
    assert RunDir(run).json_object("absent.json") is None
    (run / "metrics.json").write_text("{not json")
    with pytest.raises(RunFileError, match=r"metrics\.json: not valid JSON"):
        axes_of(run)
    from ledgermind.srfa.run import SRFA_METRICS_FILE as SRFA_METRICS

    (run / SRFA_METRICS).write_text("[1, 2")
    with pytest.raises(RunFileError, match=re.escape(SRFA_METRICS) + ": not valid JSON"):
        axes_of(run)


def test_the_losses_are_listed_by_item_not_by_completion_order(tmp_path: Path) -> None:
    """Two runs of one sweep finish items in another order (concurrency); their reports must not differ."""
    run = _run(tmp_path, [_row("q2", 0.0), _row("q0", 0.0), _row("q1", 1.0), _row("q10", 0.0)])
    assert [loss.item_id for loss in losses(run)] == ["q0", "q10", "q2"]
