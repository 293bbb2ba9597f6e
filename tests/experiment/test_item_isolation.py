"""One bad file never stops a run, driven through scripts/run.py as a user would:
a bad data row is that row's error, a damaged trajectory of a finished item is a note, SIGTERM
stops like Ctrl-C, and a full disk is one line."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.experiment.conftest import FAKE_OVERRIDES, REPO, run_script, subprocess_env
from tests.experiment.test_failure_classes import NS
from tests.experiment.test_run_dir_faults import _errors, _fake, _lines, _wait_for, launch


def _rows(out: Path) -> dict[str, dict]:
    return {json.loads(x)["id"]: json.loads(x) for x in _lines(out / "results.jsonl")}


def test_a_nul_byte_or_wrong_type_in_one_row_is_that_rows_error(tmp_path: Path) -> None:
    data, out = tmp_path / "data", tmp_path / "run"
    data.mkdir()
    (data / "a.png").write_bytes((REPO / "ledgermind" / "benchmarks" / "sample" / "gauge.png").read_bytes())
    rows = [
        {"id": "good", "question": "q?", "options": ["x", "y"], "answer": "A", "images": ["a.png"]},
        {"id": "nul", "question": "q?", "options": ["x", "y"], "answer": "A", "images": ["a\u0000.png"]},
        {"id": "typed", "question": "q?", "options": ["x", "y"], "answer": "A", "images": [5]},
    ]
    (data / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = run_script(
        "run.py",
        *FAKE_OVERRIDES,
        "logger=none",
        "benchmark=jsonl",
        f"benchmark.path={data}",
        f"hydra.run.dir={out}",
    )
    assert proc.returncode == 3, proc.stderr
    assert _errors(proc)[-1].startswith(
        f"error: 2 of 3 items failed (input: {data / 'items.jsonl'}:2: item 'nul': image name 'a\\x00.png' is not a "
        "usable file name (embedded null byte)); retry them with: "
    ), _errors(proc)[-1]
    got = _rows(out)
    assert got["good"]["error"] is None and got["good"]["score"] == 1.0
    assert got["typed"]["error"].startswith(f"input: {data / 'items.jsonl'}:3:")


def test_an_empty_question_or_more_options_than_labels_is_that_rows_error(tmp_path: Path) -> None:
    data, out = tmp_path / "data", tmp_path / "run"
    data.mkdir()
    rows = [
        {"id": "good", "question": "q?", "options": ["x", "y"], "answer": "A"},
        {"id": "blank", "question": " \n", "options": ["x", "y"], "answer": "A"},
        {"id": "forty", "question": "q?", "options": [f"o{i}" for i in range(40)], "answer": "B"},
    ]
    (data / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = [
        *FAKE_OVERRIDES,
        "logger=none",
        "benchmark=jsonl",
        f"benchmark.path={data}",
        f"hydra.run.dir={out}",
    ]
    proc = run_script("run.py", *args)
    assert proc.returncode == 3, proc.stderr
    where = data / "items.jsonl"
    assert _errors(proc)[-1].startswith(
        f"error: 2 of 3 items failed (input: {where}:2: item 'blank': the question is empty); retry them with: "
    ), _errors(proc)[-1]
    got = _rows(out)
    assert got["good"]["error"] is None and got["good"]["score"] == 1.0
    assert got["forty"]["error"] == f"input: {where}:3: item 'forty': 40 options, more than the 26 labels A-Z"
    assert json.loads((out / "metrics.json").read_text())["n_scored"] == 1


def test_a_truncated_trajectory_of_a_finished_item_is_a_note_and_the_resume_finishes(
    tmp_path: Path, finished_run
) -> None:
    out, counter = tmp_path / "run", tmp_path / "calls.txt"
    finished_run(out, "limit=3", counter=counter)
    traj = sorted((out / "trajectories").iterdir())[0]
    item = json.loads(traj.read_text())["item_id"]
    traj.write_bytes(traj.read_bytes()[:40])  # a full disk or a kill cut it
    results = _lines(out / "results.jsonl")

    again = _fake(out, "limit=4", FAKE_AGENT_COUNTER=str(counter))
    assert again.returncode == 0, again.stderr
    notes = [ln for ln in again.stderr.splitlines() if ln.startswith("note:")]
    assert notes and all(f"item {item!r} is kept without its trajectory" in n for n in notes), again.stderr
    assert "not valid JSON" in notes[0]
    assert _lines(out / "results.jsonl")[:3] == results  # the finished verdict is kept, not redone
    assert len(_lines(counter)) == 4
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n_items"] == 4 and metrics["n_scored"] == 4 and metrics["errors"] == 0


def test_sigterm_stops_like_ctrl_c_with_the_resume_command(tmp_path: Path) -> None:
    out, started, gate = tmp_path / "run", tmp_path / "started", tmp_path / "gate"
    proc = launch(out, piped=True, FAKE_AGENT_STARTED=str(started), FAKE_AGENT_GATE=str(gate))
    try:
        _wait_for(started, proc)  # the run holds its directory and waits inside its first item
    except AssertionError:
        proc.kill()
        raise
    proc.send_signal(signal.SIGTERM)  # what a cluster scheduler sends before pre-emption
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    assert "Traceback" not in stderr
    lines = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and lines[0].startswith(
        "error: terminated (SIGTERM); finished items are kept; resume with: "
    )
    command = shlex.split(lines[0].split("resume with: ", 1)[1])
    assert command[:2] == ["python", "scripts/run.py"] and command[-1] == f"hydra.run.dir={out}"
    resumed = run_script("run.py", *command[2:])
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(_rows(out)) == [f"q{i}" for i in range(6)]


@pytest.mark.skipif(not NS, reason="a real full disk needs a tmpfs mount (unshare -rm)")
# readwrite: whichever write fills the disk first, the run's own files or its response cache
@pytest.mark.parametrize(
    ("cache", "says"),
    [
        ("off", ("No space left on device",)),
        ("readwrite", ("database or disk is full", "No space left on device")),
    ],
)
def test_a_full_disk_under_the_run_is_one_error_line(
    tmp_path: Path, cache: str, says: tuple[str, ...]
) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    out = disk / "run"
    argv = [
        sys.executable,
        str(REPO / "scripts" / "run.py"),
        *FAKE_OVERRIDES,
        "logger=none",
        f"cache.mode={cache}",
        f"hydra.run.dir={out}",
    ]
    script = f'mount -t tmpfs -o size=24k tmpfs {shlex.quote(str(disk))} && exec "$@"'
    proc = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, "sh", *argv],
        cwd=REPO,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 4, proc.stderr
    assert "Traceback" not in proc.stderr
    said = _errors(proc)
    # run.log may hit the full disk first (it flushes on its own schedule): that is one warning
    # line of its own, never a traceback per log record
    errors = [ln for ln in said if ln.startswith("error:")]
    others = [ln for ln in said if not ln.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(
        tuple(f"error: the disk refused the run's files ({s}" for s in says)
    ), said
    assert "resume with: python scripts/run.py" in errors[0]
    assert others in (
        [],
        [
            f"warning: {out / 'run.log'}: cannot write (No space left on device); the log continues on the console"
        ],
    ), said


def test_srfa_takes_its_own_trust_hint_and_does_not_retry_what_the_run_failed(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _fake(out, "limit=3", FAKE_AGENT_FAIL="q1").returncode == 3  # q1: the run's own item error
    refused = run_script("srfa.py", str(out), "logger=none")
    assert refused.returncode == 2, refused.stderr
    assert "pass --trust-config if you made this run yourself" in _errors(refused)[-1]
    audited = run_script("srfa.py", str(out), "--trust-config", "logger=none")  # the hint is accepted
    assert audited.returncode == 0, audited.stderr
    assert "(0 audit errors, 1 run errors)" in audited.stdout
    assert "rerun" not in audited.stderr
    metrics = json.loads((out / "srfa_metrics.json").read_text())
    assert metrics["ledger"]["run_errors"] == 1 and metrics["ledger"]["audit_errors"] == 0


def test_a_run_log_the_disk_refuses_is_one_warning_and_the_log_goes_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The disk can refuse run.log's flush before any write of the run's own (CI once hit exactly
    that): logging's default prints a traceback per record; the run's handler says it once."""
    import logging

    from ledgermind.experiment.run_log import RunLogHandler

    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    handler = RunLogHandler("/dev/full", encoding="utf-8")
    log = logging.getLogger("ledgermind.test.run_log")  # its own logger: other tests' handlers stay out
    log.propagate = False
    log.addHandler(handler)
    try:
        for i in range(3):
            log.warning("record %d", i)
    finally:
        log.removeHandler(handler)
        handler.close()
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Logging error" not in err, err
    assert err.count("cannot write (No space left on device)") == 1, err
    assert handler.refused and handler.stream is None
