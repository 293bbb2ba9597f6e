"""The real pipeline end to end: tiny random Qwen2-VL via transformers, real OCR/NER, real MMMU-Pro items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledgermind.trajectory import Trajectory


@pytest.mark.slow
@pytest.mark.hf
def test_tiny_model_on_mmmu_pro_subset(run_py, tmp_path: Path, shared_data: Path) -> None:
    out = tmp_path / "run"
    proc = run_py(
        "benchmark=mmmu_pro_standard10", f"benchmark.path={shared_data / 'mmmu_pro_subset'}", "limit=2",
        "concurrency=2", "logger=none", "progress=false", f"hydra.run.dir={out}", timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "tiny RANDOM-weight model" in proc.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n_items"] == 2 and metrics["identity"]["benchmark"] == "mmmu_pro/standard10"
    assert metrics["identity"]["backend"] == "TransformersBackend"
    assert metrics["model_calls_per_item"] >= 1
    assert set(metrics["trajectory_metrics"]) >= {"UCR_reason", "GDR", "R4R", "WDG", "OCErr", "EUR", "RR", "RC", "SE"}
    for line in (out / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        assert row["gold"] in "ABCDEFGHIJ" and row["difficulty"] in ("Easy", "Medium", "Hard")
        traj = Trajectory.from_dict(json.loads((out / "trajectories" / f"{row['id']}.json").read_text()))
        assert traj.item_id == row["id"] and traj.n_model_calls == row["model_calls"]
