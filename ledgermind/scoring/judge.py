"""Open answers graded {0, 0.5, 1} by a judge model through any ``Backend`` (App. H, I).

The protocol of the paper's Hard-200 and VTC-Bench scoring: 1 for a fully correct answer, 0.5
for a partially correct answer to a question that needs two or more answer elements, 0
otherwise. The judge sees the question, the reference answer and the response, never the
image, and must end with ``Score: <0|0.5|1>``. Replies are parsed leniently (``Score: 1.0``,
``[[0.5]]``, a verdict word) because judge models do not always follow formats; a reply with no
recognisable score counts as 0 and is flagged ``parsed=False``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ledgermind.backends.base import Backend, GenerationRequest, Message

JUDGE_STAGE = "judge"
JUDGE_PROMPT = """You are grading an answer to a visual question against a reference answer.

Question: {question}
Reference answer: {gold}
Response to grade: {response}

Grade the response:
- 1 if it is fully correct (equivalent to the reference; wording, case and units may differ);
- 0.5 if the question needs two or more answer elements and the response gets only some of them right;
- 0 if it is wrong, contradicts the reference, or does not answer.
Explain in one sentence, then end with a line of the form "Score: <0|0.5|1>"."""

_SCORE_LINE = re.compile(r"score\s*[:=]\s*\**\s*(1(?:\.0+)?|0?\.5|0(?:\.0+)?)(?![\d.])", re.IGNORECASE)
_BRACKETED = re.compile(r"\[\[\s*(1(?:\.0+)?|0?\.5|0(?:\.0+)?)\s*\]\]")
_VERDICTS = (("partially correct", 0.5), ("partially", 0.5), ("incorrect", 0.0), ("correct", 1.0))


@dataclass(frozen=True)
class JudgeVerdict:
    score: float
    parsed: bool
    raw: str


def parse_judge_reply(text: str) -> tuple[float, bool]:
    """``(score, parsed)`` from a judge reply; the *last* explicit score wins."""
    text = text or ""
    for pattern in (_SCORE_LINE, _BRACKETED):
        hits = pattern.findall(text)
        if hits:
            return float(hits[-1]), True
    low = text.lower()
    for word, value in _VERDICTS:  # "partially correct" before "incorrect" before "correct"
        if re.search(rf"\b{word}\b", low):
            return value, True
    return 0.0, False


class Judge:
    """Scores open answers with ``backend`` (deterministic decoding, ``request.stage = "judge"``)."""

    def __init__(self, backend: Backend, max_tokens: int = 256, prompt: str = JUDGE_PROMPT) -> None:
        self.backend, self.max_tokens, self.prompt = backend, max_tokens, prompt

    def request(self, question: str, gold: str, response: str) -> GenerationRequest:
        text = self.prompt.format(question=question, gold=gold, response=response)
        return GenerationRequest(
            messages=[Message.text("user", text)],
            temperature=0.0,
            max_tokens=self.max_tokens,
            stage=JUDGE_STAGE,
        )

    async def grade(self, question: str, gold: str, response: str) -> JudgeVerdict:
        reply = await self.backend.generate(self.request(question, gold, response))
        score, parsed = parse_judge_reply(reply.text)
        return JudgeVerdict(score, parsed, reply.text)
