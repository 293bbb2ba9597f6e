"""The backend's edge as a user meets it: ``scripts/run.py`` against a real HTTP server on 127.0.0.1.

A cached reply answers only the configuration that produced it, a stored row only the request it
was stored for, and a server that answers nothing usable (an empty reply, a trickle, a refusal
with ``Retry-After``, a runaway body) gives an error with its cause — never a wrong answer, never a
cached one. Runs ``pipeline=official`` (one model call per item) over real MMMU-Pro subset items.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ledgermind.testing.fake_openai_server import (
    FakeOpenAIServer,
    Misbehaviour,
    first_option_answer,
    prompt_text,
)
from tests.experiment.conftest import run_script

SERVED = "Qwen/Qwen2.5-VL-7B-Instruct"  # model=qwen2_5_vl_7b's hub id: vLLM's default served name


def _args(shared: Path, url: str, *extra: str) -> list[str]:
    return [
        "pipeline=official",
        f"pipeline.prompts_path={shared / 'mmmu_pro_official' / 'prompts.yaml'}",
        "benchmark=mmmu_pro_standard10",
        f"benchmark.path={shared / 'mmmu_pro_subset'}",
        "model=qwen2_5_vl_7b",
        "backend=vllm_server",
        f"backend.base_urls=[{url}/v1]",
        "concurrency=1",
        "logger=none",
        "progress=false",
        *extra,
    ]


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def _by_prompt(body: dict) -> str:
    """A reply that depends on the request, so that two items' replies differ."""
    return f"Answer: {'ABCD'[len(prompt_text(body)) % 4]}"


def test_a_dtype_sweep_asks_the_model_once_per_dtype(shared_data: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer(0.0, SERVED, reply=first_option_answer, strict_model=True) as server:
        sweep = ("-m", "model.dtype=float32,bfloat16", "limit=2", f"hydra.sweep.dir={tmp_path}")
        proc = run_script("run.py", *_args(shared_data, server.root_url, *sweep))
        assert proc.returncode == 0, proc.stderr
        assert server.completions == 4  # 2 items x 2 dtypes: the bfloat16 job is not the float32 job's replay
    for dtype in ("float32", "bfloat16"):
        metrics = json.loads((tmp_path / f"model.dtype={dtype}" / "metrics.json").read_text())
        assert metrics["mechanisms"]["cache"] == {"hits": 0, "shared": 0} and metrics["errors"] == 0


def test_a_model_served_under_another_name_misses_the_cache(shared_data: Path, tmp_path: Path) -> None:
    """A LoRA adapter is served beside its base model under its own name: its run must ask it."""
    cache = f"cache.path={tmp_path / 'responses.sqlite'}"
    with FakeOpenAIServer(0.0, SERVED, reply=first_option_answer, strict_model=True) as base:
        first = run_script(
            "run.py",
            *_args(shared_data, base.root_url, "limit=3", cache, f"hydra.run.dir={tmp_path / 'base'}"),
        )
    assert first.returncode == 0, first.stderr
    with FakeOpenAIServer(0.0, "chart-lora", reply=lambda body: "Answer: B", strict_model=True) as lora:
        run = ("limit=3", cache, "backend.served_model_name=chart-lora", f"hydra.run.dir={tmp_path / 'lora'}")
        second = run_script("run.py", *_args(shared_data, lora.root_url, *run))
        assert second.returncode == 0, second.stderr
        assert lora.completions == 3
    assert [r["prediction"] for r in _rows(tmp_path / "lora")] == ["B"] * 3
    assert [r["prediction"] for r in _rows(tmp_path / "base")] == ["A"] * 3


def test_a_swapped_cache_row_is_a_miss_in_replay_never_another_items_answer(
    shared_data: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "responses.sqlite"
    with FakeOpenAIServer(0.0, SERVED, reply=_by_prompt, strict_model=True) as server:
        rec = run_script(
            "run.py",
            *_args(
                shared_data,
                server.root_url,
                "limit=4",
                f"cache.path={cache}",
                f"hydra.run.dir={tmp_path / 'rec'}",
            ),
        )
    assert rec.returncode == 0, rec.stderr
    recorded = {r["id"]: r["prediction"] for r in _rows(tmp_path / "rec")}
    with sqlite3.connect(cache) as db:
        rows = db.execute("SELECT key, reply FROM replies").fetchall()
        one = rows[0]
        two = next(r for r in rows if json.loads(r[1])["text"] != json.loads(one[1])["text"])
        db.executemany("UPDATE replies SET reply = ? WHERE key = ?", [(two[1], one[0]), (one[1], two[0])])
    replay = ("limit=4", "cache.mode=replay", f"cache.path={cache}", f"hydra.run.dir={tmp_path / 'replay'}")
    proc = run_script("run.py", *_args(shared_data, "http://127.0.0.1:9", *replay))  # no server: replay only
    assert proc.returncode == 3, proc.stderr
    rows = _rows(tmp_path / "replay")
    failed = [r for r in rows if r["error"]]
    assert len(failed) == 2 and all("replay mode: no recorded reply" in r["error"] for r in failed)
    assert all(r["prediction"] == recorded[r["id"]] for r in rows if not r["error"])
    warning = f"response cache {cache}: the reply stored under"
    assert proc.stdout.count(warning) == 1, proc.stdout  # the log (stdout and run.log), once per run


def test_an_empty_reply_is_an_error_never_cached_and_a_rerun_asks_again(
    shared_data: Path, tmp_path: Path
) -> None:
    run = ("limit=3", f"hydra.run.dir={tmp_path}")
    with FakeOpenAIServer(
        0.0, SERVED, reply=first_option_answer, misbehave=Misbehaviour(null_replies=2)
    ) as server:
        first = run_script("run.py", *_args(shared_data, server.root_url, *run))
        assert first.returncode == 3, first.stderr
        errors = [r["error"] for r in _rows(tmp_path) if r["error"]]
        assert len(errors) == 2 and all("sent an empty reply (content None" in e for e in errors)
        stored = (
            sqlite3.connect(tmp_path / "responses.sqlite").execute("SELECT COUNT(*) FROM replies").fetchone()
        )
        assert stored == (1,)  # the one healthy reply
        again = run_script("run.py", *_args(shared_data, server.root_url, *run))  # the server is healthy now
        assert again.returncode == 0, again.stderr
        assert server.completions == 5  # 3, then the 2 empty ones asked again
    latest = {r["id"]: r for r in _rows(tmp_path)}.values()  # a resumed item's row is appended
    assert [(r["error"], r["prediction"]) for r in latest] == [(None, "A")] * 3
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert (metrics["n_items"], metrics["n_scored"], metrics["errors"]) == (3, 3, 0)


def test_a_trickling_server_is_stopped_at_the_deadline(shared_data: Path, tmp_path: Path) -> None:
    """One byte every 0.5 s: every read makes progress, so only a total deadline ends the request."""
    with FakeOpenAIServer(0.0, SERVED, misbehave=Misbehaviour(trickle_s=0.5)) as server:
        extra = ("limit=1", "backend.timeout_s=1.5", "backend.max_retries=0", f"hydra.run.dir={tmp_path}")
        proc = run_script("run.py", *_args(shared_data, server.root_url, *extra), timeout=60)
    assert proc.returncode == 3, proc.stderr
    [row] = _rows(tmp_path)
    assert "no complete reply within backend.timeout_s=1.5 s" in row["error"]
    # the summary's cause (the error's first clause) says the server was slow, not that it was down
    causes = json.loads((tmp_path / "metrics.json").read_text())["error_causes"]
    assert list(causes) == [
        "model call failed (official): vLLM server gave no complete reply in time after 1 attempts"
    ]


def test_retry_after_of_a_busy_server_is_honoured(shared_data: Path, tmp_path: Path) -> None:
    busy = Misbehaviour(busy=2, retry_after="1")
    with FakeOpenAIServer(0.0, SERVED, reply=first_option_answer, misbehave=busy) as server:
        extra = (
            "limit=1",
            "backend.backoff_base_s=0.01",
            "backend.max_retries=3",
            f"hydra.run.dir={tmp_path}",
        )
        proc = run_script("run.py", *_args(shared_data, server.root_url, *extra))
        arrivals = list(server.arrivals)
    assert proc.returncode == 0, proc.stderr
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
    assert len(arrivals) == 3 and all(0.95 <= g < 10 for g in gaps), gaps  # the server's clock, not ours


def test_a_runaway_reply_is_an_error_naming_the_cap(shared_data: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer(0.0, SERVED, reply=lambda body: "Answer: A " + "x" * 50_000) as server:
        extra = ("limit=1", "backend.max_reply_bytes=20000", f"hydra.run.dir={tmp_path}")
        proc = run_script("run.py", *_args(shared_data, server.root_url, *extra))
    assert proc.returncode == 3, proc.stderr
    [row] = _rows(tmp_path)
    assert "sent a reply larger than backend.max_reply_bytes=20000 bytes" in row["error"]
    assert sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file()) < 200_000
