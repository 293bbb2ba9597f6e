"""The null test runs replicated simulated Table 3s through the real run path and counts verdicts."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from ledgermind.experiment import table3
from ledgermind.simulator.null_test import NULL_WORLD, add_census, collect, null_test
from tests.experiment.conftest import run_script


@pytest.mark.slow
def test_tiny_null_grid_builds_one_table_per_replicate_and_counts_its_verdicts(tmp_path: Path) -> None:
    vis = f"backend.vision_cache_dir={tmp_path / 'vision'}"
    report = null_test(
        tmp_path / "out",
        coupling=0.0,
        replicates=2,
        benchmarks={"sample": 3},
        variants=("full", "no_ecc"),
        overrides=(vis,),
    )
    assert report.tables == 2 and list(report.deltas) == ["no_ecc"] and len(report.deltas["no_ecc"]) == 2
    # the counts are the verdicts of the very tables Table 3 builds from those runs
    for seed in range(2):
        runs = [
            table3.load_run(d)
            for d in sorted((tmp_path / "out" / "coupling-0" / "sample" / f"seed{seed}").iterdir())
        ]
        (row,) = [r for r in table3.build_rows(runs) if r.variant == "no_ecc"]
        assert report.deltas["no_ecc"][seed] == row.delta
    assert report.any_holm <= report.any_raw <= report.tables
    md = report.to_markdown()
    assert md.startswith("SIMULATED BACKBONE null test: fault_coupling=0") and "| no_ecc |" in md
    cfg = (
        tmp_path / "out" / "coupling-0" / "sample" / "seed1" / "no_ecc" / ".hydra" / "config.yaml"
    ).read_text()
    assert (
        "fault_coupling: 0.0" in cfg and "evidence_pull: 0" in cfg and "seed: 1" in cfg
    )  # the null world, seed = replicate
    again = collect(tmp_path / "out", coupling=0.0, replicates=2, benchmarks={"sample": 3})
    assert again.deltas == report.deltas  # read back from the runs' own records
    assert len(NULL_WORLD) == 4
    # the census travels with the report: injected faults per variant, summed from the runs' own records
    injected = sum(
        table3.load_run(tmp_path / "out" / "coupling-0" / "sample" / f"seed{s}" / "full").mechanisms[
            "simulator"
        ]["injected"]["phantom"]
        for s in range(2)
    )
    assert report.census["full"]["phantom injected"] == injected
    decided = report.census["full"].get("ecc_failed n", 0) + report.census["full"].get("ecc_passed n", 0)
    assert decided == 6  # every (item, replicate) of full, split by whether its decision failed ECC
    assert "Mechanism census" in md and report.control_deltas == {}  # no control at coupling 0
    # coupling 1 beside it: full against full at coupling 0 is the planted-effect control
    coupled = null_test(
        tmp_path / "out",
        coupling=1.0,
        replicates=2,
        benchmarks={"sample": 3},
        variants=("full", "no_ecc"),
        overrides=(vis,),
    )
    assert set(coupled.control_deltas) == {"full", "no_ecc"} and len(coupled.control_deltas["full"]) == 2
    assert 0 <= coupled.control_detected["full"] <= 2
    assert "Planted-effect control" in coupled.to_markdown()


def test_census_sums_every_kind_and_harm() -> None:
    into: Counter[str] = Counter()
    add_census(
        into,
        {
            "injected": {"phantom": 3},
            "flagged": {"phantom": 2},
            "neutralised": {"phantom": 1},
            "harmed": {"good_reading_superseded": 1},
        },
    )
    add_census(
        into,
        {
            "injected": {"phantom": 1, "misread": 4},
            "independence": {"ecc_failed n": 2, "ecc_failed right": 1},
        },
    )
    assert into["ecc_failed n"] == 2 and into["ecc_failed right"] == 1
    assert into["phantom injected"] == 4 and into["phantom flagged"] == 2 and into["misread injected"] == 4
    assert into["good_reading_superseded"] == 1 and into["relation reached"] == 0


def test_bad_arguments_are_one_line() -> None:
    proc = run_script("sim_null.py", "--replicates", "0")
    assert proc.returncode == 2 and proc.stderr.startswith("error: need --replicates >= 1")
