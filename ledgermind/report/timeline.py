"""The timeline of one trajectory: its model calls (with the logged prompt), tool calls and
repair events on the step clock, as the item page's expandable rows show them.

Split from ``item_view`` because it is its own concept: what the agent *did*, in order, where
the item view is what the ledger *holds*. Values stay plain strings; the template escapes them.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledgermind.benchmarks.item import Item
from ledgermind.report.images import ImageStore, StoredImage

KIND_ORDER = ("model", "tool", "trigger")  # a step's rows: what the model was asked, what tools said, repairs


@dataclass(frozen=True)
class PromptPart:
    """One part of a logged request: text verbatim, or an image by content hash and size."""

    kind: str  # text | image
    text: str = ""
    sha256: str = ""
    size: str = ""
    href: str | None = None  # the item's own image with this content, when it is one


@dataclass(frozen=True)
class PromptMessage:
    role: str
    parts: tuple[PromptPart, ...]


@dataclass(frozen=True)
class TimelineRow:
    step: int
    kind: str  # model | tool | trigger
    label: str
    detail: str
    cost: str
    failed: bool = False
    prompt: tuple[PromptMessage, ...] = ()  # a model call's logged messages (expandable on the page)
    reply: str = ""  # a model call's whole reply (the detail column shows it shortened)
    reasoning: str = ""


def item_image_links(info: Item | None, store: ImageStore) -> dict[str, str]:
    """Content hash (the one a logged request names) → the report's copy of that item image."""
    from ledgermind.backends.images import image_digest
    from ledgermind.errors import DataError

    links: dict[str, str] = {}
    for path in info.images if info else []:
        stored = store.add(path)
        if isinstance(stored, StoredImage):
            with contextlib.suppress(DataError):  # an image that cannot be read links nowhere
                links[image_digest(Path(path))] = stored.rel
    return links


def prompt_of(call: dict[str, Any], links: dict[str, str] | None = None) -> tuple[PromptMessage, ...]:
    """The logged messages of a model call (``ModelCall.messages``) as the page shows them."""
    return tuple(
        PromptMessage(str(m.get("role", "")), tuple(_part(p, links or {}) for p in m.get("content") or []))
        for m in call.get("messages") or []
    )


def _part(p: dict[str, Any], links: dict[str, str]) -> PromptPart:
    if p.get("type") != "image":
        return PromptPart("text", text=str(p.get("text", "")))
    sha = str(p.get("sha256", ""))
    return PromptPart(
        "image", sha256=sha, size=f"{p.get('width', '?')}×{p.get('height', '?')}", href=links.get(sha)
    )


def timeline(t: dict[str, Any], links: dict[str, str] | None = None) -> list[TimelineRow]:
    """Model calls, tool calls and trigger/operator events on the trajectory's step clock.

    Model calls and events carry their step; a tool call takes the logical time of the entries
    it produced (or, with none, the step of the tool call before it). A model call keeps its
    logged prompt and whole reply for the page's expandable row.
    """
    rows: list[TimelineRow] = []
    for c in t.get("model_calls", []):
        tokens = int(c.get("prompt_tokens", 0)) + int(c.get("completion_tokens", 0))
        cached = " · cached" if c.get("cached") else ""
        cost = f"{float(c.get('latency_s', 0.0)):.2f} s · {tokens} tok{cached}"
        rows.append(
            TimelineRow(
                int(c.get("step", 0)),
                "model",
                str(c.get("stage", "")),
                shorten(c.get("error") or c.get("reply", "")),
                cost,
                bool(c.get("error")),
                prompt_of(c, links),
                str(c.get("reply") or ""),
                str(c.get("reasoning") or ""),
            )
        )
    ledger = t.get("ledger") or {}
    first_t: dict[str, float] = {}
    for e in ledger.get("entries", []):
        k = str(e.get("tool_call_id", ""))
        first_t[k] = min(first_t.get(k, float(e.get("t", 0.0))), float(e.get("t", 0.0)))
    step = 0
    for o in sorted(ledger.get("tool_outputs", []), key=lambda o: float(o.get("created_at", 0.0))):
        step = int(first_t.get(str(o.get("call_id")), step))
        n = len(o.get("observations", []))
        detail = o.get("error") or f"{n} observation{'s' if n != 1 else ''}"
        label = f"{o.get('tool', '')} ({o.get('call_id', '')})"
        latency = f"{float(o.get('latency_s', 0.0)):.2f} s"
        rows.append(
            TimelineRow(step, "tool", label, shorten(detail), latency, bool(o.get("error")) or n == 0)
        )
    for e in t.get("events", []):
        op = e.get("operator") or "no operator"
        layer = f" [{e.get('layer')}]" if e.get("layer") else ""
        targets = ", ".join(map(str, e.get("targets", [])))
        parts = [f"→ {op}{layer}", targets and f"on {targets}", e.get("note") and f"— {e['note']}"]
        parts.append(e.get("error") and f"— operator failed: {e['error']}")
        detail = " ".join(filter(None, parts))
        failed = e.get("grounded_after") is False or bool(e.get("error"))
        cost = f"cost {float(e.get('cost', 0.0)):g}"
        rows.append(
            TimelineRow(
                int(e.get("step", 0)), "trigger", str(e.get("trigger", "")), shorten(detail), cost, failed
            )
        )
    # stable: within a step, model calls, tool calls, then events, each kind in its recorded order
    return sorted(rows, key=lambda r: (r.step, KIND_ORDER.index(r.kind)))


def shorten(text: Any, limit: int = 300) -> str:
    """Whitespace folded to single spaces, cut to ``limit`` characters with an ellipsis."""
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"
