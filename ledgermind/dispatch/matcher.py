"""Deterministic keyword matching shared by the classifier, the question-type detector and the
uncertainty check.

Why not plain substring search (``kw in q``): it makes the dispatcher route on accidents of
spelling — "count" inside "account"/"country", "meter" inside "parameter", "scale" inside
"escalate" — which would send most MMMU-Pro business and physics questions to the deep path.
Rules:

* case-insensitive; runs of whitespace in a keyword match any run of whitespace in the text;
* a keyword made of ASCII word characters must start at a word boundary and end at one, except
  that an English plural ``s``/``es`` may follow (``gauges``, ``meters``, ``counts``);
* a keyword containing CJK characters matches as a plain substring (no word boundaries in Chinese).
"""

from __future__ import annotations

import re
from functools import lru_cache

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
