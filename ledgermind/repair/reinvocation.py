"""Re-invocations must change the request (App. E.2: RETRY(a, θ′) with *modified* arguments).

Why it exists: a backbone served greedily returns the same reply to the same request, so a
repair that re-sends a byte-identical request spends budget on a guaranteed identical answer.
Every re-invocation therefore carries a logged variation Δθ (a shifted box, an expanded query, a
rephrased instruction, or — only where the backend may sample — a seeded draw); the executor
sends a re-invocation with the flag that makes the model door refuse a request already sent for
the item, and Π fails over to its next operator (census ``repair.skipped_identical``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ledgermind import paper
from ledgermind.tools.base import BBox, Tool, ToolKind, ToolOutput

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


_BOX_KEYS = ("bbox", "region")


@dataclass
class Perturbation:
    """θ′ = θ + Δθ for one item: its seeded randomness and what the variation may use."""

    rng: random.Random = field(default_factory=lambda: random.Random(0))
    jitter_px: tuple[int, int] = paper.RETRY_JITTER_PX  # App. E.2
    expansion_terms: Sequence[str] = ()  # extra keywords for RETRY of a search (query expansion)
    image_size: tuple[int, int] | None = None  # clip perturbed boxes to the image
    allow_sampling: bool = False  # a model re-ask may be a seeded sampled draw (else: rephrased)

    def inputs(self, origin: ToolOutput, tool: Tool) -> dict[str, Any]:
        """θ′ touching only inputs the tool declares.

        A box input (``bbox``/``region``) is shifted edge-wise by ±[15, 40] px; a crop chosen by
        zone (no box in θ) is re-cut around the region it returned, shifted the same way; a search
        query is expanded with question keywords; a model-backed tool (observation, reading, VQA,
        plan) is re-asked with the next ``rephrase`` of its instruction — or, only where the
        backend may sample, as the next ``attempt``'s seeded draw. Everything else is passed
        through unchanged: a tool with none of these inputs gets the same request, which the model
        door then refuses to repeat (Π fails over to the next operator).
        """
        new = dict(origin.inputs)
        for key in _BOX_KEYS:
            if not tool.accepts(key):
                continue
            box = new.get(key)
            if box is None and key == "bbox" and origin.kind is ToolKind.CROP:
                box = next((o.bbox for o in origin.observations if o.bbox is not None), None)
            if box is not None:  # the perturbed box keeps the form the tool was given it in
                moved = self.bbox(box if isinstance(box, BBox) else BBox.from_list(box))
                new[key] = moved if isinstance(box, BBox) else moved.as_list()
        if tool.accepts("query") and isinstance(new.get("query"), str) and self.expansion_terms:
            extra = [t for t in self.expansion_terms if t.lower() not in new["query"].lower()]
            new["query"] = " ".join([new["query"], *extra[:3]])
        if tool.input_names() is None:
            return new
        if self.allow_sampling and tool.accepts("sampled") and tool.accepts("attempt"):
            new["attempt"] = int(new.get("attempt", 0)) + 1
            new["sampled"] = True
        elif tool.accepts("rephrase"):  # the same greedy request would return the same reply
            new["rephrase"] = int(new.get("rephrase", 0) or 0) + 1
        return new

    def bbox(self, box: BBox) -> BBox:
        lo, hi = self.jitter_px

        def d() -> float:
            return self.rng.choice((-1, 1)) * self.rng.uniform(lo, hi)

        xs = sorted((box.x0 + d(), box.x1 + d()))
        ys = sorted((box.y0 + d(), box.y1 + d()))
        moved = BBox(xs[0], ys[0], xs[1], ys[1])
        if self.image_size:
            moved = moved.clip(*self.image_size)
        return moved


def describe_variation(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """Δθ in words, for the repair event: which inputs changed and how (None: nothing changed)."""
    parts = []
    for key in _BOX_KEYS:
        if new.get(key) is not None and new.get(key) != old.get(key):
            box = new[key] if isinstance(new[key], BBox) else BBox.from_list(list(new[key]))
            parts.append(f"{key}→[{', '.join(f'{v:.0f}' for v in box.as_list())}]")
    if new.get("query") != old.get("query") and isinstance(new.get("query"), str):
        parts.append(f"query+={new['query'][len(str(old.get('query') or '')) :].strip()!r}")
    if new.get("sampled") and (not old.get("sampled") or new.get("attempt") != old.get("attempt")):
        parts.append(f"sampled draw attempt={new.get('attempt')}")
    if new.get("rephrase", 0) != old.get("rephrase", 0):
        parts.append(f"rephrase={new.get('rephrase')}")
    return "; ".join(parts) or None
