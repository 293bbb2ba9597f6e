"""The output digest (``ledgermind/devtools/output_digest.py``) --without-cache: the per-run and sweep-shared cache give one digest."""

from __future__ import annotations

import json
from pathlib import Path

from ledgermind.devtools import output_digest
from ledgermind.runs.trajectories import trajectory_path


def _run(root: Path, cached: bool, answer: str = "A") -> Path:
    run = root / "ablation=no_ecc"
    (run / "trajectories").mkdir(parents=True)
    call = {
        "stage": "plan",
        "request_key": "k1",
        "cached": cached,
        "latency_s": 0.3,
        "meta": {"cache": "shared"} if cached else {},
    }
    trajectory_path(run, "q1").write_text(
        json.dumps(
            {
                "item_id": "q1",
                "answer": answer,
                "model_calls": [call],
                "mechanisms": {"cache": {"hits": int(cached)}},
            }
        )
    )
    metrics = {
        "accuracy": 1.0,
        "mechanisms": {"cache": {"hits": int(cached), "shared": int(cached)}, "t5": {"n": 1}},
    }
    (run / "metrics.json").write_text(json.dumps(metrics))
    return root


def test_cache_markers_are_the_only_thing_without_cache_drops(tmp_path):
    mod = output_digest
    per_run, shared = _run(tmp_path / "run", cached=False), _run(tmp_path / "sweep", cached=True)
    assert list(mod.digest(per_run)) != list(mod.digest(shared))
    assert list(mod.digest(per_run, cache_markers=False)) == list(mod.digest(shared, cache_markers=False))
    other = _run(tmp_path / "other", cached=True, answer="B")
    assert list(mod.digest(other, cache_markers=False)) != list(mod.digest(shared, cache_markers=False))
    assert '"t5": {"n": 1}' in "\n".join(
        mod.digest(shared, cache_markers=False)
    )  # other census sections stay
