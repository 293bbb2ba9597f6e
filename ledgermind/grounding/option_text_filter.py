"""Option text is not evidence, also when OCR read it garbled from the page (S-RFA).

The options are the hypothesis space: an evidence line that states an option would ground every
decision that picks it. In MMMU-Pro's vision setting the lettered options are pixels of the page,
so the page's OCR holds every option — rarely verbatim: "D. 616 m/s, 2.54 m^3/s" comes back as
"D.616m/s,2.54m~3/s", a line may run an option into the next, and a short word may lose a letter.
Exact string tests miss those and leak option text into the evidence. Here an evidence line is
compared with each option fuzzily (rapidfuzz when installed, else :mod:`difflib`, same scores):

* a line that *is* an option (after dropping an ``A.``/``(A)`` label), a fragment of one, or a
  labelled line whose text resembles that letter's option, is dropped;
* where the options are rendered into the image (``in_image``: the vision page), a longer line
  that *contains* an option keeps only the text around it. In the standard setting the image is
  the item's own picture: a sign that reads "Apollo 11 plaque" is evidence for "Apollo 11".

Options shorter than ``MIN_FUZZY_CHARS`` ("5", "Yes") are only removed where a line is exactly
that option: a fuzzy "5" would cut every 5 out of the question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher

from ledgermind.grounding.normalize import strip_markup

# A line or span counts as an option when their similarity (0..1, difflib ratio / rapidfuzz
# ratio÷100) reaches this; OCR noise on a 20-character option (3 wrong characters) scores ≈ 0.85.
OPTION_MATCH = 0.8
LABELLED_MATCH = 0.6  # a line that starts with a letter label needs less: the label says which option
MIN_FUZZY_CHARS = 4
_LABEL_RE = re.compile(r"^\s*[(\[]?([A-J])\s*[)\].:]\s*")
_NON_WORD_RE = re.compile(r"[^\w%°]+")

try:  # optional speed-up; the scores are on the same 0..1 scale
    from rapidfuzz import fuzz as _fuzz

    def similarity(a: str, b: str, floor: float = 0.0) -> float:
        """Similarity of ``a`` and ``b`` in 0..1 (a value below ``floor`` may be reported as 0)."""
        return float(_fuzz.ratio(a, b, score_cutoff=floor * 100)) / 100.0
except ImportError:  # pragma: no cover - depends on the environment

    def similarity(a: str, b: str, floor: float = 0.0) -> float:
        """Similarity of ``a`` and ``b`` in 0..1 (a value below ``floor`` may be reported as 0)."""
        sm = SequenceMatcher(None, a, b, autojunk=False)
        if floor and (sm.real_quick_ratio() < floor or sm.quick_ratio() < floor):
            return 0.0
        return sm.ratio()


def squash(text: str) -> str:
    """Comparison form: markup stripped, lower case, punctuation and spaces removed (OCR drops
    and adds spaces and punctuation freely)."""
    return _NON_WORD_RE.sub("", strip_markup(text).casefold())


def without_options(
    evidence: Sequence[str], options: Sequence[str] | None, *, in_image: bool = False
) -> list[str]:
    """``evidence`` with the option text removed (module docstring)."""
    opts = [str(o) for o in options or [] if str(o).strip()]
    if not opts:
        return list(evidence)
    squashed = [squash(o) for o in opts]
    out = []
    for fact in evidence:
        kept = _strip_options(fact, squashed, in_image)
        if kept is not None and squash(kept):
            out.append(kept)
    return out


def _strip_options(fact: str, squashed: Sequence[str], in_image: bool) -> str | None:
    """None when the line is an option; else the line minus any option it contains."""
    m = _LABEL_RE.match(fact)
    body = fact[m.end() :] if m else fact
    b = squash(body)
    if not b:
        return None if m else fact
    for o in squashed:
        if not o:
            continue
        if b == o or (len(b) >= 3 and b in o) or (len(o) >= MIN_FUZZY_CHARS and _fragment_of(b, o)):
            return None
    if m is not None and in_image:
        idx = ord(m.group(1)) - ord("A")
        if (
            idx < len(squashed)
            and len(squashed[idx]) >= MIN_FUZZY_CHARS
            and similarity(b, squashed[idx], LABELLED_MATCH) >= LABELLED_MATCH
        ):
            return None
    for o in sorted(squashed, key=len, reverse=True) if in_image else ():
        if len(o) >= MIN_FUZZY_CHARS:
            fact = _cut(fact, o)
    return fact


def _fragment_of(b: str, o: str) -> bool:
    """``b`` is ``o`` or a piece of it, up to OCR noise."""
    if similarity(b, o, OPTION_MATCH) >= OPTION_MATCH:
        return True
    return len(b) >= MIN_FUZZY_CHARS and len(b) < len(o) and _best_window(o, b)[0] >= OPTION_MATCH


def _best_window(haystack: str, needle: str) -> tuple[float, int, int]:
    """The best similarity of ``needle`` with a window of ``haystack`` of about its length."""
    n = len(needle)
    best = (0.0, 0, 0)
    for size in sorted({max(1, n - 2), n, n + 2}):
        for start in range(0, max(1, len(haystack) - size + 1)):
            score = similarity(needle, haystack[start : start + size], OPTION_MATCH)
            if score > best[0]:
                best = (score, start, start + size)
    return best


_KEEP_CHAR = re.compile(r"[\w%°]")
_TRAILING_LABEL = re.compile(r"[(\[]?\b[A-J]\s*[)\].:]\s*$")


def _cut(fact: str, option: str) -> str:
    """Remove the span of ``fact`` that fuzzily spells ``option`` (and the label before it)."""
    kept = [i for i, ch in enumerate(fact) if _KEEP_CHAR.match(ch)]
    flat = "".join(fact[i].lower() for i in kept)
    if len(flat) <= len(option):
        return fact
    score, lo, hi = _best_window(flat, option)
    if score < OPTION_MATCH:
        return fact
    start, end = kept[lo], kept[min(hi, len(kept)) - 1] + 1
    head = _TRAILING_LABEL.sub("", fact[:start])
    return " ".join(f"{head} {fact[end:]}".split())
