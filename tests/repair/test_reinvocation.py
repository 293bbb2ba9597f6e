"""A re-invocation that would repeat an earlier request of the item byte for byte is not sent:
the model door refuses it, the engine fails over to the next operator in Π, and the census
counts it (``repair.skipped_identical``). The fake model is request-driven (scripted rules)."""

from __future__ import annotations

import asyncio

import pytest

from ledgermind.backends.scripted import ScriptedBackend
from ledgermind.metrics.census import census
from ledgermind.pipeline.config import PipelineConfig
from ledgermind.pipeline.mllm_tools import ObserveTool, VQATool
from ledgermind.pipeline.model_io import ModelIO
from ledgermind.repair import Budget, RepairContext, RepairEngine
from ledgermind.repair.reinvocation import REPHRASINGS, rephrased
from ledgermind.repair.triggers import t1_tool_anomaly
from ledgermind.tools.base import ToolKind
from ledgermind.trajectory import OperatorName, PathKind, Trajectory
from tests.helpers import EchoOCR, TextImage


@pytest.fixture
def door(monkeypatch):
    monkeypatch.setenv("LEDGERMIND_ALLOW_SCRIPTED", "1")
    backend = ScriptedBackend({"name": "scripted"}, [], default="")  # every observation reply is empty
    traj = Trajectory("q1", "What does the sign say?", PathKind.FULLPIPE)
    return ModelIO(backend, PipelineConfig(structured_output=False), traj), backend, traj


def _engine(traj, tools, **kw):
    def switch_inputs(tool, origin):
        return {"image": TextImage(["EXIT"])} if tool.kind is ToolKind.OCR else {}

    ctx = RepairContext(traj.ledger, {t.name: t for t in tools}, switch_inputs=switch_inputs, **kw)
    return RepairEngine(ctx, Budget(2))


def _observe(model, rephrase):
    return asyncio.run(
        ObserveTool(model.call).ainvoke(
            question="What does the sign say?",
            plan="",
            categories=["TEXT: visible text"],
            images=[],
            rephrase=rephrase,
        )
    )


def test_a_retry_that_can_still_vary_is_a_new_request(door):
    model, backend, traj = door
    out = _observe(model, 0)
    traj.ledger.record(out)
    res = asyncio.run(_engine(traj, [ObserveTool(model.call), EchoOCR()]).handle(t1_tool_anomaly(out)))
    retry = res.events[0]
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
    model, backend, traj = door
    last = len(REPHRASINGS)  # past the last rephrasing the instruction no longer changes
    assert rephrased("x", last) == rephrased("x", last + 1)
    out = _observe(model, last)
    traj.ledger.record(out)
    sent = len(backend.history)
    res = asyncio.run(_engine(traj, [ObserveTool(model.call), EchoOCR()]).handle(t1_tool_anomaly(out)))
    assert len(backend.history) == sent  # nothing was sent for the RETRY
    retry, switch = res.events
    assert retry.operator is OperatorName.RETRY and retry.skipped_identical and retry.cost == 0.0
    assert switch.operator is OperatorName.SWITCH and switch.grounded_after is True  # OCR read the sign
    assert [traj.ledger.get(e).fact for e in switch.new_entries] == ["EXIT"]
    traj.events += res.events
    c = census(traj)
    assert c["repair"]["skipped_identical"] == 1 and c["model_calls"] == len(backend.history) == 1


def test_with_sampling_allowed_a_retry_is_a_seeded_draw(door):
    model, backend, traj = door
    out = asyncio.run(VQATool(model.call).ainvoke(stage="direct", prompt="What does the sign say?"))
    traj.ledger.record(out)
    res = asyncio.run(_engine(traj, [VQATool(model.call)], allow_sampling=True).handle(t1_tool_anomaly(out)))
    first, again = backend.history[0], backend.history[1]
    assert res.events[0].variation == "sampled draw attempt=1"
    assert (
        again.temperature > 0
        and again.seed == first.seed + 1
        and again.last_user_text() == first.last_user_text()
    )


def test_outside_a_repair_the_door_sends_whatever_it_is_asked(door):
    """Only re-invocations are checked: a pipeline stage is never refused (its request is new by
    construction, and refusing it would lose a step, not save one)."""
    model, backend, _ = door
    _observe(model, 0)
    _observe(model, 0)
    assert len(backend.history) == 2
