"""Three-layer grounding (paper §3.2): support coverage ρ (Eq. 3), ECC (Eq. 4), NCC (Eq. 5).

Everything works on plain strings: a claim and the texts of its cited leaf facts.
"""

from ledgermind.grounding.cascade import (
    GroundingCascade,
    GroundingConfig,
    GroundingResult,
    build_cascade,
    check_claim,
    default_ner,
    demoted_sigma,
)
from ledgermind.grounding.coverage import support_coverage
from ledgermind.grounding.ecc import ECCResult, check_ecc, claim_entities
from ledgermind.grounding.ncc import ClaimKind, NCCResult, check_ncc, number_supported
from ledgermind.grounding.numbers import Number, NumKind, extract_numbers
from ledgermind.grounding.tokens import STOPWORDS, content_tokens

__all__ = [
    "STOPWORDS",
    "ClaimKind",
    "ECCResult",
    "GroundingCascade",
    "GroundingConfig",
    "GroundingResult",
    "NCCResult",
    "NumKind",
    "Number",
    "build_cascade",
    "check_claim",
    "check_ecc",
    "check_ncc",
    "claim_entities",
    "content_tokens",
    "default_ner",
    "demoted_sigma",
    "extract_numbers",
    "number_supported",
    "support_coverage",
]
