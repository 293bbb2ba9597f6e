"""Task recognition from prompt text: every template the pipeline renders must be recognised."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledgermind.prompts.templates import ALL_TEMPLATES
from ledgermind.repair import HALLUCINATION_WARNING
from ledgermind.simulator.tasks import PromptView, Task, recognise

SNAPSHOTS = Path(__file__).resolve().parents[1] / "prompts" / "snapshots"
EXPECTED = {
    "plan": Task.PLAN, "observe": Task.OBSERVE, "reason": Task.REASON, "decide": Task.DECIDE,
    "hypothesis": Task.HYPOTHESIS, "entity_recheck": Task.ENTITY_RECHECK, "direct": Task.DIRECT,
    "concise": Task.CONCISE, "dual_read": Task.READ, "visual_fallback": Task.VISUAL_FALLBACK,
    "reflect": Task.REFLECT, "native_cot": Task.NATIVE_COT, "no_ledger": Task.NO_LEDGER,
}  # fmt: skip


def test_every_template_has_an_expected_task():
    """A new template must be taught to the simulator (or it would get a generic answer)."""
    assert set(EXPECTED) == set(ALL_TEMPLATES)


@pytest.mark.parametrize("name", sorted(ALL_TEMPLATES))
def test_snapshot_prompt_is_recognised(name):
    """The pinned rendering of each template (tests/prompts/snapshots) maps to its task."""
    assert recognise((SNAPSHOTS / f"{name}.txt").read_text(encoding="utf-8")) is EXPECTED[name]


@pytest.mark.parametrize("name", sorted(ALL_TEMPLATES))
def test_live_template_with_other_fields_is_recognised(name):
    """Rendered from ledgermind.prompts with different field values than the snapshots."""
    fields = dict.fromkeys(ALL_TEMPLATES[name].get_identifiers(), "x")
    fields.update(max_oc=5, question="How many bolts hold the flange in <image 1>?")
    assert recognise(ALL_TEMPLATES[name].substitute(**fields)) is EXPECTED[name]


def test_unknown_prompt():
    assert recognise("Transcribe the visible text and values for this question: what is it?") is Task.UNKNOWN
    assert recognise("") is Task.UNKNOWN


def test_prompt_view_parses_ledger_claims_and_warning():
    text = ALL_TEMPLATES["reason"].substitute(
        method="m", granularity="g", warning=HALLUCINATION_WARNING, question="Q?",
        ledger="OC-1 | PERCEPTION TEXT | 0.92 | Apollo 11 Plaque\nOC-2 | RETRIEVAL | 0.85 | landed 1969",
    )  # fmt: skip
    v = PromptView.of(text, "Q?")
    assert v.task is Task.REASON and v.warned
    assert [(ln.id, ln.fact) for ln in v.ledger] == [("OC-1", "Apollo 11 Plaque"), ("OC-2", "landed 1969")]
    plain = PromptView.of(text.replace(HALLUCINATION_WARNING, ""), "Q?")
    assert not plain.warned


def test_prompt_view_evidence_excludes_question_and_options():
    text = ALL_TEMPLATES["decide"].substitute(
        question="Which mission?", options="Options:\nA. Apollo 13\nB. Apollo 11", granularity="g",
        ledger="OC-1 | PERCEPTION TEXT | 0.92 | plaque", claims="[SC-1][J] The answer is B. Apollo 11 | Based on: [OC-1] | confidence 0.92",
    )  # fmt: skip
    v = PromptView.of(text, "Which mission?")
    assert "Apollo 13" not in v.evidence and "Which mission?" not in v.evidence
    assert v.claims[0].id == "SC-1" and v.claims[0].sigma == pytest.approx(0.92)


NOISE = "\n".join([
    (SNAPSHOTS / "plan.txt").read_text(encoding="utf-8").split("\n", 1)[1],  # a prompt's tail, as a reply might echo
    "1. Observation targets: the dial\n5. Answer granularity: a number",
    "[OC-1] TEXT | Apollo 11 Plaque",
    "1. Supporting evidence: none\n3. Conclusion: Revise: the answer is B. Apollo 11",
    "Critique: re-checking it.\nAnswer: B",
])  # fmt: skip


@pytest.mark.parametrize("name", sorted(ALL_TEMPLATES))
def test_embedded_replies_and_evidence_do_not_change_the_task(name):
    """Ledger lines, transcripts and claims quote earlier replies (a plan, a revision ...): the
    task must be read from the prompt's instructions, not from the evidence it carries."""
    fields = dict.fromkeys(ALL_TEMPLATES[name].get_identifiers(), NOISE)
    fields.update(max_oc=5, question="What is the reading of the gauge in <image 1>?")
    assert recognise(ALL_TEMPLATES[name].substitute(**fields)) is EXPECTED[name]
