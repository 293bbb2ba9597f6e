"""Re-invocations must change the request (App. E.2: RETRY(a, θ′) with *modified* arguments).

Why it exists: a backbone served greedily returns the same reply to the same request, so a
repair that re-sends a byte-identical request spends budget on a guaranteed identical answer.
Every re-invocation therefore carries a logged variation (a shifted box, an expanded query, a
rephrased instruction, or — only where the backend may sample — a seeded draw), and the model
door refuses to send a re-invocation whose request already went out for this item: the
repair engine then fails over to the next operator in Π and the census counts
``repair.skipped_identical``.

The scope is a context variable so the check reaches the model door through any tool without
threading a flag through every tool signature; it is set only while a repair operator runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from ledgermind.errors import ToolError

# Appended (never prepended: the instruction a prompt opens with stays the template's) to a
# model-backed tool's instruction on its k-th re-ask, k = 1, 2, … (``rephrase`` input).
REPHRASINGS: tuple[str, ...] = (
    "The previous answer to this request could not be used. Look at the image again and answer in the requested format.",
    "Answer again, going over the image region by region; state only what is visible, in the requested format.",
    "Re-examine the image from scratch, as if seeing it for the first time, and answer in the requested format.",
)


def rephrased(text: str, rephrase: int) -> str:
    """The instruction of the ``rephrase``-th re-ask (0: unchanged). Past the last rephrasing the
    text stops changing, so a further re-ask is identical and is not sent (unless sampled)."""
    if rephrase <= 0:
        return text
    return f"{text}\n\n{REPHRASINGS[min(rephrase, len(REPHRASINGS)) - 1]}"


class IdenticalRequest(ToolError):
    """A re-invocation would repeat an earlier request of the same item byte for byte: not sent."""


@dataclass
class Reinvocation:
    """One repair operator's scope: the request keys the model door refused to repeat."""

    skipped: list[str] = field(default_factory=list)


_SCOPE: ContextVar[Reinvocation | None] = ContextVar("ledgermind_reinvocation", default=None)


@contextmanager
def reinvoking() -> Iterator[Reinvocation]:
    """Mark the calls made inside as re-invocations (RETRY, REFRESH, ACQUIRE)."""
    scope = Reinvocation()
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)


def current() -> Reinvocation | None:
    return _SCOPE.get()
