"""Snapshot tests: silent prompt drift changes results, so every rendered prompt is pinned.

Regenerate after an intended change with ``LEDGERMIND_UPDATE_SNAPSHOTS=1 pytest tests/prompts``
and review the diff of ``tests/prompts/snapshots/`` like code.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ledgermind.prompts.templates import ALL_TEMPLATES, CONCISE_SYSTEM

SNAPSHOTS = Path(__file__).parent / "snapshots"
FIELDS = {
    "question": "Which mission does the plaque in <image 1> commemorate?",
    "options": "Options:\nA. Apollo 11\nB. Apollo 13\nAnswer with the option letter (A/B).",
    "granularity": "Reply with exactly one option letter (A/B).",
    "method": "Analyse each option and eliminate the ones the evidence rules out.",
    "plan": "1. Observation targets: the plaque text",
    "max_oc": 15,
    "categories": "TEXT: Copy every piece of visible text exactly.\nNUMBER: Record every numeric value with its unit.",
    "warning": "",
    "evidence_title": "Evidence ledger (id | type | confidence | fact):",
    "ledger": "OC-1 | PERCEPTION TEXT | 0.95 | Apollo 11 Plaque\nOC-2 | PERCEPTION NUMBER | 0.95 | 1969",
    "claims": "[SC-1][J] Apollo 11 | Based on: [OC-1] | confidence 0.92",
    "hypothesis": "It is the Apollo 13 plaque",
    "pool": "- Apollo 11 Plaque\n- 1969",
    "ocr": "- Apollo 11 Plaque",
    "initial": "Apollo 13",
    "results": "Apollo 11 landed on the Moon in 1969 (local://corpus/apollo)",
    "problem": "T6_PHANTOM_GROUNDING ECC failed",
    "answer": "B",
    "evidence": "[1] ocr: Apollo 11 Plaque\n[2] ocr: 1969",
    "transcript": "[1] ocr: Apollo 11 Plaque\n[2] ocr: 1969",
}


def render(name: str) -> str:
    text = ALL_TEMPLATES[name].substitute(**FIELDS)
    return f"SYSTEM: {CONCISE_SYSTEM}\n{text}" if name == "concise" else text


@pytest.mark.parametrize("name", sorted(ALL_TEMPLATES))
def test_prompt_snapshot(name: str) -> None:
    path = SNAPSHOTS / f"{name}.txt"
    text = render(name)
    if os.environ.get("LEDGERMIND_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no snapshot for {name}: run with LEDGERMIND_UPDATE_SNAPSHOTS=1 and review it"
    assert text == path.read_text(encoding="utf-8"), f"prompt {name!r} drifted from {path}"


def test_every_template_has_a_snapshot_and_no_stray_files() -> None:
    assert {p.stem for p in SNAPSHOTS.glob("*.txt")} == set(ALL_TEMPLATES)


def test_paper_requirements_present() -> None:
    """The App. G requirements that matter, independent of wording."""
    assert "[SC-j][E/I/J] conclusion | Based on: [OC-a], [OC-b]" in render("reason")
    assert "MUST cite" in render("reason")
    assert "[OC-i] CATEGORY" in render("observe") and "at most 15" in render("observe")
    assert "hallucination" in render("hypothesis") and "only text and numbers" in render("hypothesis")
    assert "only the texts and numbers listed above" in render("entity_recheck")
    assert "as few words as possible" in render("concise")
    assert "not the image yet" in render("plan") and render("plan").count("\n") >= 6
