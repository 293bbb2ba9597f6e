"""Retry policy for remote calls: exponential backoff with full jitter, bounded.

Only failures that a retry can fix are retried: connection errors, timeouts, HTTP 429 and 5xx.
A 4xx is our mistake (bad request, unknown model, context overflow) and retrying it would only
hide the bug and burn time, so it is never retried.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

import httpx

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 5  # App. D.6: at most 5 retries
    base_s: float = 1.0
    cap_s: float = 32.0  # App. D.6: 32 s cap
    jitter: bool = True

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.base_s < 0 or self.cap_s < 0:
            raise ValueError(f"retry policy values must be >= 0: {self}")

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """Sleep before retry number ``attempt`` (0-based): full jitter over min(cap, base·2^attempt)."""
        ceiling = min(self.cap_s, self.base_s * (2**attempt))
        if not self.jitter:
            return ceiling
        return (rng or random).uniform(0.0, ceiling)

    def delays(self, rng: random.Random | None = None) -> Iterator[float]:
        for attempt in range(self.max_retries):
            yield self.delay(attempt, rng)


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUS or 500 <= status < 600


def is_retryable_exception(exc: BaseException) -> bool:
    """Transport-level failures (refused connection, reset, timeout) are worth another try."""
    return isinstance(exc, httpx.TransportError)
