"""Retry policy for remote calls: exponential backoff with full jitter, bounded.

Only failures that a retry can fix are retried: connection errors, timeouts, HTTP 429 and 5xx.
A 4xx is our mistake (bad request, unknown model, context overflow) and retrying it would only
hide the bug and burn time, so it is never retried. A busy server's ``Retry-After`` lengthens the
wait up to the cap: retrying sooner only spends the retry budget on more refusals.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 5  # App. D.6: at most 5 retries
    base_s: float = 1.0
    cap_s: float = 32.0  # App. D.6: 32 s cap

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.base_s < 0 or self.cap_s < 0:
            raise ValueError(f"retry policy values must be >= 0: {self}")

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """Sleep before retry number ``attempt`` (0-based): full jitter over min(cap, base·2^attempt)."""
        return (rng or random).uniform(0.0, min(self.cap_s, self.base_s * (2**attempt)))

    def delays(self, rng: random.Random | None = None) -> Iterator[float]:
        return (self.delay(attempt, rng) for attempt in range(self.max_retries))

    def honour(self, delay: float, retry_after_s: float | None) -> float:
        """``delay`` raised to the server's ``Retry-After``, never beyond ``cap_s``."""
        return delay if retry_after_s is None else max(delay, min(retry_after_s, self.cap_s))


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """A response's ``Retry-After`` in seconds (delta-seconds or an HTTP date); None if absent or unreadable."""
    if (value := headers.get("retry-after")) is None:
        return None
    with contextlib.suppress(ValueError):
        return max(0.0, float(value))
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def is_retryable_status(status: int) -> bool:
    return status == 429 or 500 <= status < 600


@dataclass(frozen=True)
class Failure:
    """One attempt that a retry may fix: why, whether it ran out of time, the server's Retry-After."""

    why: str
    timed_out: bool = False
    retry_after_s: float | None = None


class GaveUp(Exception):
    """Every attempt failed; ``failure`` is the last one."""

    def __init__(self, failure: Failure, attempts: int) -> None:
        super().__init__(failure.why)
        self.failure, self.attempts = failure, attempts


async def retrying(
    attempt: Callable[[], Awaitable[T | Failure]], policy: RetryPolicy, rng: random.Random, what: str
) -> tuple[T, int]:
    """``attempt()`` until it returns a value (and how many tries that took), sleeping the policy's
    delays, raised to the server's Retry-After, between failures; ``GaveUp`` once the retries are spent.
    An error no retry can fix is raised by ``attempt`` itself."""
    delays, n = policy.delays(rng), 0
    while True:
        n += 1
        outcome = await attempt()
        if not isinstance(outcome, Failure):
            return outcome, n
        delay = next(delays, None)
        if delay is None:
            raise GaveUp(outcome, n)
        delay = policy.honour(delay, outcome.retry_after_s)
        log.warning("%s attempt %d failed (%s); retrying in %.2fs", what, n, outcome.why, delay)
        await asyncio.sleep(delay)
