"""Abbreviation definitions found in text, after Schwartz & Hearst (PSB 2003).

Why: ECC must accept "RHS" when the evidence says "Royal Horticultural Society (RHS)" or the
claim defines the short form itself. Hand lists of acronyms cannot keep up; the Schwartz–Hearst
algorithm (the one scispaCy's ``AbbreviationDetector`` implements) finds the definitions a text
states and needs no resource at all:

1. candidates are "long form (short form)" and, when the parenthesis holds more than two words,
   "short form (long form)";
2. a short form has 2–10 characters, at most two words, at least one letter, and starts with a
   letter or digit;
3. the long form is searched among the min(|S| + 5, 2·|S|) words before the parenthesis; the best
   long form is the shortest suffix of that window in which the characters of the short form
   occur in order, scanning right to left, the first character of the short form starting a word.

This is a from-the-paper implementation (no scispaCy dependency: its wheels pin an old spaCy).
"""

from __future__ import annotations

import re
from functools import lru_cache

_PARENS = re.compile(r"\(([^()]{1,200})\)")
_WORD = re.compile(r"\S+")
_MAX_SHORT = 10


def is_short_form(text: str) -> bool:
    """Schwartz–Hearst's short-form test: 2..10 chars, ≤ 2 words, a letter, alphanumeric start."""
    text = text.strip()
    return (
        2 <= len(text) <= _MAX_SHORT
        and len(text.split()) <= 2
        and text[0].isalnum()
        and any(ch.isalpha() for ch in text)
    )


def best_long_form(short: str, candidate: str) -> str | None:
    """The shortest suffix of ``candidate`` that spells ``short`` (Schwartz & Hearst, Fig. 2)."""
    s_index, l_index = len(short) - 1, len(candidate) - 1
    while s_index >= 0:
        ch = short[s_index].lower()
        if not ch.isalnum():
            s_index -= 1
            continue
        while l_index >= 0 and (
            candidate[l_index].lower() != ch
            or (s_index == 0 and l_index > 0 and candidate[l_index - 1].isalnum())
        ):
            l_index -= 1
        if l_index < 0:
            return None
        l_index -= 1
        s_index -= 1
    start = candidate.rfind(" ", 0, l_index + 1) + 1
    long_form = candidate[start:].strip()
    if (
        not long_form
        or len(long_form) <= len(short)
        or " " not in long_form
        and len(short) > 1
        and long_form.lower().startswith(short.lower())
    ):
        return None
    return long_form


@lru_cache(maxsize=16384)
def definitions(text: str) -> tuple[tuple[str, str], ...]:
    """(short form, long form) pairs the text defines with a parenthesis."""
    found: list[tuple[str, str]] = []
    for m in _PARENS.finditer(text):
        inner = m.group(1).strip().split(";")[0].split(",")[0].strip()
        words = _WORD.findall(text[: m.start()])
        if is_short_form(inner):
            window = " ".join(words[-min(len(inner) + 5, 2 * len(inner)) :])
            if long_form := best_long_form(inner, window):
                found.append((inner, long_form.strip(" \"'“”,;:")))
        elif len(inner.split()) > 2:  # "short (long form)"
            if words and is_short_form(words[-1]):
                short = words[-1].strip(" \"'“”,;:")
                if long_form := best_long_form(short, inner):
                    found.append((short, long_form))
    return tuple(found)
