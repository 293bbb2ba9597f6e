"""``scripts/report.py``: prints the index path, or one line and exit code 2."""

from __future__ import annotations

from pathlib import Path

from ledgermind.runs.trajectories import safe_filename
from tests.experiment.conftest import FAKE_OVERRIDES, run_script


def test_cli_prints_the_index_path(scripted_multirun: Path, tmp_path: Path) -> None:
    out = tmp_path / "rep"
    proc = run_script("report.py", str(scripted_multirun), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out / "index.html") and (out / "index.html").exists()
    assert (out / "runs" / safe_filename("0_full") / "items" / f"{safe_filename('apollo')}.html").exists()


def test_cli_user_error_is_one_line(tmp_path: Path) -> None:
    proc = run_script("report.py", str(tmp_path / "missing"))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "not a directory" in proc.stderr


def test_run_with_report_true_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = run_script("run.py", *FAKE_OVERRIDES, "report=true", f"hydra.run.dir={out}", "logger=none")
    assert proc.returncode == 0, proc.stderr[-2000:]
    index = out / "report" / "index.html"
    assert f"report: {index}" in proc.stdout and index.exists()
    items = sorted(p.name for p in (out / "report" / "items").iterdir())
    assert len(items) == len((out / "results.jsonl").read_text().splitlines()) > 0
    proc = run_script("run.py", *FAKE_OVERRIDES, f"hydra.run.dir={tmp_path / 'plain'}", "logger=none")
    assert proc.returncode == 0 and not (tmp_path / "plain" / "report").exists()  # default: no report
