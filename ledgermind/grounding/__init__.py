"""Three-layer grounding (paper §3.2): support coverage ρ (Eq. 3), ECC (Eq. 4), NCC (Eq. 5).

Everything works on plain strings: a claim and the texts of its cited leaf facts.
"""

from ledgermind.grounding.cascade import GroundingCascade, GroundingConfig, GroundingResult, build_cascade

__all__ = ["GroundingCascade", "GroundingConfig", "GroundingResult", "build_cascade"]
