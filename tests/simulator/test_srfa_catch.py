"""The S-RFA ledger-mode audit measured against the simulator's injected faults.

Unit tests pin the matching rules on hand-made records; the end-to-end test runs the real agent
with the simulated backbone on real MMMU-Pro items (every reasoning reply injects a phantom),
audits the run with ``scripts/srfa.py`` as a user would, and checks the catch rate it reports.
"""

from __future__ import annotations

import json

import pytest

from ledgermind.cli.srfa import main as srfa_main
from ledgermind.simulator.srfa_catch import catch_summary, item_catch
from ledgermind.srfa.protocol import AtomicClaim, SrfaRecord
from ledgermind.trajectory import ModelCall, PathKind, Trajectory
from tests.experiment.conftest import run_script


def traj(*faults: dict) -> Trajectory:
    t = Trajectory("q", "Q?", PathKind.BASELINE)
    t.model_calls.append(
        ModelCall(
            stage="x", latency_s=0.0, meta={"simulator": {"task": "native_cot", "faults": list(faults)}}
        )
    )
    return t


def audit(*claims: tuple[str, str, bool]) -> SrfaRecord:
    return SrfaRecord("q", "ledger", claims=[AtomicClaim(t, text, g) for t, text, g in claims], score=1.0)


def test_phantom_claims_are_matched_by_entity_and_counted_caught_when_ungrounded() -> None:
    t = traj(
        {"kind": "phantom", "entity": "Harold Finnegan", "answer": "C"},
        {"kind": "phantom", "entity": "the Oberlin Survey", "answer": "A"},
    )
    a = audit(
        ("SC", "The plaque reads Apollo 11", True),
        ("SC", "As harold finnegan established, C fits", False),
        ("DC", "Answer: C", True),
    )
    c = item_catch(a, t)
    assert (
        c["phantom_injected"],
        c["phantom_claims"],
        c["phantom_ungrounded"],
        c["phantom_not_in_trace"],
    ) == (2, 1, 1, 1)
    assert c["fault_free_claims"] == 0  # an item with injected faults has no fault-free claims


def test_fault_free_claims_come_from_items_without_any_injected_fault() -> None:
    a = audit(
        ("SC", "The plaque reads Apollo 11", True), ("SC", "It is a mission plaque", False), ("DC", "B", True)
    )
    c = item_catch(a, traj())
    assert (
        c["fault_free_claims"],
        c["fault_free_grounded"],
        c["fault_free_sc"],
        c["fault_free_dc_grounded"],
    ) == (3, 2, 2, 1)
    s = catch_summary(
        [
            (a, traj()),
            (
                audit(("SC", "Per Harold Finnegan, A", True)),
                traj({"kind": "phantom", "entity": "Harold Finnegan"}),
            ),
        ]
    )
    assert (
        s is not None
        and s["phantom_catch_rate"] == 0.0
        and s["fault_free_grounded_rate"] == pytest.approx(2 / 3)
    )


def test_runs_without_simulator_metadata_have_no_catch_summary() -> None:
    t = Trajectory("q", "Q?", PathKind.BASELINE)
    t.model_calls.append(ModelCall(stage="x", latency_s=0.0))
    assert catch_summary([(audit(("DC", "B", True)), t)]) is None


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["baseline", "full"])
def test_srfa_of_a_simulated_run_reports_its_phantom_catch_rate(
    variant, tmp_path, shared_data, capsys
) -> None:
    run_dir = tmp_path / variant
    proc = run_script(
        "run.py",
        "backend=simulated",
        "backend.banner=false",
        "backend.phantom_rate=1.0",
        "benchmark=mmmu_pro_standard10",
        "limit=3",
        f"+ablation={variant}",
        "logger=none",
        "cache.mode=off",
        "progress=false",
        f"hydra.run.dir={run_dir}",
        timeout=600,
        LEDGERMIND_SHARED_DATA=str(shared_data),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    rc = srfa_main([str(run_dir), "logger=none"])
    assert rc == 0
    sim = json.loads((run_dir / "srfa_metrics.json").read_text())["simulator"]
    assert sim["items"] == 3 and sim["phantom_injected"] >= 3
    assert sim["phantom_claims"] >= 1 and sim["phantom_catch_rate"] >= 0.8, sim
    assert "[simulator] phantom claims" in capsys.readouterr().out
