"""The one recorder of model calls: every agent's backend call becomes one ``ModelCall`` step of τ.

Why it exists: a trajectory's model calls are read by the census (``request_key`` shows whether two
readings were the same request), the report (``messages``, ``meta``) and the TTL clock (``step``).
The LedgerMind agent (``model_io``) and the official protocol (``official``) must write the same
record, so both go through ``record_call``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ledgermind.backends.base import Backend, Reply
from ledgermind.backends.reasoning import reply_record
from ledgermind.trajectory import ModelCall, Trajectory


def record_call(
    traj: Trajectory,
    backend: Backend,
    stage: str,
    dt: float,
    key: str,
    sample: Sequence[dict[str, Any]],
    reply: Reply | None = None,
    error: str | None = None,
    pixels: list[int] | None = None,
) -> None:
    """Append one call to ``traj`` (``reply`` None: it failed with ``error``); each call advances
    its ledger's clock by one step."""
    traj.ledger.advance()
    traj.model_calls.append(
        ModelCall(
            stage=stage,
            latency_s=dt,
            prompt_tokens=getattr(reply, "prompt_tokens", 0),
            completion_tokens=getattr(reply, "completion_tokens", 0),
            backend=getattr(reply, "backend", backend.name),
            model=getattr(reply, "model", backend.model_id),
            cached=getattr(reply, "cached", False),
            reply=getattr(reply, "text", ""),
            error=error,
            step=int(traj.ledger.now()),
            request_key=key,
            meta=_plain_meta(getattr(reply, "meta", None)),
            messages=list(sample),
            **reply_record(reply, pixels),  # reasoning, finish_reason, truncation, pixels as sent
        )
    )


def _plain_meta(meta: Any) -> dict[str, Any]:
    """Reply.meta as JSON-safe values (the trajectory must serialise)."""
    return {str(k): v for k, v in meta.items() if _json_safe(v)} if isinstance(meta, dict) else {}


def _json_safe(v: Any) -> bool:
    """Scalars, and lists/dicts of them (nested records such as the simulator's injected faults
    or the image budget applied to the request)."""
    if isinstance(v, list):
        return all(_json_safe(x) for x in v)
    if isinstance(v, dict):
        return all(isinstance(k, str) and _json_safe(x) for k, x in v.items())
    return v is None or isinstance(v, (str, int, float, bool))
