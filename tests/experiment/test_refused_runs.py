"""A run refused before its first item leaves nothing behind: no folder, no W&B run, no cache file;
a folder that already holds results is never touched by a refusal."""

from __future__ import annotations

import json
from pathlib import Path

from ledgermind.backends.vllm_launch import free_port
from tests.experiment.conftest import run_script


def _dead_server_run(out: Path):
    return run_script(
        "run.py",
        "model=smolvlm",
        "backend=vllm_server",
        f"backend.base_urls=[http://127.0.0.1:{free_port()}/v1]",
        "logger=wandb_offline",
        "limit=1",
        f"hydra.run.dir={out}",
        WANDB_MODE="offline",
    )


def test_a_dead_server_leaves_no_folder_and_no_wandb_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = _dead_server_run(out)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: backend unreachable at ")
    assert "retry" not in proc.stderr  # nothing a rerun of the same command could fix
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_a_refusal_never_touches_a_folder_that_holds_results(tmp_path: Path, finished_run) -> None:
    out = finished_run(tmp_path / "run")

    def files() -> dict[Path, bytes]:  # the lock file holds the pid of its last holder
        return {p: p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != ".lock"}

    before = files()
    foreign = tmp_path / "mine" / "notes.txt"  # a folder the user named that holds their own file
    foreign.parent.mkdir()
    foreign.write_text("keep me")
    for folder in (out, foreign.parent):
        proc = _dead_server_run(folder)
        assert proc.returncode == 2, proc.stderr
    assert json.loads((out / "metrics.json").read_text())["n_items"] >= 1
    assert files() == before
    assert foreign.read_text() == "keep me"
