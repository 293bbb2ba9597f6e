"""Scoring: official MMMU-Pro MCQ parser, type-aware numeric tolerance, {0, 0.5, 1} judge for open answers."""

from ledgermind.scoring.judge import Judge, JudgeVerdict, parse_judge_reply
from ledgermind.scoring.mmmu import ParsedChoice, choice_info, parse_multi_choice_response
from ledgermind.scoring.numeric import NumericTolerance, numbers_match, parse_number
from ledgermind.scoring.score import ScoreResult, ScoringConfig, ascore, extract_final_answer, score

__all__ = [
    "Judge",
    "JudgeVerdict",
    "NumericTolerance",
    "ParsedChoice",
    "ScoreResult",
    "ScoringConfig",
    "ascore",
    "choice_info",
    "extract_final_answer",
    "numbers_match",
    "parse_judge_reply",
    "parse_multi_choice_response",
    "parse_number",
    "score",
]
