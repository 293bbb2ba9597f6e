"""Uncertainty markers U (App. D.7): a final answer containing one triggers the visual fallback.

System markers ("api_error", "unknown", "need_more") are what our own stages emit when they
fail, so they are matched like words too: "unknown" fires, "unknowns" in a math answer would
as well (plural rule), but "well-known" does not.
"""

from __future__ import annotations

from ledgermind.dispatch.keywords import DEFAULT_KEYWORDS, DispatchKeywords
from ledgermind.dispatch.matcher import find_keywords


def uncertainty_markers_in(answer: str, keywords: DispatchKeywords = DEFAULT_KEYWORDS) -> tuple[str, ...]:
    """The markers of U found in ``answer`` (empty tuple: no fallback)."""
    return find_keywords(answer or "", keywords.uncertainty_markers)


def has_uncertainty_marker(answer: str, keywords: DispatchKeywords = DEFAULT_KEYWORDS) -> bool:
    return bool(uncertainty_markers_in(answer, keywords))
