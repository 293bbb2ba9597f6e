from __future__ import annotations

import asyncio
import random
import time

import httpx
import pytest

from ledgermind.backends.retry import Failure, GaveUp, RetryPolicy, is_retryable_status, retrying


class _Ceiling(random.Random):
    """Draws the top of every jitter range: the delays are then the exponential ceilings themselves."""

    def uniform(self, a: float, b: float) -> float:
        return b


def test_backoff_is_exponential_and_capped():
    p = RetryPolicy(max_retries=8, base_s=1.0, cap_s=32.0)
    assert list(p.delays(_Ceiling())) == [1, 2, 4, 8, 16, 32, 32, 32]


def test_jitter_stays_within_the_exponential_ceiling():
    p = RetryPolicy(max_retries=6, base_s=0.5, cap_s=4.0)
    rng = random.Random(0)
    for _ in range(200):
        for attempt, d in enumerate(p.delays(rng)):
            assert 0.0 <= d <= min(4.0, 0.5 * 2**attempt)
    spread = {round(p.delay(3, rng), 6) for _ in range(50)}
    assert len(spread) > 10  # jitter actually varies


def test_retry_count_is_bounded():
    assert len(list(RetryPolicy(max_retries=5).delays())) == 5
    with pytest.raises(ValueError):
        RetryPolicy(max_retries=-1)


@pytest.mark.parametrize(
    "status,expected",
    [(429, True), (500, True), (503, True), (400, False), (401, False), (404, False), (422, False)],
)
def test_only_429_and_5xx_are_retryable(status, expected):
    assert is_retryable_status(status) is expected


def test_retrying_returns_the_first_success_and_gives_up_when_the_retries_are_spent():
    policy, rng = RetryPolicy(max_retries=2, base_s=0.0), random.Random(0)
    outcomes = iter([Failure("a"), Failure("b"), "ok"])

    async def flaky() -> str | Failure:
        return next(outcomes)

    async def down() -> str | Failure:
        return Failure("down", timed_out=True)

    assert asyncio.run(retrying(flaky, policy, rng, "t")) == ("ok", 3)
    with pytest.raises(GaveUp) as gave_up:
        asyncio.run(retrying(down, policy, rng, "t"))
    assert gave_up.value.attempts == 3 and gave_up.value.failure.timed_out


def test_retry_after_is_read_as_seconds_or_an_http_date():
    from email.utils import formatdate

    from ledgermind.backends.retry import retry_after_s

    assert retry_after_s(httpx.Headers({"Retry-After": "7"})) == 7.0
    assert 25 < retry_after_s(httpx.Headers({"Retry-After": formatdate(time.time() + 30, usegmt=True)})) <= 30
    assert retry_after_s(httpx.Headers({"Retry-After": "soon"})) is None
    assert retry_after_s(httpx.Headers({})) is None
    assert RetryPolicy(cap_s=5.0).honour(0.2, 60.0) == 5.0 and RetryPolicy().honour(0.2, None) == 0.2
