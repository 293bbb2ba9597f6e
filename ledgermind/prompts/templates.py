"""One prompt template per pipeline stage (paper App. G), written in our own words.

Each template follows the structure and the requirements of its App. G counterpart (fields,
citation format, restrictions) without copying its wording. Templates are plain
``string.Template`` texts so that a snapshot test can pin every rendered prompt: silent prompt
drift changes results and must fail a test.
"""

from __future__ import annotations

from string import Template

# G.1 — task planning from the question text alone.
PLAN = Template(
    """You plan how to answer a visual question. You see only the question, not the image yet.

Question: $question

Write a short plan with exactly these five fields:
1. Observation targets: which visual elements must be inspected.
2. Reasoning method: how the answer follows from those observations. Use: $method
3. Judgment criteria: what evidence would confirm or rule out each candidate answer.
4. Answer form: number, name, description or option letter.
5. Answer granularity: $granularity"""
)

# G.2 — observation-claim extraction (categories from Table 5 + plan-injected ones).
OBSERVE = Template(
    """Inspect the image(s) closely and list at most $max_oc fine-grained observations that help answer the question.
Question: $question
Plan:
$plan

Tag every observation with exactly one category and write one per line as
[OC-i] CATEGORY | what you see
Categories:
$categories
Record only what is visible. Do not answer the question here."""
)

# G.3 — state-claim reasoning with [E] → [I] → [J] and mandatory citations.
REASON = Template(
    """Answer the question by reasoning over the evidence ledger below, in three stages:
[E] Evidence integration: combine what several entries show.
[I] Inference: draw conclusions from the [E] claims.
[J] Judgment: state your definitive answer.
Reasoning method: $method
Answer granularity: $granularity
Every claim MUST cite the ledger ids (or earlier SC ids) it rests on: uncited [E]/[I] claims are discarded and an uncited [J] is not trusted.
Write one claim per line in the form
[SC-j][E/I/J] conclusion | Based on: [OC-a], [OC-b]
$warning
Question: $question

$evidence_title
$ledger"""
)

# App. A Alg. 2 line 1 — decision with images re-sent alongside the ledger.
DECIDE = Template(
    """Decide the final answer. The images are attached again so you can check the reasoning against them.
Question: $question
$options
Answer granularity: $granularity

$evidence_title
$ledger

Reasoning claims:
$claims

Reply with one line:
Answer: <final answer> | Based on: [ids of the entries or claims that support it]"""
)

# G.4 — hypothesis verification after an ECC failure (warning + restricted to P_oc).
HYPOTHESIS = Template(
    """Question: $question
Current hypothesis: $hypothesis
WARNING: the key entities of this hypothesis do not occur in any text read from the image. It may be a hallucination of the language model.
Observations confirmed so far:
$pool

Treat the hypothesis as something to falsify. Look at the image again and report:
1. Supporting evidence: visual details in favour of the hypothesis.
2. Contradicting evidence: visual details against it (or "None").
3. Conclusion: either "Confirm: <hypothesis>" or "Revise: <new answer>".
Use only text and numbers that are actually visible in the image."""
)

# G.5 — entity recheck defence (Alg. 2 line 3).
ENTITY_RECHECK = Template(
    """These texts and numbers were confirmed to be visible in the image:
$pool

Question: $question
$options
Answer using only the texts and numbers listed above. Do not mention any name, entity or number that is not in the list.
Answer: """
)

# DIRECT path — one direct answer.
DIRECT = Template(
    """Answer the question about the image(s).
Question: $question
$options
Answer granularity: $granularity
Text read from the image by OCR (may be incomplete):
$ocr
Reply with one line: Answer: <answer>"""
)

# G.6 — concise re-answering with search results (DIRECT path).
CONCISE_SYSTEM = "Answer with as few words as possible. No explanation, only the fact."
CONCISE = Template(
    """Question: $question
$options
Your first answer: $initial
Web search results: $results
Check your first answer against the search results and correct it if needed. Give the FINAL answer in as few words as possible.
Answer: """
)

# App. D.5 — one of two independent, context-free readings of the zoomed crop.
DUAL_READ = Template(
    """This is a zoomed crop of an instrument or display. Read the value it shows as precisely as the graduations allow, keeping every decimal.
Reply with the number and its unit only, e.g. "36.7 °C"."""
)

# Alg. 2 line 9 — visual fallback on uncertainty markers (App. D.7).
VISUAL_FALLBACK = Template(
    """Look at the image(s) and answer the question directly. Give a concrete answer; "cannot determine" is not allowed.
Question: $question
$options
Answer: """
)

# Ablation free_form_repair — critique and rewrite (Self-Refine / Reflexion style).
REFLECT = Template(
    """Review your reasoning for the question below. A check flagged this problem: $problem
Question: $question
Your current claims:
$claims
Your current answer: $answer
Critique the reasoning, then rewrite it. End with one line: Answer: <revised answer>"""
)

# Native chain-of-thought baseline (same perception evidence, as plain text).
NATIVE_COT = Template(
    """Answer the question about the image(s). Think step by step, then give the answer.
Question: $question
$options
Tool outputs available to you:
$evidence
Finish with one line: Answer: <answer>"""
)

# Ablation no_ledger — free-form transcript with a prompt-level citation instruction only.
NO_LEDGER = Template(
    """Answer the question about the image(s). Think step by step and cite the tool outputs you use by their number, e.g. [3].
Question: $question
$options
Answer granularity: $granularity
Transcript of tool outputs:
$transcript
Finish with one line: Answer: <answer>"""
)

# The title of the evidence block in REASON / DECIDE: the ledger, or (ablation no_ledger) the
# free-form transcript that replaces it.
LEDGER_TITLE = "Evidence ledger (id | type | confidence | fact):"
TRANSCRIPT_TITLE = "Transcript of tool outputs (cite the ones you use by their [id]):"

# every template above, by its lower-case name ("entity_recheck" for ENTITY_RECHECK)
ALL_TEMPLATES: dict[str, Template] = {
    n.lower(): t for n, t in dict(globals()).items() if isinstance(t, Template)
}
