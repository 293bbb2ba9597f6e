"""The claim auditor (``ledgermind/claim_audit.py``), run as users run it (python -m
ledgermind.claim_audit / ledgermind audit: argv, stdin, exit code, stdout, stderr)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("spacy", reason="the auditor needs the 'nlp' extra (spacy)")

from tests.experiment.conftest import run_module

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "ledgermind" / "examples" / "claims.jsonl"


def _run(*args: str, stdin: str = "", module: str = "ledgermind.claim_audit") -> subprocess.CompletedProcess:
    return run_module(module, *args, stdin=stdin)


def _records(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_example_file_gives_expected_verdicts():
    proc = _run(str(EXAMPLE))
    assert proc.returncode == 0, proc.stderr
    by_id = {r["id"]: r for r in _records(proc.stdout)}
    assert set(by_id) == {json.loads(line)["id"] for line in EXAMPLE.read_text().splitlines()}
    assert by_id["grounded-reading"]["grounded"] is True
    assert by_id["phantom-entity"]["ecc"] is False and by_id["phantom-entity"]["missing_entities"] == [
        "Apollo 11"
    ]
    assert by_id["phantom-number"]["ncc"] is False and by_id["phantom-number"]["unmatched_numbers"] == [
        "1969"
    ]
    assert by_id["alias"]["grounded"] is True
    assert by_id["option-label"]["ncc"] is False
    assert by_id["missed-by-ner"]["missing_entities"] == ["Beethoven"]
    assert by_id["uncited"]["grounded"] is False
    assert by_id["grounded-mcq"]["grounded"] is True
    for record in by_id.values():
        assert set(record) == {
            "id",
            "coverage",
            "ecc",
            "ncc",
            "grounded",
            "missing_entities",
            "unmatched_numbers",
        }
        assert 0.0 <= record["coverage"] <= 1.0


def test_bad_lines_get_error_records_and_the_run_continues():
    lines = [
        json.dumps({"id": "ok-1", "claim": "Paris is big", "evidence": ["Paris"]}),
        "this is not json",
        "",
        json.dumps({"id": "no-evidence-field", "claim": "x"}),
        json.dumps({"claim": "x", "evidence": []}),
        json.dumps({"id": 7, "claim": "3 cats", "evidence": ["3 cats"], "kind": "guess"}),
        json.dumps(["a", "list"]),
        json.dumps({"id": "ok-2", "claim": "It reads 36.8", "evidence": ["36.7"], "kind": "reading"}),
    ]
    proc = _run("-", stdin="\n".join(lines) + "\n")
    assert proc.returncode == 1
    records = _records(proc.stdout)
    assert [r.get("line") for r in records] == [None, 2, 4, 5, 6, 7, None]
    assert records[0]["id"] == "ok-1" and records[0]["grounded"] is True
    assert records[-1]["id"] == "ok-2" and records[-1]["ncc"] is True
    assert "JSON" in records[1]["error"] and "evidence" in records[2]["error"]
    assert "'id'" in records[3]["error"] and records[4]["id"] == 7 and "kind" in records[4]["error"]
    assert "Traceback" not in proc.stderr


def test_missing_file_is_a_one_line_error():
    proc = _run("/definitely/not/here.jsonl")
    assert proc.returncode == 2 and proc.stdout == ""
    assert (
        proc.stderr.strip().count("\n") == 0 and "not found" in proc.stderr and "Traceback" not in proc.stderr
    )


def test_console_entry_point_dispatches_audit():
    proc = _run("audit", str(EXAMPLE), module="ledgermind.cli")
    assert proc.returncode == 0 and len(_records(proc.stdout)) == 8
    unknown = _run("frobnicate", module="ledgermind.cli")
    assert unknown.returncode == 2 and "unknown command" in unknown.stderr


def test_invalid_threshold_is_a_usage_error():
    proc = _run(str(EXAMPLE), "--beta", "3")
    assert proc.returncode == 2 and "beta" in proc.stderr and "Traceback" not in proc.stderr


def test_strict_ncc_flag_restores_eq5_for_bounds():
    line = (
        json.dumps(
            {
                "id": "b1",
                "claim": "Goa confirmed more than 5 cases.",
                "evidence": ["Goa has confirmed a total of 6 cases."],
            }
        )
        + "\n"
    )
    default = json.loads(_run("-", stdin=line).stdout)
    strict = json.loads(_run("-", "--strict-ncc", stdin=line).stdout)
    assert default["ncc"] is True and strict["ncc"] is False and strict["unmatched_numbers"] == ["5"]
