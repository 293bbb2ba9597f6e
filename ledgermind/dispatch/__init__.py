"""Adaptive Dual-Path Dispatcher (App. D.1, D.2, Tables 4–6): φ(q), question types, F(q), M(q), OC categories."""

from ledgermind.dispatch.classifier import (
    AlphaChars,
    Classification,
    Complexity,
    Condition,
    DispatchConfig,
    ascii_alpha_ratio,
    classify,
    mcq_letters,
    render_options,
    render_with_options,
)
from ledgermind.dispatch.keywords import DEFAULT_KEYWORDS, DispatchKeywords
from ledgermind.dispatch.question_types import (
    OC_INSTRUCTIONS,
    OCCategory,
    QuestionProfile,
    QuestionType,
    profile,
)
from ledgermind.dispatch.uncertainty import has_uncertainty_marker, uncertainty_markers_in

__all__ = [
    "AlphaChars",
    "DEFAULT_KEYWORDS",
    "OC_INSTRUCTIONS",
    "Classification",
    "Complexity",
    "Condition",
    "DispatchConfig",
    "DispatchKeywords",
    "OCCategory",
    "QuestionProfile",
    "QuestionType",
    "ascii_alpha_ratio",
    "classify",
    "has_uncertainty_marker",
    "mcq_letters",
    "profile",
    "render_options",
    "render_with_options",
    "uncertainty_markers_in",
]
