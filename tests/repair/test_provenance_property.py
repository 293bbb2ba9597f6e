"""Proposition 1 (provenance non-amplification), checked on random ledgers and trigger sequences
applied by the item's executor (the one writer of tool output into the ledger)."""

from __future__ import annotations

import asyncio
import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledgermind.claims import Claim, ClaimType
from ledgermind.errors import ProvenanceError
from ledgermind.ledger import Ledger, map_output
from ledgermind.repair import AcquireSpec, TriggerHit
from ledgermind.tools.base import ToolOutput
from ledgermind.trajectory import Trigger
from tests.helpers import EchoOCR, EchoSearch, EchoVQA, FailingTool, TextImage

TOOLS = [EchoOCR(), EchoSearch(), EchoVQA(), FailingTool()]

facts = st.text(alphabet="abcdefgh0123456789 .", min_size=1, max_size=12)
boxes = st.tuples(*[st.integers(0, 200)] * 4).map(
    lambda t: [min(t[0], t[2]), min(t[1], t[3]), max(t[0], t[2]), max(t[1], t[3])]
)
tool_call = st.one_of(
    st.builds(
        lambda ls, b, s: ("echo_ocr", {"image": TextImage(ls, bbox=b, score=s)}),
        st.lists(facts, max_size=3),
        boxes,
        st.floats(0, 1),
    ),
    st.builds(
        lambda ls, r: ("echo_ocr", {"image": TextImage(ls), "region": r}), st.lists(facts, max_size=3), boxes
    ),
    st.builds(lambda q: ("echo_search", {"query": q}), facts),
    st.builds(lambda a: ("echo_vqa", {"stage": "vqa", "prompt": a}), facts),
    st.just(("failing_ocr", {"image": "x.png"})),
)
hit_step = st.tuples(st.sampled_from(list(Trigger)), st.integers(0, 10_000), tool_call)


def a_hit(led: Ledger, trigger: Trigger, k: int) -> TriggerHit | None:
    """A hit of ``trigger`` about the k-th entry / call of the ledger (T5/T6: the decision)."""
    entries, outputs = led.entries(), led.tool_outputs()
    if trigger in {Trigger.T5, Trigger.T6}:
        return TriggerHit(trigger, ("DC-1",), "gap")
    if trigger is Trigger.T1 and outputs:
        return TriggerHit(trigger, (outputs[k % len(outputs)].call_id,), "anomaly")
    if trigger is Trigger.T3 and len(entries) > 1:
        return TriggerHit(trigger, (entries[k % len(entries)].id, entries[(k + 1) % len(entries)].id))
    if trigger in {Trigger.T2, Trigger.T4} and entries:
        return TriggerHit(trigger, (entries[k % len(entries)].id,), "stale or faint")
    return None


def assert_tool_provenance(led: Ledger, entry_ids):
    for eid in entry_ids:
        e = led.get(eid)
        out = led.tool_output(e.tool_call_id)
        assert out is not None, f"{eid} has no tool output"
        assert e.fact in {m.fact for m in map_output(out)}, f"{eid} fact is not M(o) of its tool output"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(tool_call, max_size=6), st.lists(hit_step, min_size=1, max_size=8))
def test_every_new_entry_has_tool_provenance(item_ctx, calls, steps):
    ctx = item_ctx(TOOLS, budget=3, per_trigger_budget=3)
    led = ctx.ledger
    for name, inputs in calls:
        led.record(ctx.tools[name].invoke(**inputs))
    led.add_claim(Claim("DC-1", ClaimType.DC, "x", None, [led.entries()[0].id] if led.entries() else []))
    for trigger, k, call in steps:
        hit = a_hit(led, trigger, k)
        if hit is None:
            continue
        before = {e.id for e in led.entries()}
        calls_before = {o.call_id for o in led.tool_outputs()}
        snapshot = {e.id: (e.fact, e.src, e.kappa) for e in led.entries()}
        created = asyncio.run(ctx.executor.repair(hit, acquire=AcquireSpec(*call)))
        new = {e.id for e in led.entries()} - before
        if trigger is Trigger.T3:
            assert not new, f"DROP added entries {new}"
        assert_tool_provenance(led, new)
        # a new entry is the image of a *new* tool call: an operator that re-records an output the
        # ledger already had (a REFRESH with no fresh call) adds no provenance, it repeats it
        assert all(led.get(e).tool_call_id not in calls_before for e in new), (
            f"{trigger} re-recorded an output"
        )
        assert set(created) == new
        # the adversary: a reloaded or rebuilt tool output never becomes evidence
        if led.tool_outputs():
            victim = led.tool_outputs()[k % len(led.tool_outputs())]
            for forged in (ToolOutput.from_dict(victim.to_dict()), dataclasses.replace(victim)):
                n_before = len(led.entries())
                try:
                    led.record(forged)
                except ProvenanceError:
                    pass
                else:
                    raise AssertionError("a reloaded tool output entered a live ledger")
                assert len(led.entries()) == n_before
        # no operator rewrites the content of an existing entry
        assert all((led.get(i).fact, led.get(i).src, led.get(i).kappa) == v for i, v in snapshot.items())
