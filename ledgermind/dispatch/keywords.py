"""Keyword lists of the Adaptive Dual-Path Dispatcher (App. D.1) and the uncertainty markers (App. D.7).

The lists are data (``keywords.yaml``, next to this module): every list the paper prints is copied
verbatim, and the lists the paper describes but does not print (the question-type cues of Tables
4–6, the two term families of the Condition-3 pair rule) are our own choices, marked as such there.
A ``DispatchKeywords`` built with other tuples routes on those instead.

Matching rules (``find_keywords``): case-insensitive; ASCII keywords match whole words only
(``scale`` does not fire on ``escalate``, ``count`` not on ``account``, ``meter`` not on
``parameter``), with an optional plural ``s``/``es`` on the last word (``gauges``, ``meters``);
keywords containing CJK characters match as substrings because Chinese has no word boundaries.
Plain substring search (``kw in q``) would route on accidents of spelling — "count" inside
"account"/"country", "meter" inside "parameter", "scale" inside "escalate" — and send most
MMMU-Pro business and physics questions to the deep path. Runs of whitespace in a keyword match
any run of whitespace in the text.

The uncertainty markers U (App. D.7) make a final answer trigger the visual fallback. The system
markers ("api_error", "unknown", "need_more") are what our own stages emit when they fail, so they
are matched like words too: "unknown" fires, "unknowns" in a math answer would as well (plural
rule), but "well-known" does not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

_LISTS = yaml.safe_load(Path(__file__).with_name("keywords.yaml").read_text(encoding="utf-8"))


def _listed(name: str) -> tuple[str, ...]:
    return tuple(_LISTS[name])


@dataclass(frozen=True)
class DispatchKeywords:
    """All keyword lists the dispatcher and the visual-fallback defense read (paper defaults)."""

    precise_perception: tuple[str, ...] = _listed("precise_perception")
    knowledge_fusion: tuple[str, ...] = _listed("knowledge_fusion")
    knowledge_fusion_pinyin: tuple[str, ...] = _listed("knowledge_fusion_pinyin")
    knowledge_fusion_hanzi: tuple[str, ...] = _listed("knowledge_fusion_hanzi")
    verification: tuple[str, ...] = _listed("verification")
    visual_identification: tuple[str, ...] = _listed("visual_identification")
    fact_check: tuple[str, ...] = _listed("fact_check")
    deep_knowledge: tuple[str, ...] = _listed("deep_knowledge")
    uncertainty_english: tuple[str, ...] = _listed("uncertainty_english")
    uncertainty_system: tuple[str, ...] = _listed("uncertainty_system")
    read: tuple[str, ...] = _listed("read")
    location: tuple[str, ...] = _listed("location")
    diff: tuple[str, ...] = _listed("diff")
    char_count: tuple[str, ...] = _listed("char_count")
    count: tuple[str, ...] = _listed("count")
    compare: tuple[str, ...] = _listed("compare")

    @property
    def knowledge_all(self) -> tuple[str, ...]:
        """Condition 2 in every script: English, pinyin and Chinese characters."""
        return self.knowledge_fusion + self.knowledge_fusion_pinyin + self.knowledge_fusion_hanzi

    @property
    def uncertainty_markers(self) -> tuple[str, ...]:
        """The set U of App. D.7."""
        return self.uncertainty_english + self.uncertainty_system


DEFAULT_KEYWORDS = DispatchKeywords()


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def _keyword_pattern(keyword: str) -> str:
    words = [re.escape(w) for w in keyword.strip().split()]
    body = r"\s+".join(words)
    if _CJK.search(keyword):
        return body
    left = r"(?<![A-Za-z0-9_])" if re.match(r"\w", keyword.strip()[0]) else ""
    right = r"(?:e?s)?(?![A-Za-z0-9_])" if re.match(r"\w", keyword.strip()[-1]) else ""
    return f"{left}{body}{right}"


@lru_cache(maxsize=256)
def _compile(keywords: tuple[str, ...]) -> list[tuple[str, re.Pattern[str]]]:
    return [(kw, re.compile(_keyword_pattern(kw), re.IGNORECASE)) for kw in keywords if kw.strip()]


def find_keywords(text: str, keywords: tuple[str, ...]) -> tuple[str, ...]:
    """The keywords (in list order) that occur in ``text`` under the rules above."""
    if not text:
        return ()
    return tuple(kw for kw, pat in _compile(tuple(keywords)) if pat.search(text))


def has_uncertainty_marker(answer: str, keywords: DispatchKeywords = DEFAULT_KEYWORDS) -> bool:
    """Does ``answer`` hold a marker of U (then the visual fallback runs)?"""
    return bool(find_keywords(answer or "", keywords.uncertainty_markers))
