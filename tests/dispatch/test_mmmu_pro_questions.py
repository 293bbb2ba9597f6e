"""The dispatcher over every question of the real MMMU-Pro text file: no crash, deterministic."""

from __future__ import annotations

import json

from ledgermind.dispatch import profile
from ledgermind.dispatch.classifier import Complexity
from ledgermind.studies.dispatch_stats import dispatch_stats, main, read_questions


def test_all_mmmu_pro_questions(shared_data) -> None:
    path = shared_data / "mmmu_pro_all_text.jsonl"
    rows = read_questions(path)
    assert len(rows) == 1671
    first = [profile(q, o) for q, o in rows]
    second = [profile(q, o) for q, o in rows]
    assert first == second
    assert all(p.complexity in (Complexity.SIMPLE, Complexity.COMPLEX) for p in first)
    q_only = dispatch_stats((q, None) for q, _ in rows)
    assert q_only.total == 1671 and sum(q_only.complexity.values()) == 1671
    # with lettered options every real MCQ trips Condition 4
    with_opts = dispatch_stats(rows)
    assert with_opts.conditions["C4_mcq"] == sum(1 for _, o in rows if o and len(o) >= 2)


def test_stats_cli(shared_data, capsys) -> None:
    assert main([str(shared_data / "mmmu_pro_all_text.jsonl")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["question_only"]["total"] == 1671


def test_stats_cli_missing_file(tmp_path, capsys) -> None:
    assert main([str(tmp_path / "nope.jsonl")]) == 2
    assert "not found" in capsys.readouterr().err
