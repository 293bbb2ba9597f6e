"""A server that dies mid-run, is down, or serves another model: errors and exit codes, never wrong answers.

Runs ``scripts/run.py pipeline=official backend=vllm_server`` against a real HTTP server on
127.0.0.1 (``ledgermind.testing.fake_openai_server``) over real MMMU-Pro subset items.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from ledgermind.backends.vllm_launch import free_port
from ledgermind.testing.fake_openai_server import FakeOpenAIServer, first_option_answer
from tests.experiment.conftest import run_script

SERVED = "Qwen/Qwen2.5-VL-7B-Instruct"  # model=qwen2_5_vl_7b's hub id: vLLM's default served name


def _server(model: str, port: int = 0, die_after: int | None = None) -> FakeOpenAIServer:
    return FakeOpenAIServer(
        0.0, model, port=port, reply=first_option_answer, strict_model=True, die_after=die_after
    )


def _run(shared: Path, out: Path, url: str, *extra: str):
    return run_script("run.py", *_args(shared, out, url, *extra))


def _args(shared: Path, out: Path, url: str, *extra: str) -> list[str]:
    return [
        "pipeline=official",
        f"pipeline.prompts_path={shared / 'mmmu_pro_official' / 'prompts.yaml'}",
        "benchmark=mmmu_pro_standard10",
        f"benchmark.path={shared / 'mmmu_pro_subset'}",
        "limit=6",
        "model=qwen2_5_vl_7b",
        "backend=vllm_server",
        f"backend.base_urls=[{url}/v1]",
        "backend.max_retries=1",
        "backend.backoff_base_s=0.01",
        "concurrency=1",
        "cache.mode=off",
        "logger=none",
        "progress=false",
        f"hydra.run.dir={out}",
        *extra,
    ]


def _results(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_server_killed_mid_run_gives_errors_exit_3_and_rerun_retries_only_them(
    shared_data: Path, tmp_path: Path
) -> None:
    port = free_port()
    with _server(SERVED, port, die_after=3) as server:
        proc = _run(shared_data, tmp_path, server.root_url)
    assert proc.returncode == 3, proc.stderr
    assert "HTTP Request:" not in proc.stdout + proc.stderr  # httpx's per-request INFO lines are silenced
    rows = _results(tmp_path)
    ok, failed = [r for r in rows if r["error"] is None], [r for r in rows if r["error"] is not None]
    assert len(ok) == 3 and len(failed) == 3
    assert all(r["prediction"] == "A" and r["parsed"] for r in ok)  # the fake answers the first option
    assert all("vLLM server unavailable after 2 attempts" in r["error"] and r["score"] == 0.0 for r in failed)
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert (metrics["n_items"], metrics["n_scored"], metrics["errors"]) == (6, 3, 3)
    assert metrics["accuracy"] == pytest.approx(sum(r["score"] for r in ok) / 3)
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "error: 3 of 6 items failed (model call failed (official): vLLM server unavailable"
    )
    assert last.endswith(
        f"; retry them with: python scripts/run.py {shlex.join(_args(shared_data, tmp_path, server.root_url))}"
    )

    with _server(SERVED, port) as server:  # the server is back
        again = _run(shared_data, tmp_path, server.root_url)
        assert server.completions == 3  # only the three errored items were asked again
    assert again.returncode == 0, again.stderr
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert (metrics["n_items"], metrics["n_scored"], metrics["errors"]) == (6, 6, 0)
    assert metrics["wall_time_total_s"] > metrics["wall_time_s"]


def test_preflight_unreachable_server_is_one_line_exit_2_before_any_item(
    shared_data: Path, tmp_path: Path
) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    proc = _run(shared_data, tmp_path, url)
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: backend unreachable at {url} (ConnectError"), (
        proc.stderr
    )
    assert not (tmp_path / "results.jsonl").exists()


def test_preflight_wrong_served_model_is_one_line_exit_2(shared_data: Path, tmp_path: Path) -> None:
    with _server("some/other-model") as server:
        proc = _run(shared_data, tmp_path, server.root_url)
        assert server.completions == 0
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"error: {server.root_url} serves ['some/other-model'], not '{SERVED}'; set backend.served_model_name "
        f"or start the server with --served-model-name {SERVED}"
    )
