"""Content tokens Tok(·) for support coverage (paper §3.2, Eq. 3).

Tok(·) "removes stopwords and extracts content tokens". We keep it purely lexical and
deterministic (no NER, no stemming) so that coverage is cheap, reproducible and independent of
the optional NLP extra: lower-case, diacritics stripped, possessives and thousands separators
removed, numbers kept whole ("36.7", "1234") and written in one canonical form so that number
tokens compare as numbers ("410" = "410.0" = "0410", "1.50" = "1.5": a bare-number decision is
supported by the reading it restates), everything else split on non-alphanumerics.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache

from perception.aliases import split_tokens, strip_diacritics

# A standard English stopword list (function words, auxiliaries, pronouns, contraction stubs).
STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all also am an and any are aren as at be because been before
    being below between both but by can cannot could couldn d did didn do does doesn doing don down
    during each either else etc few for from further had hadn has hasn have haven having he her here
    hers herself him himself his how however i if in into is isn it its itself just ll m may me might
    more most must mustn my myself neither no nor not now o of off on once only or other otherwise
    our ours ourselves out over own per re s same shall shan she should shouldn so some such t than
    that the their theirs them themselves then there therefore these they this those through thus to
    too under until up upon us ve very via was wasn we were weren what when where whereas whether
    which while who whom whose why will with within without won would wouldn y yet you your yours
    yourself yourselves
    """.split()
)


_NUMBER = re.compile(r"\d+(?:\.\d+)?")  # the number tokens split_tokens produces


def canonical_token(tok: str) -> str:
    """A number token in its canonical decimal form (no leading zeros, no trailing fractional
    zeros: "410.0" → "410", "1.50" → "1.5"); any other token unchanged.

    WHY: ρ (Eq. 3) intersects token sets; without this a decision "410" shares no token with the
    reading entry "reading 410.0" and T5 fires on a correct bare-number answer.
    """
    if not _NUMBER.fullmatch(tok):
        return tok
    d = Decimal(tok)
    return str(int(d)) if d == d.to_integral_value() else format(d.normalize(), "f")


@lru_cache(maxsize=32768)
def content_tokens(text: str) -> frozenset[str]:
    """Tok(text): the set of content tokens (memoised: evidence facts recur across claims)."""
    return frozenset(
        canonical_token(tok)
        for tok in split_tokens(strip_diacritics(text).casefold())
        if tok not in STOPWORDS
    )
