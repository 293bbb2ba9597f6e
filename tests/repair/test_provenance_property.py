"""Proposition 1 (provenance non-amplification), checked on random ledgers and operator sequences."""

from __future__ import annotations

import asyncio
import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from ledgermind.errors import ProvenanceError
from ledgermind.ledger import Ledger, map_output
from ledgermind.repair import OPERATORS, RepairContext
from ledgermind.tools.base import ToolOutput
from tests.helpers import EchoOCR, EchoSearch, EchoVQA, FailingTool, TextImage

TOOLS = [EchoOCR(), EchoSearch(), EchoVQA(), FailingTool()]
NO_NEW_ENTRY = {"DROP", "SWITCH", "STOP_AND_ANSWER", "ABSTAIN"}

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
op_step = st.tuples(st.sampled_from(OPERATORS.names()), st.integers(0, 10_000), tool_call)


def build(calls):
    led = Ledger()
    tools = {t.name: t for t in TOOLS}
    for name, inputs in calls:
        led.record(tools[name].invoke(**inputs))
    return led, tools


async def apply(led, tools, op_name, k, call):
    ctx = RepairContext(ledger=led, tools=tools)
    op = OPERATORS.get(op_name)
    entries, outputs = led.entries(), led.tool_outputs()
    if op_name in {"DROP", "REFRESH"}:
        if not entries:
            return None
        return await op.apply(ctx, entry_id=entries[k % len(entries)].id)
    if op_name in {"RETRY", "SWITCH"}:
        if not outputs:
            return None
        return await op.apply(ctx, call_id=outputs[k % len(outputs)].call_id)
    if op_name == "ACQUIRE":
        return await op.apply(ctx, tool=call[0], inputs=call[1])
    return await op.apply(ctx)


def assert_tool_provenance(led: Ledger, entry_ids):
    for eid in entry_ids:
        e = led.get(eid)
        out = led.tool_output(e.tool_call_id)
        assert out is not None, f"{eid} has no tool output"
        assert e.fact in {m.fact for m in map_output(out)}, f"{eid} fact is not M(o) of its tool output"


@settings(max_examples=150, deadline=None)
@given(st.lists(tool_call, max_size=6), st.lists(op_step, min_size=1, max_size=8))
def test_every_new_entry_has_tool_provenance(calls, steps):
    led, tools = build(calls)
    for op_name, k, call in steps:
        before = {e.id for e in led.entries()}
        calls_before = {o.call_id for o in led.tool_outputs()}
        snapshot = {e.id: (e.fact, e.src, e.kappa) for e in led.entries()}
        res = asyncio.run(apply(led, tools, op_name, k, call))
        new = {e.id for e in led.entries()} - before
        if op_name in NO_NEW_ENTRY:
            assert not new, f"{op_name} added entries {new}"
        assert_tool_provenance(led, new)
        # a new entry is the image of a *new* tool call: an operator that re-records an output the
        # ledger already had (a REFRESH with no fresh call) adds no provenance, it repeats it
        assert all(led.get(e).tool_call_id not in calls_before for e in new), (
            f"{op_name} re-recorded an old output"
        )
        if res is not None:
            assert set(res.new_entries) == new
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
