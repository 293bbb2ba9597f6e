"""Scoring: official MMMU-Pro MCQ parser, type-aware numeric tolerance, {0, 0.5, 1} judge for open answers."""

from ledgermind.scoring.score import ScoringConfig, score

__all__ = ["ScoringConfig", "score"]
