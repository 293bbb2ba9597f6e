"""The throughput limit of a server for a given request stream: a plain asyncio client replaying it.

Why: "items/min" of the runner means little on its own; against a fixed-latency server the best
any client can do is to keep ``concurrency`` requests in flight back to back. Replaying the very
bodies the runner sent, with no agent work in between, measures that limit, and the runner's
throughput divided by it says how much the runner itself loses (event-loop stalls, locks, serial
CPU work).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from typing import Any

import httpx


async def replay_requests(base_url: str, bodies: Sequence[Any], concurrency: int) -> float:
    """Send every chat body with at most ``concurrency`` in flight; return the wall seconds.

    Bodies are serialised before the clock starts: the replay does nothing but keep the server busy.
    A non-200 answer raises (a replay that fails measures nothing).
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    url = base_url.rstrip("/").removesuffix("/v1") + "/v1/chat/completions"
    payloads = [json.dumps(b).encode() for b in bodies]
    slots = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=120.0, limits=limits) as client:

        async def send(body: bytes) -> None:
            async with slots:
                resp = await client.post(url, content=body, headers={"Content-Type": "application/json"})
                resp.raise_for_status()

        t0 = time.perf_counter()
        await asyncio.gather(*(send(p) for p in payloads))
        return time.perf_counter() - t0
