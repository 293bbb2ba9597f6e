"""Split a claim's text into plain and marked segments (missing entities, unmatched numbers).

The template renders each segment as escaped text, wrapping marked ones in ``<mark>``; this way
highlighting never builds HTML out of model text, so a claim containing markup stays inert.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
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
    kind_of = {n.casefold(): k for n, k in reversed(needles)}  # a text's first needle gives its kind
    # one capturing group: ``split`` alternates plain text (even places) and matches (odd places)
    pattern = re.compile("(" + "|".join(_needle_re(n, k) for n, k in needles) + ")", re.IGNORECASE)
    pieces = enumerate(pattern.split(text))
    return [Segment(p, kind_of.get(p.casefold(), "entity") if i % 2 else None) for i, p in pieces if p]


def _clean(values: Iterable[str]) -> list[str]:
    return [str(v) for v in values if str(v).strip()]


def _needle_re(needle: str, kind: str) -> str:
    body = re.escape(needle)
    # a number must not match inside a longer number ("5" in "15.5")
    return rf"(?<![\d.]){body}(?![\d])" if kind == "number" else body
