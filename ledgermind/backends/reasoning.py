"""Reasoning blocks kept apart from the answer.

Why this exists: reasoning ("thinking") models put a chain of thought before the answer, either
inline as ``<think>…</think>`` or, behind vLLM's reasoning parsers, in a separate
``reasoning_content`` field. If that text reaches the answer parser, a letter the model merely
*considered* is scored as its answer; if it reaches the claim parser, musings get grounded as
claims. Every reply is therefore split once, here, into ``Reply.text`` (the answer, the only text
the pipeline sees) and ``Reply.reasoning`` (stored in the trajectory, never parsed or re-sent).

A reply whose think block never closes stopped while still reasoning (usually at the token
limit): it has *no* answer, only truncated reasoning. Chat templates of thinking models often
open the block themselves (the generation prompt ends in ``<think>``), so the reply carries only
the closing tag; ``opened_by_template`` says that a reply without any tag is all reasoning.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ledgermind.backends.base import Backend, GenerationRequest, Reply, WrappingBackend
from ledgermind.errors import ConfigError

OPEN_TAG, CLOSE_TAG = "<think>", "</think>"
_BLOCK_RE = re.compile(r"<think>(.*?)</think>", re.DOTALL)
LENGTH = "length"  # OpenAI/vLLM finish_reason of a reply cut at max_tokens


@dataclass(frozen=True)
class ReasoningSplit:
    answer: str
    reasoning: str
    unclosed: bool  # the reply ended inside a think block: truncated reasoning, no answer


def split_reasoning(text: str, *, opened_by_template: bool = False) -> ReasoningSplit:
    """Separate ``<think>`` blocks from the answer text of one reply."""
    text = text or ""
    if (opened_by_template or CLOSE_TAG in text) and OPEN_TAG not in text.split(CLOSE_TAG, 1)[0]:
        text = OPEN_TAG + text  # the template opened the block (a closing tag alone says so too)
    parts = [m.strip() for m in _BLOCK_RE.findall(text)]
    rest = _BLOCK_RE.sub("", text)
    unclosed = OPEN_TAG in rest
    if unclosed:
        before, _, tail = rest.partition(OPEN_TAG)
        parts.append(tail.replace(OPEN_TAG, "").strip())
        rest = before
    return ReasoningSplit(rest.strip(), "\n\n".join(p for p in parts if p), unclosed)


def separate(reply: Reply, *, opened_by_template: bool = False) -> Reply:
    """The reply with its reasoning moved out of ``text`` (idempotent).

    ``reply.reasoning`` may already hold a server-side parsed ``reasoning_content``; inline blocks
    found in the text are appended to it.
    """
    if reply.meta.get("reasoning_split"):
        return reply
    split = split_reasoning(reply.text, opened_by_template=opened_by_template and not reply.reasoning)
    reasoning = "\n\n".join(p for p in (reply.reasoning.strip(), split.reasoning) if p)
    meta = {**reply.meta, "reasoning_split": True} | ({"reasoning_unclosed": True} if split.unclosed else {})
    return replace(reply, text=split.answer, reasoning=reasoning, meta=meta)


def is_truncated(reply: Reply) -> bool:
    """Stopped at the token limit, or ended inside a think block: the answer may be missing or cut."""
    return reply.finish_reason == LENGTH or bool(reply.meta.get("reasoning_unclosed"))


@dataclass(frozen=True)
class ReasoningSpec:
    """``model.reasoning`` of a thinking model's config (``conf/model/*thinking*.yaml``)."""

    budget_tokens: int = 0  # added to every request's max_tokens: reasoning must not eat the answer's budget
    opened_by_template: bool = False

    @classmethod
    def from_model(cls, model: Mapping[str, Any]) -> ReasoningSpec | None:
        node = model.get("reasoning") if isinstance(model, Mapping) else None
        if not node:
            return None
        if unknown := sorted(set(node) - {"budget_tokens", "opened_by_template"}):
            raise ConfigError(
                f"unknown model.reasoning key(s) {unknown}; known: budget_tokens, opened_by_template"
            )
        budget = node.get("budget_tokens", 0)
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
            raise ConfigError(f"model.reasoning.budget_tokens must be an integer >= 0, got {budget!r}")
        return cls(budget, bool(node.get("opened_by_template", False)))


class ReasoningBackend(WrappingBackend):
    """Wraps the backend of a thinking model: adds the reasoning budget, splits every reply.

    It sits outside the response cache, so the cache key includes the enlarged ``max_tokens`` and
    the cache keeps the raw reply (think block included) for later re-parsing.
    """

    def __init__(self, inner: Backend, spec: ReasoningSpec) -> None:
        super().__init__(inner)
        self.spec = spec

    async def generate(self, request: GenerationRequest) -> Reply:
        request = replace(request, max_tokens=request.max_tokens + self.spec.budget_tokens)
        reply = await self.inner.generate(request)
        return separate(reply, opened_by_template=self.spec.opened_by_template)


def reply_record(reply: Reply | None, pixels: list[int] | None = None) -> dict[str, Any]:
    """The ``ModelCall`` fields recording a reply's provenance: its reasoning, how it finished,
    whether it was cut, and the pixels of each image as sent (from the image-budget wrapper's
    meta, else ``pixels`` measured before sending)."""
    if reply is None:
        return {"finish_reason": "error", "image_pixels": list(pixels or [])}
    return {
        "reasoning": reply.reasoning,
        "finish_reason": reply.finish_reason,
        "truncated": is_truncated(reply),
        "image_pixels": list(reply.meta.get("image_pixels", pixels or [])),
    }
