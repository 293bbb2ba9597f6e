"""A re-invocation that would repeat an earlier request of the item byte for byte is not sent:
the model door refuses it, the executor applies Π's fallback operator, and the census
counts it (``repair.skipped_identical``). The fake model is request-driven (scripted rules)."""

from __future__ import annotations

import asyncio

import pytest

from ledgermind.metrics.census import census
from ledgermind.repair.reinvocation import REPHRASINGS, rephrased
from ledgermind.repair.triggers import t1_tool_anomaly
from ledgermind.trajectory import OperatorName
from tests.helpers import EchoOCR, TextImage


@pytest.fixture
def door(item_ctx):
    """An item whose scripted model replies "" to every observation; OCR reads the sign."""
    ctx = item_ctx([EchoOCR()], images=[TextImage(["EXIT"])])
    return ctx, ctx.model.backend, ctx.traj


def _repair(ctx, hit):
    before = len(ctx.traj.events)
    asyncio.run(ctx.executor.repair(hit))
    return ctx.traj.events[before:]


def _observe(ctx, rephrase):
    out = asyncio.run(
        ctx.tools["observe"].ainvoke(
            question="What does the sign say?",
            plan="",
            categories=["TEXT: visible text"],
            images=[],
            rephrase=rephrase,
        )
    )
    ctx.ledger.record(out)
    return out


def test_a_retry_that_can_still_vary_is_a_new_request(door):
    ctx, backend, traj = door
    out = _observe(ctx, 0)
    retry = _repair(ctx, t1_tool_anomaly(out))[0]
    assert (
        retry.operator is OperatorName.RETRY
        and retry.variation == "rephrase=1"
        and not retry.skipped_identical
    )
    assert (
        len(backend.history) == 2
    )  # the original and the rephrased RETRY (still empty: SWITCH → OCR, no model call)
    assert (
        REPHRASINGS[0] in backend.history[1].last_user_text()
        and REPHRASINGS[0] not in backend.history[0].last_user_text()
    )
    assert len({m.request_key for m in traj.model_calls}) == len(traj.model_calls)


def test_a_retry_that_would_repeat_its_request_is_not_sent_and_fails_over_to_switch(door):
    ctx, backend, traj = door
    last = len(REPHRASINGS)  # past the last rephrasing the instruction no longer changes
    assert rephrased("x", last) == rephrased("x", last + 1)
    out = _observe(ctx, last)
    sent = len(backend.history)
    retry, switch = _repair(ctx, t1_tool_anomaly(out))
    assert len(backend.history) == sent  # nothing was sent for the RETRY
    assert retry.operator is OperatorName.RETRY and retry.skipped_identical and retry.cost == 0.0
    assert switch.operator is OperatorName.SWITCH and switch.grounded_after is True  # OCR read the sign
    assert [traj.ledger.get(e).fact for e in switch.new_entries] == ["EXIT"]
    assert ctx.model.refused is None  # the refusal lasted the re-invocation only
    c = census(traj)
    assert c["repair"]["skipped_identical"] == 1 and c["model_calls"] == len(backend.history) == 1


def test_with_sampling_allowed_a_retry_is_a_seeded_draw(item_ctx):
    ctx = item_ctx(reinvoke_sampling=True)
    backend = ctx.model.backend
    out = asyncio.run(ctx.tools["vqa"].ainvoke(stage="direct", prompt="What does the sign say?"))
    ctx.ledger.record(out)
    events = _repair(ctx, t1_tool_anomaly(out))
    first, again = backend.history[0], backend.history[1]
    assert events[0].variation == "sampled draw attempt=1"
    assert (
        again.temperature > 0
        and again.seed == first.seed + 1
        and again.last_user_text() == first.last_user_text()
    )


def test_outside_a_repair_the_door_sends_whatever_it_is_asked(door):
    """Only re-invocations are checked: a pipeline stage is never refused (its request is new by
    construction, and refusing it would lose a step, not save one)."""
    ctx, backend, _ = door
    _observe(ctx, 0)
    _observe(ctx, 0)
    assert len(backend.history) == 2
