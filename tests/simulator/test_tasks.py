"""Task recognition by the output FORMAT a request asks for: every template the pipeline renders."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledgermind.prompts import schemas
from ledgermind.prompts.templates import ALL_TEMPLATES, LEDGER_TITLE
from ledgermind.repair import HALLUCINATION_WARNING
from ledgermind.simulator.tasks import PromptView, Task, recognise

SNAPSHOTS = Path(__file__).resolve().parents[1] / "prompts" / "snapshots"
EXPECTED = {
    "plan": Task.PLAN,
    "observe": Task.OBSERVE,
    "reason": Task.REASON,
    "decide": Task.DECIDE,
    "hypothesis": Task.HYPOTHESIS,
    "entity_recheck": Task.ANSWER,
    "direct": Task.ANSWER,
    "concise": Task.ANSWER,
    "dual_read": Task.READ,
    "visual_fallback": Task.ANSWER,
    "reflect": Task.ANSWER,
    "native_cot": Task.ANSWER,
    "no_ledger": Task.ANSWER,
}


def test_every_template_has_an_expected_task():
    """A new template must be given a format the simulator knows (or it gets a generic answer)."""
    assert set(EXPECTED) == set(ALL_TEMPLATES)


@pytest.mark.parametrize("name", sorted(ALL_TEMPLATES))
def test_snapshot_prompt_is_recognised(name):
    """The pinned rendering of each template (tests/prompts/snapshots) maps to its task."""
    assert recognise((SNAPSHOTS / f"{name}.txt").read_text(encoding="utf-8")) is EXPECTED[name]


@pytest.mark.parametrize("name", sorted(ALL_TEMPLATES))
def test_live_template_with_other_fields_is_recognised(name):
    fields = dict.fromkeys(ALL_TEMPLATES[name].get_identifiers(), "x")
    fields.update(max_oc=5, question="How many bolts hold the flange in <image 1>?")
    assert recognise(ALL_TEMPLATES[name].substitute(**fields)) is EXPECTED[name]


@pytest.mark.parametrize(
    ("schema", "task"),
    [
        (schemas.CLAIMS, Task.REASON),
        (schemas.OBSERVATIONS, Task.OBSERVE),
        (schemas.DECISION, Task.DECIDE),
        (schemas.READING, Task.READ),
    ],
)
def test_a_json_schema_decides_the_task_whatever_the_text(schema, task):
    assert recognise("Please help with this.", schema) is task


def test_a_request_without_a_format_is_unknown():
    """The SWITCH VQA request and free text ask for no format: a generic answer (what is legible)."""
    assert recognise("Transcribe the visible text and values for this question: what is it?") is Task.UNKNOWN
    assert recognise("") is Task.UNKNOWN


def test_one_parser_reads_the_ledger_and_the_transcript():
    ledger = "OC-1 | PERCEPTION TEXT | 0.92 | Apollo 11 Plaque\nOC-2 | RETRIEVAL | 0.85 | landed 1969"
    transcript = "[OC-1] ocr: Apollo 11 Plaque\n[OC-2] search: landed 1969"
    for block in (ledger, transcript):
        text = ALL_TEMPLATES["reason"].substitute(
            method="m",
            granularity="g",
            warning=HALLUCINATION_WARNING,
            question="Q?",
            evidence_title=LEDGER_TITLE,
            ledger=block,
        )
        v = PromptView.of(text, "Q?")
        assert v.task is Task.REASON
        assert [(e.id, e.fact) for e in v.evidence] == [("OC-1", "Apollo 11 Plaque"), ("OC-2", "landed 1969")]


def test_context_excludes_question_and_options_and_the_shown_judgment_ignores_confidence():
    def view(sigma: float):
        text = ALL_TEMPLATES["decide"].substitute(
            question="Which mission?",
            options="Options:\nA. Apollo 13\nB. Apollo 11",
            granularity="g",
            evidence_title=LEDGER_TITLE,
            ledger="OC-1 | PERCEPTION TEXT | 0.92 | plaque",
            claims=f"[SC-1][J] The answer is B. Apollo 11 | Based on: [OC-1] | confidence {sigma:.2f}",
        )
        return PromptView.of(text, "Which mission?")

    v = view(0.92)
    assert "Apollo 13" not in v.context and "Which mission?" not in v.context
    assert v.claims[0].id == "SC-1" and v.shown_judgment() == "B"
    assert view(0.10).shown_judgment() == "B"


@pytest.mark.parametrize(
    ("line", "held"),
    [
        ("Your current answer: C, as someone said", "C"),
        ("Current hypothesis: the answer is D. Vostok 1", "D"),
        ("Your first answer: 36.5", "36.5"),
        ("Your current answer: (none yet)", None),
    ],
)
def test_a_held_answer_is_a_shown_judgment(line, held):
    assert (
        PromptView.of(
            f"Question: Q?\n{line}\nEnd with one line: Answer: <revised answer>", "Q?"
        ).shown_judgment()
        == held
    )


NOISE = "\n".join(
    [
        "1. Observation targets: the dial\n5. Answer granularity: a number",
        "[OC-1] TEXT | Apollo 11 Plaque",
        "1. Supporting evidence: none\n3. Conclusion: Revise: the answer is B. Apollo 11",
        "Critique: re-checking it.\nAnswer: B",
    ]
)


@pytest.mark.parametrize("name", sorted(ALL_TEMPLATES))
def test_embedded_replies_and_evidence_do_not_change_the_task(name):
    """Ledger lines, transcripts and claims quote earlier replies (a plan, a revision ...): the task
    is the format the prompt asks for, not one its evidence happens to show."""
    fields = dict.fromkeys(ALL_TEMPLATES[name].get_identifiers(), NOISE)
    fields.update(max_oc=5, question="What is the reading of the gauge in <image 1>?")
    assert recognise(ALL_TEMPLATES[name].substitute(**fields)) is EXPECTED[name]
