"""A run folder that cannot lie, part 2 (issue 37): driven through the scripts as a user would.

The record is written by its holder only (claimed before anything is written; every sweep job its
own directory); resume trusts only what the holder wrote; a foreign folder is inert data for
every reader. Each test checks the exit code, the one line, and the results / identity before
and after.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml

from tests.experiment.conftest import FAKE_OVERRIDES, run_script
from tests.experiment.test_run_dir_faults import _errors, _fake, _holder, _lines, _wait_for


def _ids(out: Path) -> list[str]:
    return [json.loads(x)["id"] for x in _lines(out / "results.jsonl")]


def _identity(out: Path) -> dict:
    return json.loads((out / "run_identity.json").read_text())["identity"]


# ------------------------------------------------------------------------------ claimed before written
def test_a_run_launched_into_a_held_directory_leaves_no_trace_in_it(tmp_path: Path) -> None:
    out = tmp_path / "run"
    holder, started, gate = _holder(out, tmp_path, "pipeline.gamma=0.5")
    try:
        _wait_for(started, holder)
        config, overrides = (out / ".hydra" / "config.yaml").read_text(), (out / ".hydra" / "overrides.yaml").read_text()
        identity = (out / "run_identity.json").read_text()
        other = _fake(out, "+ablation=no_ecc", "pipeline.gamma=0.9")
        assert other.returncode == 2 and "is in use by another run" in _errors(other)[0], other.stderr
        # nothing of the refused run is in the holder's folder: not its config, overrides, identity or log
        assert (out / ".hydra" / "config.yaml").read_text() == config
        assert (out / ".hydra" / "overrides.yaml").read_text() == overrides
        assert (out / "run_identity.json").read_text() == identity
    finally:
        gate.touch()
        assert holder.wait(timeout=120) == 0
    recorded = yaml.safe_load((out / ".hydra" / "config.yaml").read_text())
    assert "ablation" not in recorded and recorded["pipeline"]["gamma"] == 0.5
    assert "pipeline.gamma=0.5" in yaml.safe_load((out / ".hydra" / "overrides.yaml").read_text())
    assert "no_ecc" not in (out / "run.log").read_text() + (out / ".hydra" / "hydra.yaml").read_text()
    assert json.loads((out / "metrics.json").read_text())["identity"]["variant"] == "full"
    assert sorted(_ids(out)) == [f"q{i}" for i in range(6)]


def test_a_sweep_over_a_resumable_key_gives_every_job_its_own_directory(tmp_path: Path) -> None:
    sweep, counter = tmp_path / "sweep", tmp_path / "calls.txt"
    proc = run_script("run.py", "-m", *FAKE_OVERRIDES, "logger=none", f"hydra.sweep.dir={sweep}", "limit=2,4",
                      FAKE_AGENT_COUNTER=str(counter))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in sweep.iterdir() if p.is_dir()) == ["limit=2", "limit=4"]
    assert sorted(_ids(sweep / "limit=2")) == ["q0", "q1"]
    assert sorted(_ids(sweep / "limit=4")) == ["q0", "q1", "q2", "q3"]
    assert len(_lines(counter)) == 6  # job 2 solved its own four items: it did not "resume" job 1
    assert json.loads((sweep / "limit=2" / "metrics.json").read_text())["n_items"] == 2
    assert json.loads((sweep / "limit=4" / "metrics.json").read_text())["n_items"] == 4
    # a relaunch finds each job's own items
    again = run_script("run.py", "-m", *FAKE_OVERRIDES, "logger=none", f"hydra.sweep.dir={sweep}", "limit=4,2",
                       FAKE_AGENT_COUNTER=str(counter))  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert len(_lines(counter)) == 6
