from __future__ import annotations

import asyncio

import pytest

from ledgermind.backends.base import Backend, GenerationRequest, Reply
from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.scoring.judge import Judge, parse_judge_reply
from ledgermind.scoring.score import ascore


class FakeJudgeBackend(Backend):
    name = "fake-judge"

    def __init__(self, reply: str) -> None:
        self.reply, self.requests = reply, []

    async def generate(self, request: GenerationRequest) -> Reply:
        self.requests.append(request)
        return Reply(self.reply)


@pytest.mark.parametrize(
    ("text", "score", "parsed"),
    [
        ("Matches the reference.\nScore: 1", 1.0, True),
        ("Only one of two differences. Score: 0.5", 0.5, True),
        ("score = 0", 0.0, True),
        ("**Score:** 1.0", 1.0, True),
        ("Score: .5", 0.5, True),
        ("Draft Score: 0 ... on reflection Score: 1", 1.0, True),  # last wins
        ("[[0.5]]", 0.5, True),
        ("The response is partially correct.", 0.5, True),
        ("The response is incorrect.", 0.0, True),
        ("Correct.", 1.0, True),
        ("Score: 7", 0.0, False),
        ("I cannot grade this.", 0.0, False),
    ],
)
def test_parse_judge_reply(text: str, score: float, parsed: bool) -> None:
    assert parse_judge_reply(text) == (score, parsed)


def test_judge_through_backend() -> None:
    backend = FakeJudgeBackend("Two of three elements. Score: 0.5")
    item = Item(
        "q1", "Name the two differences.", answer="hat colour; missing dog", answer_type=AnswerType.OPEN
    )
    res = asyncio.run(ascore(item, "blah\nAnswer: the hat colour", judge=Judge(backend)))
    assert res.correct == 0.5 and res.parsed and res.prediction == "the hat colour"
    req = backend.requests[0]
    assert req.stage == "judge" and req.temperature == 0.0
    prompt = req.last_user_text()
    assert (
        "hat colour; missing dog" in prompt
        and "the hat colour" in prompt
        and "Name the two differences." in prompt
    )


def test_judge_not_called_for_mcq_or_empty_reply() -> None:
    backend = FakeJudgeBackend("Score: 1")
    mcq = Item("m", "Q?", options=["a", "b"], answer="B", answer_type=AnswerType.MCQ)
    assert asyncio.run(ascore(mcq, "Answer: B", judge=Judge(backend))).correct == 1.0
    open_item = Item("o", "Q?", answer="x", answer_type=AnswerType.OPEN)
    res = asyncio.run(ascore(open_item, "   ", judge=Judge(backend)))
    assert not res.parsed and res.correct == 0.0
    assert backend.requests == []
