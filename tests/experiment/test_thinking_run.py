"""A thinking model end to end: ``model=qwen3_vl_8b_thinking`` under the official MMMU-Pro protocol,
with scripted replies whose think block argues for another letter than the final answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledgermind.runs.trajectories import trajectory_path
from tests.experiment.conftest import run_script

# the chat template opened <think>: the reply carries only the closing tag (opened_by_template)
REPLY = "Option A looked right, but the figure clearly shows C.</think> Answer: B"


@pytest.mark.slow
def test_thinking_model_run_scores_the_answer_not_the_reasoning(tmp_path: Path, shared_data: Path) -> None:
    out = tmp_path / "run"
    proc = run_script(
        "run.py",
        "model=qwen3_vl_8b_thinking",
        "backend=scripted",
        "backend.allow_scripted=true",
        f"backend.rules=[{{pattern:'multiple choice question',reply:'{REPLY}'}}]",
        "pipeline=official",
        "benchmark=mmmu_pro_standard10",
        f"benchmark.path={shared_data / 'mmmu_pro_subset'}",
        "limit=3",
        "logger=none",
        "progress=false",
        f"hydra.run.dir={out}",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 3 and {r["prediction"] for r in rows} == {"B"}  # never the C of the reasoning
    assert all(r["score"] == float(r["gold"] == "B") and not r["truncated"] for r in rows)
    assert all(r["images_sent"] >= 1 and r["image_pixels"] > 0 for r in rows)
    call = json.loads(trajectory_path(out, rows[0]["id"]).read_text())["model_calls"][0]
    assert (
        call["reasoning"] == "Option A looked right, but the figure clearly shows C."
        and call["reply"] == "Answer: B"
    )
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["truncated"] == 0 and metrics["identity"]["decoding"]["reasoning"]["budget_tokens"] == 8192
    assert metrics["identity"]["prompts"]["choice.pipeline.prompt"] == "cot"
