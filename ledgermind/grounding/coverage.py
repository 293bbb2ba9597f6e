"""Support coverage ρ(c) (paper §3.2, Eq. 3).

ρ(c) = |Tok(c) ∩ ⋃_{e ∈ S(c)} Tok(f_e)| / |Tok(c)|: the share of the claim's content tokens that
occur in at least one cited fact. A claim with no content tokens (empty, or only stopwords and
punctuation) asserts nothing checkable lexically, so its coverage is 0.0 — unless its text *is*
a cited fact or a whole word of one, and is itself one word (a one-letter option "S", a label
"RB" read off the image):
then the claim restates its evidence verbatim and ρ = 1.0.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ledgermind.grounding.tokens import content_tokens


def support_coverage(claim: str, pool: Iterable[str]) -> float:
    """ρ(claim) against the cited facts ``pool`` (Eq. 3); 0.0 for a token-less claim."""
    claim_tokens = content_tokens(claim)
    if not claim_tokens:
        return _literal_support(claim, pool)
    supported: set[str] = set()
    for fact in pool:
        supported |= claim_tokens & content_tokens(fact)
        if len(supported) == len(claim_tokens):
            break
    return len(supported) / len(claim_tokens)


def _literal_support(claim: str, pool: Iterable[str]) -> float:
    text = " ".join(claim.casefold().split()).strip(" .,;:!?'\"")
    if not text or " " in text:  # a stopword-only sentence asserts nothing checkable
        return 0.0
    for fact in pool:
        words = " ".join(fact.casefold().split())
        if words.strip(" .,;:!?'\"") == text or re.search(rf"(?<!\w){re.escape(text)}(?!\w)", words):
            return 1.0
    return 0.0
