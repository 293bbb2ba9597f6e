"""Support coverage ρ(c) (paper §3.2, Eq. 3).

ρ(c) = |Tok(c) ∩ ⋃_{e ∈ S(c)} Tok(f_e)| / |Tok(c)|: the share of the claim's content tokens that
occur in at least one cited fact. A claim with no content tokens (empty, or only stopwords and
punctuation) asserts nothing checkable, so its coverage is defined as 0.0: it can never clear the
decision threshold β on lexical grounds alone.
"""

from __future__ import annotations

from collections.abc import Iterable

from ledgermind.grounding.tokens import content_tokens


def support_coverage(claim: str, pool: Iterable[str]) -> float:
    """ρ(claim) against the cited facts ``pool`` (Eq. 3); 0.0 for a token-less claim."""
    claim_tokens = content_tokens(claim)
    if not claim_tokens:
        return 0.0
    supported: set[str] = set()
    for fact in pool:
        supported |= claim_tokens & content_tokens(fact)
        if len(supported) == len(claim_tokens):
            break
    return len(supported) / len(claim_tokens)
