"""The dispatcher over every question of the real MMMU-Pro text file: no crash, deterministic."""

from __future__ import annotations

from ledgermind.dispatch import profile
from ledgermind.dispatch.classifier import Complexity
from ledgermind.jsonl import read_jsonl


def test_all_mmmu_pro_questions(shared_data) -> None:
    rows = [
        (str(r.value["question"]), r.value.get("options"))
        for r in read_jsonl(shared_data / "mmmu_pro_all_text.jsonl", torn_tail=False)
    ]
    assert len(rows) == 1671
    first = [profile(q, o) for q, o in rows]
    second = [profile(q, o) for q, o in rows]
    assert first == second
    assert all(p.complexity in (Complexity.SIMPLE, Complexity.COMPLEX) for p in first)
    assert all(profile(q, None).complexity in (Complexity.SIMPLE, Complexity.COMPLEX) for q, _ in rows)
    # with lettered options every real MCQ trips Condition 4
    c4 = sum(any(c.value == "C4_mcq" for c in p.reasons) for p in first)
    assert c4 == sum(1 for _, o in rows if o and len(o) >= 2)
