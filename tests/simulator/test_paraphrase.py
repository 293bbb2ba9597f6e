"""Format, not wording: every prompt template rewritten (synonyms, reordered sentences, the same
output formats and field labels) gives the simulator the same task and the same reply.

Why: the old simulator recognised tasks by template phrases, so changing "Decide" to "Choose" in
one template made the model return only OCR lines. With ``rephrase_sensitivity`` 0 a
paraphrase is the same request to the simulated model; with it above 0 a paraphrase re-draws the
reply with that probability, and only then.
"""

from __future__ import annotations

from string import Template

import pytest

from ledgermind.prompts.templates import ALL_TEMPLATES, LEDGER_TITLE
from ledgermind.repair import HALLUCINATION_WARNING
from ledgermind.simulator.tasks import recognise
from tests.simulator.conftest import request

PARAPHRASES: dict[str, Template] = {
    "plan": Template("""Nothing of the image is shown yet; only the question below. Draft how you would go about it.

Question: $question

Fill in these five fields, nothing else:
1. Observation targets: what in the picture has to be examined.
2. Reasoning method: the route from what is seen to the answer. Follow: $method
3. Judgment criteria: which evidence would settle each candidate.
4. Answer form: a number, a name, a description or an option letter.
5. Answer granularity: $granularity"""),
    "observe": Template("""Question: $question
Plan:
$plan

Examine the picture(s) carefully. Give at most $max_oc detailed observations useful for the question, one per line, as
[OC-i] CATEGORY | what you see
each with exactly one category from:
Categories:
$categories
Do not give the answer yet; write only what can be seen."""),
    "reason": Template("""$warning
Question: $question
Using the evidence below, reach an answer in three steps ([E] combine entries, [I] infer from them, [J] give the final judgment).
Method: $method
Granularity: $granularity
Each claim has to name the ids it relies on; claims without them are thrown away.
One claim per line, formatted as
[SC-j][E/I/J] conclusion | Based on: [OC-a], [OC-b]

$evidence_title
$ledger"""),
    "decide": Template("""The pictures are attached once more; check the reasoning against them and choose the final answer.
$evidence_title
$ledger

Claims so far:
$claims

Question: $question
$options
Granularity: $granularity
Respond in a single line:
Answer: <final answer> | Based on: [ids of the entries or claims that support it]"""),
    "hypothesis": Template("""Question: $question
Current hypothesis: $hypothesis
WARNING: no text read from the picture contains the central entities of this hypothesis; the language model may have made them up.
Observations confirmed so far:
$pool

Try to refute the hypothesis. Inspect the picture again and write:
1. Supporting evidence: details that back it.
2. Contradicting evidence: details that speak against it (or "None").
3. Conclusion: either "Confirm: <hypothesis>" or "Revise: <new answer>".
Rely only on text and numbers that can really be seen."""),
    "entity_recheck": Template("""Question: $question
$options
Only these texts and numbers have been verified in the picture:
$pool

Reply using nothing but the items above; mention no other name, entity or number.
Answer: """),
    "direct": Template("""OCR text from the picture (possibly partial):
$ocr
Question: $question
$options
Granularity: $granularity
Respond to the question about the picture(s) in one line: Answer: <answer>"""),
    "concise": Template("""Search results from the web: $results
Question: $question
$options
Earlier reply: $initial
Compare the earlier reply with the search results and fix it if necessary. State the FINAL reply as briefly as possible.
Answer: """),
    "dual_read": Template("""Report the value this enlarged crop of a display or instrument shows, to the precision of its marks, with all decimals.
Give only the number and its unit, e.g. "36.7 °C"."""),
    "visual_fallback": Template("""Question: $question
$options
Examine the picture(s) and reply straight away with a specific answer; saying you cannot tell is not permitted.
Answer: """),
    "reflect": Template("""Question: $question
Your current answer: $answer
Your current claims:
$claims
A check raised this issue: $problem
Assess the reasoning critically and rewrite it. Close with one line: Answer: <revised answer>"""),
    "native_cot": Template("""Tool outputs you may use:
$evidence
Question: $question
$options
Reason it through step by step about the picture(s), then conclude with one line: Answer: <answer>"""),
    "no_ledger": Template("""Transcript of tool outputs:
$transcript
Question: $question
$options
Granularity: $granularity
Reason step by step about the picture(s), citing tool outputs by number such as [3]. Conclude with one line: Answer: <answer>"""),
}

Q = "Which mission does the plaque in <image 1> commemorate?"
OPTS = (
    "Options:\nA. Apollo 13\nB. Apollo 11\nC. Gemini 4\nD. Vostok 1\nAnswer with the option letter (A/B/C/D)."
)
LEDGER = "OC-1 | PERCEPTION TEXT | 0.92 | Apollo 11 Plaque\nOC-2 | PERCEPTION NUMBER | 0.92 | 1969"
FIELDS = {
    "question": Q,
    "options": OPTS,
    "granularity": "one option letter",
    "method": "compare",
    "plan": "1. look",
    "categories": "TEXT: printed text\nNUMBER: numbers\nOBJECT: objects",
    "max_oc": 5,
    "warning": HALLUCINATION_WARNING,
    "evidence_title": LEDGER_TITLE,
    "ledger": LEDGER,
    "claims": "[SC-3][J] The answer is D. Vostok 1 | Based on: [OC-1] | confidence 0.55",
    "hypothesis": "the answer is D. Vostok 1",
    "pool": "- Apollo 11 Plaque\n- 1969",
    "ocr": "- Apollo 11 Plaque",
    "results": "Apollo 11 landed in 1969",
    "initial": "A",
    "problem": "T5 no support",
    "answer": "D",
    "evidence": "[1] ocr: Apollo 11 Plaque",
    "transcript": "[OC-1] ocr: Apollo 11 Plaque",
}


def test_every_template_has_a_paraphrase_with_the_same_fields():
    assert set(PARAPHRASES) == set(ALL_TEMPLATES)
    for name, t in PARAPHRASES.items():
        assert set(t.get_identifiers()) == set(ALL_TEMPLATES[name].get_identifiers()), name


@pytest.mark.parametrize("name", sorted(ALL_TEMPLATES))
def test_paraphrase_keeps_the_task_and_the_reply(name, make_backend, key_items):
    original = ALL_TEMPLATES[name].substitute(FIELDS)
    paraphrase = PARAPHRASES[name].substitute(FIELDS)
    assert original != paraphrase
    assert recognise(original) is recognise(paraphrase)
    images = [key_items[0].images[0]]
    for seed in range(12):  # many draws: faults, looks, follows and pulls all have a chance to differ
        sim = make_backend(
            seed=seed,
            rephrase_sensitivity=0.0,
            phantom_rate=0.4,
            relation_rate=0.3,
            evidence_pull=0.5,
            format_error_rate=0.0,
            empty_rate=0.0,
        )
        a, b = sim.generate_sync(request(original, images)), sim.generate_sync(request(paraphrase, images))
        assert a.text == b.text, (name, seed)
        assert a.meta["simulator"] == b.meta["simulator"]


def test_with_rephrase_sensitivity_a_paraphrase_re_draws_at_that_rate(make_backend, key_items):
    """s = 0.5: about half of the paraphrased requests get a re-rolled reply (a fresh belief draw,
    which may or may not name another answer), the rest the very same reply."""
    images = [key_items[0].images[0]]
    redrawn = 0
    n = 120
    for seed in range(n):
        sim = make_backend(
            seed=seed, rephrase_sensitivity=0.5, format_error_rate=0.0, empty_rate=0.0, phantom_rate=0.3
        )
        a = sim.generate_sync(request(ALL_TEMPLATES["direct"].substitute(FIELDS), images))
        b = sim.generate_sync(request(PARAPHRASES["direct"].substitute(FIELDS), images))
        redrawn += b.meta["simulator"]["redrawn"]
        if not (a.meta["simulator"]["redrawn"] or b.meta["simulator"]["redrawn"]):
            assert a.text == b.text  # neither re-rolled: the same content gets the same reply
    assert 0.35 * n < redrawn < 0.65 * n
