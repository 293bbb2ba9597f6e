"""Split a claim's text into plain and marked segments (missing entities, unmatched numbers).

The template renders each segment as escaped text, wrapping marked ones in ``<mark>``; this way
highlighting never builds HTML out of model text, so a claim containing markup stays inert.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Segment:
    text: str
    mark: str | None = None  # "entity" | "number" | None


def segments(text: str, entities: Iterable[str] = (), numbers: Iterable[str] = ()) -> list[Segment]:
    """Every occurrence of a needle becomes a marked segment; longest needles win overlaps."""
    needles = [(n, "entity") for n in _clean(entities)] + [(n, "number") for n in _clean(numbers)]
    if not text or not needles:
        return [Segment(text)] if text else []
    needles.sort(key=lambda nk: -len(nk[0]))
    kind_of: dict[str, str] = {}
    for n, k in needles:
        kind_of.setdefault(n.casefold(), k)
    pattern = re.compile("|".join(_needle_re(n, k) for n, k in needles), re.IGNORECASE)
    out: list[Segment] = []
    pos = 0
    for m in pattern.finditer(text):
        if m.start() > pos:
            out.append(Segment(text[pos : m.start()]))
        out.append(Segment(m.group(0), kind_of.get(m.group(0).casefold(), "entity")))
        pos = m.end()
    if pos < len(text):
        out.append(Segment(text[pos:]))
    return out


def _clean(values: Iterable[str]) -> list[str]:
    return [str(v) for v in values if str(v).strip()]


def _needle_re(needle: str, kind: str) -> str:
    body = re.escape(needle)
    # a number must not match inside a longer number ("5" in "15.5")
    return rf"(?<![\d.]){body}(?![\d])" if kind == "number" else body


def marked(segs: Sequence[Segment]) -> list[str]:
    """The marked texts, in order (what a reader sees highlighted)."""
    return [s.text for s in segs if s.mark]
