"""The fault-rate sweep: real runs of the simulated backbone (bundled sample set, 2 items), read back
from what each run recorded, with Δ paired against the runs' own results."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ledgermind.metrics.stats import BootstrapConfig
from ledgermind.runs.reader import RunDir
from ledgermind.simulator import sim_sweep

BOOT = BootstrapConfig(resamples=500, seed=0)


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> tuple[sim_sweep.SweepSpec, Path, list, sim_sweep.SweepOutputs]:
    out = tmp_path_factory.mktemp("sweep")
    cache = tmp_path_factory.mktemp("sweep_cache")
    spec = sim_sweep.spec_for(
        "phantom_rate",
        [0.0, 0.4],
        benchmark="sample",
        limit=2,
        overrides=(f"backend.vision_cache_dir={cache / 'vision'}",),
    )
    points, outs = sim_sweep.sweep(spec, out, BOOT)
    return spec, out, points, outs


def test_each_grid_value_runs_full_and_its_ablation_with_that_rate(swept) -> None:
    spec, out, points, outs = swept
    assert spec.variants == ("full", "no_ecc")
    assert [p.value for p in points] == [0.0, 0.4]
    runs = sorted(out.rglob("metrics.json"))
    assert len(runs) == 4
    seen = set()
    for m in runs:
        metrics = json.loads(m.read_text())
        ident = metrics["identity"]
        assert ident["backend"] == "SimulatedBackend" and metrics["n_items"] == 2 and metrics["errors"] == 0
        seen.add((sim_sweep.rate_value(m.parent, "phantom_rate"), ident["variant"], ident["seed"]))
    assert seen == {(v, var, 0) for v in (0.0, 0.4) for var in ("full", "no_ecc")}
    md = outs.markdown.read_text()
    assert md.splitlines()[0].startswith(
        "| phantom_rate | full acc. | no_ecc acc. | Δ no_ecc − full | Δ vs 0 |"
    )
    assert "SIMULATED BACKBONE" in md and outs.chart.read_bytes()[:4] == b"\x89PNG"


def test_delta_is_the_paired_difference_of_the_recorded_results(swept) -> None:
    spec, out, points, _ = swept
    for p in points:
        scores = {}
        for m in out.rglob("metrics.json"):
            if sim_sweep.rate_value(m.parent, spec.rate) == p.value:
                variant = json.loads(m.read_text())["identity"]["variant"]
                scores[variant] = {r.id: r.score for r in RunDir(m.parent).results()}
        diffs = [scores["no_ecc"][i] - scores["full"][i] for i in scores["full"]]
        assert p.delta.mean == pytest.approx(100 * sum(diffs) / len(diffs))
        assert p.full.mean == pytest.approx(100 * sum(scores["full"].values()) / 2)
        assert p.delta.low <= p.delta.mean <= p.delta.high


def test_read_back_trusts_the_runs_not_their_directory_names(swept, tmp_path: Path) -> None:
    spec, out, points, _ = swept
    # swap the two rate directories' names: the points must not move
    moved = tmp_path / "moved"
    shutil.copytree(out / "phantom_rate-0", moved / "phantom_rate-0.4")
    shutil.copytree(out / "phantom_rate-0.4", moved / "phantom_rate-0")
    again = sim_sweep.collect([moved], spec, BOOT)
    assert [(p.value, p.full.mean, p.delta.mean) for p in again] == [
        (p.value, p.full.mean, p.delta.mean) for p in points
    ]


def test_catch_rate_sums_injected_and_neutralised_over_seeds_and_places() -> None:
    flat = {"simulator": {"injected": {"phantom": 6, "misread": 1}, "neutralised": {"phantom": 3}}}
    per_place = {
        "simulator": {
            "injected": {"phantom": {"FULLPIPE/decide": 2, "DIRECT/direct": 2}},
            "neutralised": {"phantom": {"FULLPIPE/decide": 1, "DIRECT/direct": 0}},
        }
    }
    assert sim_sweep.fault_counts(flat, "phantom") == (6, 3)
    assert sim_sweep.fault_counts(per_place, "phantom") == (4, 1)
    assert sim_sweep.fault_counts({}, "phantom") == (0, 0)


def test_bad_requests_are_one_line_errors() -> None:
    with pytest.raises(sim_sweep.SweepError, match="no ablation is mapped to 'empty_rate'"):
        sim_sweep.spec_for("empty_rate", [0.1])
    with pytest.raises(sim_sweep.SweepError, match=r"must lie in \[0, 1\]"):
        sim_sweep.spec_for("phantom_rate", [0.1, 1.5])
    spec = sim_sweep.spec_for("no_such_rate", [0.1], ablation="no_ecc", benchmark="sample")
    with pytest.raises(sim_sweep.SweepError, match="has no 'no_such_rate'"):
        sim_sweep.check_rate(spec)
    with pytest.raises(sim_sweep.SweepError, match="cannot compose the run config"):
        sim_sweep.check_rate(sim_sweep.spec_for("phantom_rate", [0.1], benchmark="no_such_benchmark"))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--rate", "empty_rate", "--grid", "0.1"], "error: no ablation is mapped to 'empty_rate'"),
        (
            ["--rate", "no_such_rate", "--grid", "0.1", "--ablation", "no_ecc"],
            "error: backend=simulated has no",
        ),
        (
            ["--rate", "phantom_rate", "--grid", "0.1", "--", "benchmark=nope"],
            "error: cannot compose the run config",
        ),
    ],
)
def test_cli_mistakes_are_one_line_exit_2(args: list[str], expected: str, tmp_path: Path) -> None:
    from tests.experiment.conftest import run_script

    proc = run_script("sim_sweep.py", "--out", str(tmp_path), *args)
    assert proc.returncode == 2 and proc.stderr.strip().startswith(expected), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not list(tmp_path.iterdir())
