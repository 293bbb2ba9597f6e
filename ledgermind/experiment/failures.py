"""Which items *failed* (an error) rather than *answered wrongly* — read off the trajectory record.

A reported accuracy is only comparable with published numbers if an item that never reached the
model (server down, request rejected, image unreadable, page not rendered) is excluded from it
instead of being scored as a wrong answer. The pipeline keeps going after such failures (it
records them as model-call errors and tool anomalies, and the verifier may even repair around
them), so the harness decides afterwards, from what the trajectory recorded:

* ``item.meta["load_error"]`` — the loader could not build the item (bad row, path outside the
  data directory, page not rendered): the agent is never called;
* ``Trajectory.error`` — the agent raised;
* a model call with ``error`` set — the backend failed after its retries (connection refused,
  4xx, 5xx, timeout, replay miss). Any failed call means the answer was produced without the
  model's full participation, so it cannot count as the model's answer;
* a tool output whose ``failure`` (``errors.classify_failure``, decided where the tool raised) is
  not EVIDENCE: the machine failed (a read-only or full disk or cache, a permission, a missing or
  crashed engine, an unreachable or failing search service: ``infrastructure``) or the item's input did (an image missing, corrupt, not an
  image, a decompression bomb: ``data``). Only EVIDENCE anomalies (no text found, a tiny crop, an
  empty reply) are ordinary evidence gaps the method is designed to repair, so they stay part of
  the answer.

The cause is one short line; the first failure wins because later ones usually follow from it
(tool failures are looked at before model calls for the same reason).
"""

from __future__ import annotations

from typing import Any

from ledgermind.benchmarks.item import Item
from ledgermind.errors import FailureKind

MAX_CAUSE_CHARS = 300
# the failure classes that make an item an error, and how its cause line opens
FAILED = {
    FailureKind.DATA: "image failed",
    FailureKind.INFRASTRUCTURE: "infrastructure failed",
    FailureKind.MODEL: "model call failed",
}


def short(cause: str) -> str:
    """First line, bounded: a cause must fit a table cell and a one-line summary."""
    line = (cause or "").strip().splitlines()[0] if (cause or "").strip() else "unknown error"
    return line if len(line) <= MAX_CAUSE_CHARS else line[: MAX_CAUSE_CHARS - 1] + "…"


def load_error(item: Item) -> str | None:
    err = item.meta.get("load_error")
    return short(f"input: {err}") if err else None


def trajectory_error(traj: Any) -> str | None:
    """The first failure recorded in a trajectory, or None if the item was really answered."""
    if traj.error:
        return short(traj.error)
    # the machine's and the input's failures first: a model call that failed after them (a
    # simulated model's eyes on the same broken disk) follows from them
    for out in traj.ledger.tool_outputs():
        if (cause := tool_failure(out)) is not None:
            return cause
    for call in traj.model_calls:
        if call.error:
            return short(f"model call failed ({call.stage}): {call.error}")
    return None


def tool_failure(out: Any) -> str | None:
    """The item-error cause of one tool output, or None when it is an answer's evidence (or a gap)."""
    what = FAILED.get(out.failure) if out.error else None
    return short(f"{what} ({out.tool}): {out.error.removeprefix('error: ')}") if what else None
