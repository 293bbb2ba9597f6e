from __future__ import annotations

import pytest

from ledgermind.claims import Claim, ClaimType, Stage
from ledgermind.metrics.faithfulness import eur, gdr, oc_err, r4r, rc, rr, se, summarize, ucr_reason, wdg
from ledgermind.tools.base import Observation, Tool, ToolKind
from ledgermind.trajectory import (
    ModelCall,
    OperatorName,
    PathKind,
    RepairEvent,
    RepairLayer,
    Trajectory,
    Trigger,
)
from tests.helpers import EchoOCR, TextImage


class Observe(Tool):
    name, kind = "observe", ToolKind.OBSERVE

    def _run(self, texts=()):
        return [Observation(t) for t in texts]


def traj(grounded_sc=(True, False), grounded_dc=(True,)) -> Trajectory:
    t = Trajectory("q1", "question?", PathKind.FULLPIPE)
    led = t.ledger
    led.record(EchoOCR().invoke(image=TextImage(["Apollo 11", "1969", "unused"])))
    for i, g in enumerate(grounded_sc, 1):
        c = led.add_claim(Claim(f"SC-{i}", ClaimType.SC, "x", Stage.J, ["OC-1"] if i == 1 else ["OC-2"]))
        c.grounded = g
    for i, g in enumerate(grounded_dc, 1):
        c = led.add_claim(Claim(f"DC-{i}", ClaimType.DC, "A", None, ["SC-1"]))
        c.grounded = g
    return t


def test_ucr_gdr():
    t = traj((True, False), (True,))
    assert ucr_reason(t) == pytest.approx(1 / 3) and gdr(t) == 1.0
    t2 = traj((False, False), (False, True))
    assert ucr_reason(t2) == pytest.approx(3 / 4) and gdr(t2) == 0.5


def test_gdr_counts_only_decisions_in_force():
    # A DC replaced by a later decision (DROPPED) is no longer a decision of the trajectory.
    from ledgermind.claims import ClaimStatus

    t = traj((True, True), (False, True))
    t.ledger.claim("DC-1").status = ClaimStatus.DROPPED
    assert gdr(t) == 1.0
    t.ledger.claim("DC-2").status = ClaimStatus.INVALIDATED  # still the answer given, support gone
    t.ledger.claim("DC-2").grounded = False
    assert gdr(t) == 0.0


def test_empty_sets_defined():
    t = Trajectory("q", "?", PathKind.DIRECT)
    assert ucr_reason(t) is None and gdr(t) == 0.0 and eur(t) is None and rr(t) is None and rc(t) == 0.0
    assert se(t, 1.0) == 0.0 and oc_err(t) is None
    assert r4r([], [], 0.5) is None and wdg([0.9], [1.0], 0.5) is None


def test_r4r_wdg():
    gdrs, succ = [1.0, 0.4, 0.9, 0.0], [1.0, 1.0, 0.0, 0.0]
    assert r4r(gdrs, succ, 0.5) == 0.5 and wdg(gdrs, succ, 0.5) == 0.5
    assert r4r(gdrs, succ, 0.95) == 0.5 and wdg(gdrs, succ, 0.95) == 0.0  # γ matters; > is strict
    assert r4r([0.5], [1.0], 0.5) == 0.0


def test_eur_rr_rc_se_ocerr():
    t = traj()
    assert eur(t) == pytest.approx(2 / 3)  # "unused" is cited by nobody
    t.events = [
        RepairEvent(Trigger.T1, OperatorName.RETRY, RepairLayer.ACTION, cost=4.0, grounded_after=True),
        RepairEvent(Trigger.T5, OperatorName.ABSTAIN, RepairLayer.TRAJECTORY, cost=1.0, grounded_after=False),
        RepairEvent(Trigger.T4, None, None, note="budget exhausted"),
    ]
    assert rr(t) == 0.5 and rc(t) == 5.0
    t.model_calls = [ModelCall("decide", 0.1)] * 3
    assert se(t, 1.0) == pytest.approx(1 / (3 + 1))
    [a, b] = t.ledger.record(Observe().invoke(texts=["TEXT: Apollo 11", "TEXT: Apollo 13"]))
    a.meta["tool_agreement"], b.meta["tool_agreement"] = True, False
    assert oc_err(t) == 0.5


def test_summarize_skips_undefined():
    t1, t2 = traj((True, True), (True,)), Trajectory("q2", "?", PathKind.DIRECT)
    s = summarize([t1, t2], [1.0, 0.0], gamma=0.5)
    assert s["UCR_reason"] == 0.0  # t2 has no reasoning claims: undefined, skipped
    assert s["GDR"] == 0.5 and s["R4R"] == 1.0 and s["WDG"] == 0.0 and s["n"] == 2
    with pytest.raises(ValueError):
        summarize([t1], [], 0.5)
