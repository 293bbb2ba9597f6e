"""Faults injected by the simulator reach the trajectory, and the census sees what caught them.

The real agent (FULLPIPE, real spaCy NER for ECC) on a simulated model that invents an entity in
most of its replies: under the full method ECC flags claims naming it; with ECC/NCC off nothing does.
"""

from __future__ import annotations

import asyncio

import pytest

from ledgermind.grounding import GroundingCascade
from ledgermind.metrics.census import census
from ledgermind.pipeline import AblationFlags, LedgerMindAgent, PipelineConfig
from ledgermind.pipeline.agent import grounding_config
from tests.pipeline.conftest import FixedCrop, FixedOCR


def run(make_backend, key_items, ner, flags: AblationFlags, phantom_rate: float = 0.8):
    sim = make_backend(
        seed=1, phantom_rate=phantom_rate, relation_rate=0.0, format_error_rate=0.0, empty_rate=0.0
    )
    cfg = PipelineConfig()
    tools = {"ocr": FixedOCR([("Apollo 11 Plaque", [0, 0, 60, 12], 0.99)]), "crop_zoom": FixedCrop()}
    agent = LedgerMindAgent(sim, tools, GroundingCascade(grounding_config(cfg, flags), ner=ner), cfg, flags)
    return asyncio.run(agent.solve(key_items[0]))


def test_phantom_reaches_the_trajectory_and_ecc_catches_it(make_backend, key_items, ner):
    traj = run(make_backend, key_items, ner, AblationFlags(dispatcher=False))
    faults = [f for c in traj.model_calls for f in c.meta.get("simulator", {}).get("faults", [])]
    assert any(f["kind"] == "phantom" for f in faults)
    sim = census(traj)["simulator"]
    assert sim["injected"]["phantom"] >= 1 and sim["flagged"]["phantom"] >= 1
    restored = type(traj).from_dict(traj.to_dict())  # the record on disk keeps the meta
    assert census(restored)["simulator"] == sim


def test_without_ecc_the_phantom_is_not_caught(make_backend, key_items, ner):
    traj = run(make_backend, key_items, ner, AblationFlags(dispatcher=False, ecc_ncc=False))
    sim = census(traj)["simulator"]
    assert (
        sim["injected"]["phantom"] >= 1
        and sim["flagged"]["phantom"] == 0
        and sim["neutralised"]["phantom"] == 0
    )


@pytest.mark.parametrize(
    "flags", [AblationFlags(use_ledger=False), AblationFlags(baseline=True)], ids=["no_ledger", "baseline"]
)
def test_a_verdict_no_mechanism_acts_on_is_no_flag(make_backend, key_items, ner, flags):
    """The baselines' and no_ledger's decision is grounded post hoc for the audit (ECC on,
    nothing acts on it). Its verdict says ``audit_only`` and the census counts no flag, although the
    same phantoms are injected and ECC does fail on them."""
    traj = run(make_backend, key_items, ner, flags, phantom_rate=1.0)
    sim = census(traj)["simulator"]
    dcs = [c for c in traj.ledger.claims() if c.grounding and c.ctype.value == "DC"]
    assert dcs and all(c.grounding.get("audit_only") is True for c in dcs)
    assert (
        sim["injected"]["phantom"] >= 1
        and sim["flagged"]["phantom"] == 0
        and sim["neutralised"]["phantom"] == 0
    )
