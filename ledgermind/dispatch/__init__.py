"""Adaptive Dual-Path Dispatcher (App. D.1, D.2, Tables 4–6): φ(q), question types, F(q), M(q), OC categories."""

from ledgermind.dispatch.classifier import AlphaChars, DispatchConfig, classify
from ledgermind.dispatch.keywords import has_uncertainty_marker
from ledgermind.dispatch.question_types import QuestionProfile, QuestionType, profile

__all__ = [
    "AlphaChars",
    "DispatchConfig",
    "QuestionProfile",
    "QuestionType",
    "classify",
    "has_uncertainty_marker",
    "profile",
]
