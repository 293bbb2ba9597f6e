"""``score(item, reply_text)``: one entry point that dispatches on ``Item.answer_type``.

* MCQ → the official MMMU-Pro parser (``mmmu.py``); the options are ``item.options`` or, for
  the vision setting where options exist only as pixels, ``item.meta["options"]``;
* NUMERIC → the type-aware tolerance of ``numeric.py`` (``meta["numeric_kind"]``,
  ``meta["graduation"]``);
* OPEN → normalised exact / whole-phrase containment match (the MMMU open-answer rule) with
  ``score``; with a judge model through ``ascore(..., judge=Judge(backend))`` → {0, 0.5, 1}.

``ScoreResult.parsed`` is False when no answer could be extracted; such replies score 0 and
are reported as a separate count (the runner's "unparsed answers").
"""

from __future__ import annotations

import random
import re
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Any

from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.scoring.judge import Judge
from ledgermind.scoring.mmmu import choice_info, parse_multi_choice_response
from ledgermind.scoring.numeric import NumericTolerance, numbers_match, parse_number


@dataclass(frozen=True)
class ScoringConfig:
    # None: an unparsable MCQ reply is wrong and counted. An int: upstream's random letter,
    # seeded per item (seed, item id) so the result does not depend on run order or concurrency.
    random_letter_seed: int | None = None
    tolerance: NumericTolerance = field(default_factory=NumericTolerance)


@dataclass(frozen=True)
class ScoreResult:
    prediction: str | None
    correct: float  # 0.0 / 1.0, or 0.5 for partial credit from a judge
    parsed: bool
    detail: dict[str, Any] = field(default_factory=dict)


def score(item: Item, reply_text: str, config: ScoringConfig | None = None) -> ScoreResult:
    cfg = config or ScoringConfig()
    reply_text = reply_text or ""
    if item.answer_type is AnswerType.MCQ:
        return _score_mcq(item, reply_text, cfg)
    if item.answer_type is AnswerType.NUMERIC:
        return _score_numeric(item, reply_text, cfg)
    return _score_open_exact(item, reply_text)


async def ascore(
    item: Item, reply_text: str, judge: Judge | None = None, config: ScoringConfig | None = None
) -> ScoreResult:
    """``score``, except that OPEN items go to ``judge`` when one is given."""
    if item.answer_type is not AnswerType.OPEN or judge is None:
        return score(item, reply_text, config)
    response = extract_final_answer(reply_text or "")
    if not response:
        return ScoreResult(None, 0.0, False, {"method": "judge", "reason": "empty reply"})
    verdict = await judge.grade(item.question, item.answer or "", response)
    return ScoreResult(
        response,
        verdict.score,
        True,
        {"method": "judge", "judge_parsed": verdict.parsed, "judge_reply": verdict.raw},
    )


def extract_final_answer(reply: str) -> str:
    """Text after the last ``Answer:`` (first line of it), else the whole reply, stripped."""
    pos = reply.rfind("Answer:")
    if pos == -1:
        return reply.strip()
    tail = reply[pos + len("Answer:") :].strip()
    return tail.splitlines()[0].strip() if tail else ""


def _score_mcq(item: Item, reply: str, cfg: ScoringConfig) -> ScoreResult:
    options = item.options or item.meta.get("options") or []
    index2ans, letters = choice_info(options)
    rng = random.Random(f"{cfg.random_letter_seed}:{item.id}") if cfg.random_letter_seed is not None else None
    parsed = parse_multi_choice_response(reply, letters, index2ans, rng)
    correct = float(parsed.letter is not None and parsed.letter == item.answer)
    is_parsed = parsed.letter is not None and parsed.method != "random"
    return ScoreResult(parsed.letter, correct, is_parsed, {"method": parsed.method})


def _score_numeric(item: Item, reply: str, cfg: ScoringConfig) -> ScoreResult:
    kind, grad = item.meta.get("numeric_kind"), item.meta.get("graduation")
    pred = parse_number(reply)
    gold = parse_number(item.answer or "")
    if pred is None:
        return ScoreResult(None, 0.0, False, {"method": "none", "kind": kind})
    tol = cfg.tolerance
    if (relative := item.meta.get("numeric_tolerance")) is not None:  # the benchmark's own (numeric.py)
        tol = replace(tol, relative_all=float(relative))
    ok = gold is not None and numbers_match(pred, gold, kind, grad, tol)
    detail = {
        "method": "numeric",
        "kind": kind,
        "graduation": grad,
        "abs_error": None if gold is None else abs(pred - gold),
    }
    return ScoreResult(_fmt(pred), float(ok), True, detail)


def _score_open_exact(item: Item, reply: str) -> ScoreResult:
    pred = extract_final_answer(reply)
    if not pred:
        return ScoreResult(None, 0.0, False, {"method": "none"})
    p, g = normalise_text(pred), normalise_text(item.answer or "")
    if g and p == g:
        return ScoreResult(pred, 1.0, True, {"method": "exact"})
    hit = bool(g) and re.search(rf"(?<!\w){re.escape(g)}(?!\w)", p) is not None
    return ScoreResult(pred, float(hit), True, {"method": "contains" if hit else "mismatch"})


def normalise_text(s: str) -> str:
    """Case, accents, punctuation and whitespace folded: "Platform-7." ≈ "platform 7"."""
    s = unicodedata.normalize("NFKD", s)
    s = "".join(c for c in s if not unicodedata.combining(c)).lower()
    s = re.sub(r"[^\w\s]", " ", s)
    return " ".join(s.split())


def _fmt(x: float) -> str:
    return str(int(x)) if x.is_integer() else repr(x)
