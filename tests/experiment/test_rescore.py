"""Re-scoring from stored replies: exactly the affected verdicts change, nothing is re-run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ledgermind.backends.base import Backend
from ledgermind.benchmarks.item import Item
from ledgermind.experiment.rescore import rescore_run, scorer_from_config
from ledgermind.experiment.runner import RunOptions, identity_for, run_items
from ledgermind.experiment.table3 import load_run
from ledgermind.runs.provenance import scorer_version
from ledgermind.runs.reader import find_runs
from ledgermind.scoring import score
from ledgermind.tools.base import Tool
from ledgermind.trajectory import PathKind, Trajectory
from tests.experiment.conftest import FAKE_OVERRIDES, run_script
from tests.experiment.fakes import fake_items

# what the model "said" per item (the trajectory's raw decision text); q4's agent raises
REPLIES = {
    "q0": "Answer: A",
    "q1": "Answer: B",
    "q2": "I cannot tell from the picture",
    "q3": "no idea",
    "q5": "Answer: A",
}


class ReplyAgent:
    async def solve(self, item: Item) -> Trajectory:
        if item.id not in REPLIES:
            raise RuntimeError("server down")
        return Trajectory(item.id, item.question, PathKind.DIRECT, raw_answer=REPLIES[item.id])


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    items = fake_items(6)
    ident = identity_for(
        items,
        model="m",
        backend="b",
        benchmark="fake",
        variant="full",
        seed=0,
        provenance={"scorer": scorer_version()},
    )
    asyncio.run(
        run_items(
            items,
            ReplyAgent(),
            identity=ident,
            options=RunOptions(tmp_path / "run", progress=False),
            scorer=score,
            summarize=None,
        )
    )
    return tmp_path / "run"


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


@pytest.fixture
def nothing_runs(monkeypatch):
    """Constructing any backend or tool, or invoking a tool, fails the test."""
    import ledgermind.backends
    import ledgermind.backends.reasoning
    import ledgermind.backends.replay  # noqa: F401
    import perception.tools  # noqa: F401 — and every perception tool class

    def boom(*a, **k):
        raise AssertionError("rescore must not construct a backend or touch a tool")

    for cls in [Backend, *_subclasses(Backend), Tool, *_subclasses(Tool)]:
        if "__init__" in vars(cls):  # own __init__ only: restoring an inherited slot is not exact
            monkeypatch.setattr(cls, "__init__", boom)
    monkeypatch.setattr(Tool, "ainvoke", boom)
    monkeypatch.setattr(Tool, "invoke", boom)
    monkeypatch.setattr("ledgermind.backends.build.build_backend", boom)
    from ledgermind.backends.scripted import ScriptedBackend

    with pytest.raises(AssertionError, match="must not construct"):  # the guard itself works
        ScriptedBackend(allow_scripted=True)


def lines(path: Path) -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}


def test_unchanged_scorer_changes_nothing(run_dir: Path, nothing_runs) -> None:
    before = lines(run_dir / "results.jsonl")
    rep = rescore_run(run_dir, items=fake_items(6), scorer=score)
    assert rep.changes == [] and lines(run_dir / "results.jsonl") == before
    assert rep.accuracy_before == rep.accuracy_after == pytest.approx(2 / 5)  # q4 errored: not scored


def test_random_fallback_changes_exactly_the_unparsed_verdicts(run_dir: Path, nothing_runs) -> None:
    before = lines(run_dir / "results.jsonl")
    old_metrics = json.loads((run_dir / "metrics.json").read_text())
    assert old_metrics["unparsed"] == 2 and old_metrics["errors"] == 1

    rep = rescore_run(run_dir, items=fake_items(6), scorer=scorer_from_config(None, random_fallback_seed=0))
    after = lines(run_dir / "results.jsonl")
    assert {c.id for c in rep.changes} == {"q2", "q3"}  # only the replies the parser could not read
    for i in ("q0", "q1", "q4", "q5"):
        assert after[i] == before[i]
    for i in ("q2", "q3"):
        assert (
            before[i]["prediction"] is None
            and after[i]["prediction"] in "ABCD"
            and after[i]["parsed"] is False
        )

    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["rescore"]["changed"] == 2 and metrics["rescore"]["scorer"] == scorer_version()
    assert metrics["rescore"]["accuracy_before"] == old_metrics["accuracy"]
    assert metrics["accuracy"] == pytest.approx(
        sum(r["score"] for r in after.values() if r["error"] is None) / 5
    )
    # the old files are kept beside the new ones, where Table 3's scan does not see them
    assert json.loads((run_dir / metrics["rescore"]["previous"]).read_text()) == old_metrics
    assert lines(rep.backup_dir / "results.before.jsonl") == before
    assert find_runs([run_dir.parent]) == [run_dir]
    # Table 3 agrees with metrics.json: the errored q4 is left out of the accuracy, not scored 0
    assert load_run(run_dir).scores["Overall"] == pytest.approx(100 * metrics["accuracy"])


@pytest.mark.slow
def test_cli_rescores_a_recorded_run_from_its_config(tmp_path: Path) -> None:
    out = tmp_path / "multi"
    proc = run_script(
        "run.py", "-m", *FAKE_OVERRIDES, "logger=none", f"hydra.sweep.dir={out}", "+ablation=full,no_ecc"
    )
    assert proc.returncode == 0, proc.stderr
    res = run_script("rescore.py", str(out), "--trust-config")  # the fake loader/scorer are test code
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("0 verdicts changed") == 2
    for job in ("ablation=full", "ablation=no_ecc"):
        m = json.loads((out / job / "metrics.json").read_text())
        assert m["rescore"]["changed"] == 0 and m["rescore"]["scorer"] == scorer_version()
    t3 = run_script("table3.py", str(out), "--logger", "none")
    assert t3.returncode == 0, t3.stderr  # the table rebuilds from the re-scored runs
    # the fake scorer has no random fallback: one clear line, exit 2
    bad = run_script(
        "rescore.py", str(out / "ablation=full"), "--random-fallback-seed", "0", "--trust-config"
    )
    assert (
        bad.returncode == 2 and "no ScoringConfig" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    )
    missing = run_script("rescore.py", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "not a directory" in missing.stderr


@pytest.mark.parametrize("pipeline", ["x", {"gamma": "high"}])
def test_a_recorded_gamma_that_is_not_a_number_is_one_error(tmp_path: Path, finished_run, pipeline) -> None:
    import yaml

    out = finished_run(tmp_path / "run")
    recorded = out / ".hydra" / "config.yaml"
    cfg = yaml.safe_load(recorded.read_text())
    cfg["pipeline"] = pipeline
    recorded.write_text(yaml.safe_dump(cfg))
    before = (out / "results.jsonl").read_bytes()
    res = run_script("rescore.py", str(out), "--trust-config")
    assert res.returncode == 2 and res.stderr.strip().splitlines() == [
        f"error: {out}: the recorded config's pipeline.gamma is {'x' if pipeline == 'x' else 'high'!r}, not a number"
    ]
    assert (out / "results.jsonl").read_bytes() == before  # nothing rewritten
