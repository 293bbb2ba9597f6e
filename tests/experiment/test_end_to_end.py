"""The real pipeline end to end: tiny random Qwen2-VL via transformers, real OCR/NER, real MMMU-Pro items.

The random model never ends a reply before its budget, so a run's time is its tokens: each run
answers in 48 (``TINY_BUDGET``, as tests/pipeline/test_real_stack.py does), not the pipeline's 512.
Every stage still parses a cut reply of random tokens, as at 512."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledgermind.metrics.census import census, sum_census
from ledgermind.runs.trajectories import trajectory_path
from ledgermind.trajectory import Trajectory

TINY_BUDGET = "pipeline.max_tokens=48"


@pytest.mark.slow
@pytest.mark.hf
def test_tiny_model_on_mmmu_pro_subset(run_py, tmp_path: Path, shared_data: Path) -> None:
    out = tmp_path / "run"
    proc = run_py(
        "benchmark=mmmu_pro_standard10",
        f"benchmark.path={shared_data / 'mmmu_pro_subset'}",
        "limit=4",
        "concurrency=2",
        TINY_BUDGET,
        "logger=none",
        "progress=false",
        f"hydra.run.dir={out}",
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "tiny RANDOM-weight model" in proc.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n_items"] == 4 and metrics["identity"]["benchmark"] == "mmmu_pro/standard10"
    assert metrics["identity"]["backend"] == "TransformersBackend"
    assert metrics["model_calls_per_item"] >= 1
    assert set(metrics["trajectory_metrics"]) >= {
        "UCR_reason",
        "GDR",
        "R4R",
        "WDG",
        "OCErr",
        "EUR",
        "RR",
        "RC",
        "SE",
    }
    per_item = []
    for line in (out / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        assert row["gold"] in "ABCDEFGHIJ" and row["difficulty"] in ("Easy", "Medium", "Hard")
        record = json.loads(trajectory_path(out, row["id"]).read_text())
        traj = Trajectory.from_dict(record)
        assert traj.item_id == row["id"] and traj.n_model_calls == row["model_calls"]
        assert (
            record["mechanisms"] == census(traj) and record["mechanisms"]["model_calls"] == row["model_calls"]
        )
        per_item.append(record["mechanisms"])
    mech = metrics["mechanisms"]
    assert mech == sum_census(per_item) and sum(mech["paths"].values()) == 4
    assert mech["operator_failures"] == 0 and mech["dual_read"]["identical_requests"] == 0
    assert 0.0 <= metrics["abstention_rate"] <= 1.0
    # the run's last lines say what ran, what fired (with the legend) and what to do next
    summary = proc.stdout.strip().splitlines()[-5:]
    assert summary[0].startswith("full on mmmu_pro/standard10 with tiny_qwen2_vl, seed 0: accuracy ")
    assert summary[1].startswith(f"census: paths {'DIRECT' if mech['paths']['DIRECT'] else 'FULLPIPE'} ")
    assert summary[2].startswith(
        "  (paths: which pipeline answered; triggers: the verifier's events (T1 tool"
    )
    assert summary[3:] == [f"output: {out}", f"next: ledgermind report {out}  ·  ledgermind ls"]


@pytest.mark.slow
@pytest.mark.vllm
def test_tiny_model_through_real_vllm_server(run_py, tmp_path: Path, shared_data: Path, vllm_server) -> None:
    out = tmp_path / "run"
    proc = run_py(
        "benchmark=mmmu_pro_standard10",
        f"benchmark.path={shared_data / 'mmmu_pro_subset'}",
        "limit=4",
        "backend=vllm_server",
        f"backend.base_urls=[{vllm_server.base_url}]",
        f"+backend.served_model_name={vllm_server.model}",
        "concurrency=4",
        TINY_BUDGET,
        "logger=none",
        "progress=false",
        f"hydra.run.dir={out}",
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n_items"] == 4 and metrics["identity"]["backend"] == "VLLMServerBackend"
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(r["error"] is None for r in rows)
    traj = json.loads(trajectory_path(out, rows[0]["id"]).read_text())
    assert {c["backend"] for c in traj["model_calls"]} == {"vllm_server"}


@pytest.mark.slow
@pytest.mark.hf
def test_corrupt_image_inside_dataset_is_recorded_and_run_completes(
    run_py, tmp_path: Path, shared_data: Path
) -> None:
    """A test-local copy of 2 items (outside the repo), one with its image replaced by garbage bytes:
    the run completes, and that item is an error (exit 3), not a wrong answer."""
    src = shared_data / "mmmu_pro_subset"
    data = tmp_path / "data"
    (data / "images").mkdir(parents=True)
    lines = (src / "items.jsonl").read_text().splitlines()[:2]
    for i, line in enumerate(lines):
        for name in json.loads(line)["images"]:
            target = data / "images" / name
            if i == 0:
                target.write_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 50)  # truncated / corrupt PNG
            else:
                target.write_bytes((src / "images" / name).read_bytes())
    (data / "items.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "run"
    proc = run_py(
        "benchmark=mmmu_pro_standard10",
        f"benchmark.path={data}",
        TINY_BUDGET,
        "logger=none",
        "progress=false",
        f"hydra.run.dir={out}",
        timeout=600,
    )
    assert proc.returncode == 3, proc.stderr[-3000:]
    assert proc.stderr.strip().splitlines()[-1].startswith("error: 1 of 2 items failed (")
    rows = {json.loads(x)["id"]: json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()}
    assert len(rows) == 2
    bad_id = json.loads(lines[0])["id"]
    assert rows[bad_id]["error"].startswith("image failed (ocr): CorruptImageError: cannot open image")
    assert rows[bad_id]["score"] == 0.0
    bad = json.loads(trajectory_path(out, bad_id).read_text())
    ocr_errors = [o for o in bad["ledger"]["tool_outputs"] if o["tool"] == "ocr" and o["error"]]
    assert ocr_errors and "image" in ocr_errors[0]["error"].lower()  # a clear tool anomaly (T1), not a crash
    assert ocr_errors[0]["failure"] == "data"  # the input's failure: an item error, not an evidence gap
    assert any(e["trigger"] == "T1_TOOL_ANOMALY" for e in bad["events"]) or rows[bad_id]["error"]
    assert rows[json.loads(lines[1])["id"]]["error"] is None
