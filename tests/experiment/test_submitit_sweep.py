"""A real distributed launcher: a 2-variant sweep through Hydra's submitit launcher (local mode:
each job is its own process, as on Slurm) gives what the basic launcher gives, shares one response
cache, and a job killed mid-run resumes on relaunch."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ledgermind.testing.fake_openai_server import FakeOpenAIServer, first_option_answer
from tests.experiment.conftest import REPO, run_script, subprocess_env

pytest.importorskip("hydra_plugins.hydra_submitit_launcher")

VARIANTS = ("full", "no_ecc")


def _sweep_cmd(url: str, out: Path, launcher: str | None) -> list[str]:
    return [
        sys.executable,
        str(REPO / "scripts" / "run.py"),
        "-m",
        *([f"hydra/launcher={launcher}"] if launcher else []),
        "backend=vllm_server",
        f"backend.base_urls=[{url}]",
        "backend.served_model_name=fake-model",
        "backend.max_retries=0",
        "benchmark=sample",
        "limit=3",
        "concurrency=1",
        "logger=none",
        "progress=false",
        f"+ablation={','.join(VARIANTS)}",
        f"hydra.sweep.dir={out}",
    ]


def _job_dir(sweep: Path, variant: str) -> Path:
    (found,) = [d for d in sweep.iterdir() if d.name.split(",")[0] == f"ablation={variant}"]
    return found


def _descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (Linux ``/proc``): a submitit-local job is a controller
    process whose task runs in a child."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def _outcome(sweep: Path) -> dict[str, object]:
    """Per variant: each item's prediction and score, and the census without the cache counters."""
    out: dict[str, object] = {}
    for v in VARIANTS:
        run = _job_dir(sweep, v)
        rows = {
            r["id"]: (r["prediction"], r["score"])
            for r in map(json.loads, (run / "results.jsonl").read_text().splitlines())
        }
        census = json.loads((run / "metrics.json").read_text())["mechanisms"]
        census.pop("cache")
        out[v] = (rows, census)
    return out


@pytest.mark.slow
def test_submitit_local_sweep_matches_basic_shares_one_cache_and_resumes_a_killed_job(tmp_path: Path) -> None:
    with FakeOpenAIServer(latency_s=0.0, reply=first_option_answer) as srv:
        basic = run_script("run.py", *_sweep_cmd(srv.base_url, tmp_path / "basic", None)[2:])
        assert basic.returncode == 0, basic.stderr[-2000:]

        # a submitit-local sweep; kill every job process once the first item of a job is recorded (a
        # slow server keeps the other items in flight meanwhile)
        srv.latency_s = 0.25
        sub = tmp_path / "submitit"
        cmd = _sweep_cmd(srv.base_url, sub, "submitit_local")
        proc = subprocess.Popen(
            cmd, cwd=REPO, env=subprocess_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not any(
            p.stat().st_size for p in sub.glob("ablation=*/results.jsonl")
        ):
            time.sleep(0.05)
        jobs = [int(p.name) for p in (sub / ".submitit").iterdir() if p.name.isdigit()]
        for pid in [q for job in jobs for q in reversed(_descendants(job))]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # a node lost mid-run: no cleanup
        # and the launching process with it (submitit's controller would wait 15 s for results the
        # lost jobs can no longer write, then fail: the relaunch below is the same either way)
        proc.kill()
        proc.wait(timeout=120)
        done = {
            v: (_job_dir(sub, v) / "results.jsonl").read_text().splitlines()
            for v in VARIANTS
            if (_job_dir(sub, v) / "results.jsonl").exists()
        }
        assert jobs and any(done.values()) and not all(len(lines) == 3 for lines in done.values()), (
            "kill must land mid-run"
        )

        srv.latency_s = 0.0
        again = run_script("run.py", *cmd[2:])  # relaunch: each job resumes its own directory
        assert again.returncode == 0, again.stderr[-2000:]

    assert _outcome(sub) == _outcome(tmp_path / "basic")
    for v, before in done.items():  # items finished before the kill were not solved again
        after = (_job_dir(sub, v) / "results.jsonl").read_text().splitlines()
        assert after[: len(before)] == before and len({json.loads(x)["id"] for x in after}) == len(after) == 3
    # one cache for the whole sweep, written by both jobs; no job has its own
    (cache,) = sub.glob("responses-*.sqlite")  # <sweep dir>/responses-<backend signature>.sqlite
    db = sqlite3.connect(cache)
    origins = {Path(o).name.split(",")[0] for (o,) in db.execute("SELECT DISTINCT origin FROM replies")}
    assert origins and origins <= {f"ablation={v}" for v in VARIANTS}
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert not list(sub.glob("ablation=*/responses.sqlite"))
    # the basic launcher runs the jobs one after the other: the second is answered from the first's rows
    shared = [
        json.loads((_job_dir(tmp_path / "basic", v) / "metrics.json").read_text())["mechanisms"]["cache"][
            "shared"
        ]
        for v in VARIANTS
    ]
    assert shared[0] == 0 and shared[1] > 0
