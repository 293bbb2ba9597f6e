"""Kill a real run mid-way (SIGKILL: no cleanup handlers) and resume it in the same dir."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ledgermind.runs.trajectories import trajectory_path
from tests.experiment.conftest import REPO, subprocess_env

N_ITEMS = 8
RUNNER = f"""
import asyncio, sys
from pathlib import Path
from ledgermind.experiment.runner import RunOptions, identity_for, run_items
from tests.experiment.fakes import FakeAgent, fake_items, fake_score, fake_summarize
items = fake_items({N_ITEMS})
ident = identity_for(items, model="m", backend="b", benchmark="fake", variant="full", seed=0)
opts = RunOptions(Path(sys.argv[1]), concurrency=2, progress=False)
asyncio.run(run_items(items, FakeAgent(), identity=ident, options=opts, scorer=fake_score, summarize=fake_summarize))
"""


def _start(out: Path, counter: Path, delay: str) -> subprocess.Popen[str]:
    env = subprocess_env(FAKE_AGENT_DELAY=delay, FAKE_AGENT_COUNTER=str(counter))
    return subprocess.Popen([sys.executable, "-c", RUNNER, str(out)], cwd=REPO, env=env, text=True)


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.slow
def test_kill_then_resume_loses_and_recomputes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    results = out / "results.jsonl"
    first_calls, second_calls = tmp_path / "calls1.txt", tmp_path / "calls2.txt"

    proc = _start(out, first_calls, delay="0.4")
    deadline = time.monotonic() + 60
    while len(_lines(results)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)

    done_before = [json.loads(x)["id"] for x in _lines(results)]
    assert 2 <= len(done_before) < N_ITEMS, "the kill must land mid-run"
    assert not (out / "metrics.json").exists()

    proc = _start(out, second_calls, delay="0")
    assert proc.wait(timeout=60) == 0

    final_ids = [json.loads(x)["id"] for x in _lines(results)]
    recomputed = set(_lines(second_calls))
    assert sorted(final_ids) == sorted(f"q{i}" for i in range(N_ITEMS))  # nothing lost, no duplicates
    assert not recomputed & set(done_before)  # nothing that was written is solved again
    assert recomputed == set(final_ids) - set(done_before)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n_items"] == N_ITEMS and metrics["accuracy"] == 1.0
    assert all(trajectory_path(out, i).exists() for i in final_ids)
