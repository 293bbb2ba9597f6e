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


# ------------------------------------------------------------------------------ resume trusts only the holder
def test_a_second_success_line_for_a_finished_id_is_refused_naming_the_line(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _fake(out).returncode == 0
    lines = _lines(out / "results.jsonl")
    q1 = next(n for n, x in enumerate(lines, 1) if json.loads(x)["id"] == "q1")
    pasted = {**json.loads(lines[q1 - 1]), "prediction": "B", "score": 0.0}  # another variant's verdict
    (out / "results.jsonl").write_text("\n".join([*lines, json.dumps(pasted)]) + "\n")
    before = (out / "results.jsonl").read_text()

    again = _fake(out)
    assert again.returncode == 2, again.stderr
    assert _errors(again) == [
        f"error: {out / 'results.jsonl'} line 7: a second result for item 'q1', already finished on line {q1}; "
        "a run never redoes a finished item, so this line is not the run's own: remove it"
    ]
    assert (out / "results.jsonl").read_text() == before
    # every reader refuses it the same way: the report does not show the pasted verdict
    report = run_script("report.py", str(out))
    assert report.returncode == 2 and "line 7: a second result for item 'q1'" in report.stderr, report.stderr


def test_results_without_a_readable_identity_are_never_adopted(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _fake(out).returncode == 0
    results = _lines(out / "results.jsonl")
    for damage, state in ((lambda: (out / "run_identity.json").write_text("{not json"), "unreadable"),
                          (lambda: (out / "run_identity.json").unlink(), "missing")):  # fmt: skip
        damage()
        (out / "metrics.json").unlink(missing_ok=True)
        other = _fake(out, "+ablation=no_ecc")
        assert other.returncode == 2, other.stderr
        assert _errors(other) == [
            f"error: {out} holds results but its run_identity.json is {state}, so which experiment they belong to "
            "cannot be told; use another hydra.run.dir, or add resume=new to start a new directory beside it"
        ]
        assert _lines(out / "results.jsonl") == results and not (out / "metrics.json").exists()
        assert "no_ecc" not in (out / ".hydra" / "config.yaml").read_text()
    new = _fake(out, "+ablation=no_ecc", "resume=new")
    assert new.returncode == 0, new.stderr
    assert _identity(out.with_name("run-2"))["variant"] == "no_ecc" and _lines(out / "results.jsonl") == results


def test_an_item_whose_content_changed_is_never_kept(tmp_path: Path) -> None:
    data, out = tmp_path / "items.jsonl", tmp_path / "run"
    rows = [{"id": f"q{i}", "question": f"question {i}?", "options": ["a", "b"], "answer": "A"} for i in range(3)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ("benchmark=jsonl", f"benchmark.path={data}")
    first = run_script("run.py", *FAKE_OVERRIDES, "logger=none", f"hydra.run.dir={out}", *args)
    assert first.returncode == 0, first.stderr
    hashes = {json.loads(x)["id"]: json.loads(x)["item_sha256"] for x in _lines(out / "results.jsonl")}
    assert len(set(hashes.values())) == 3 and all(len(h) == 64 for h in hashes.values())
    items_sha = json.loads((out / "metrics.json").read_text())["identity"]["items_sha256"]

    rows[1]["answer"] = "B"  # the gold of q1 changed on disk; same ids, same config
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    results = _lines(out / "results.jsonl")
    again = run_script("run.py", *FAKE_OVERRIDES, "logger=none", f"hydra.run.dir={out}", *args)
    assert again.returncode == 2, again.stderr
    assert _errors(again) == [
        f"error: {out / 'results.jsonl'}: item 'q1' changed since it was solved (its question, options, gold or "
        "images differ), so its verdict cannot be kept; run the changed data into another hydra.run.dir, "
        "or restore the data"
    ]
    assert _lines(out / "results.jsonl") == results
    other = tmp_path / "other"
    fresh = run_script("run.py", *FAKE_OVERRIDES, "logger=none", f"hydra.run.dir={other}", *args)
    assert fresh.returncode == 0, fresh.stderr
    # the identity hashes content: the edited item set is another set (Table 3 will not pair the two)
    assert json.loads((other / "metrics.json").read_text())["identity"]["items_sha256"] != items_sha
