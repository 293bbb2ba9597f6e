"""Recognising what a request asks for, from its prompt text alone, as a model reads it.

Why: the simulator must never peek at ``request.stage`` or any other side door into the agent.
Each task is recognised by phrases a reader would key on (the output format a prompt asks for,
its headings), and the sections a reply needs (ledger lines, claims, pool) are parsed back out
of the text. An unrecognised prompt is ``Task.UNKNOWN`` and gets a generic short answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum


class Task(str, Enum):
    PLAN = "plan"
    OBSERVE = "observe"
    REASON = "reason"
    DECIDE = "decide"
    HYPOTHESIS = "hypothesis"
    ENTITY_RECHECK = "entity_recheck"
    DIRECT = "direct"
    CONCISE = "concise"
    READ = "read"
    VISUAL_FALLBACK = "visual_fallback"
    REFLECT = "reflect"
    NATIVE_COT = "native_cot"
    NO_LEDGER = "no_ledger"
    UNKNOWN = "unknown"


# Checked in order: the first whose every pattern is found wins. Prompts that embed earlier replies
# or tool outputs (ledger, transcript, claims) come first, and every pattern is an instruction a
# prompt gives, never a phrase a reply or an evidence line would contain.
_SIGNATURES: tuple[tuple[Task, tuple[str, ...]], ...] = (
    (Task.REASON, (r"\[SC-j\]", r"\[E\]", r"\[J\]")),
    (Task.DECIDE, (r"decide the final answer", r"reply with one line")),
    (Task.NO_LEDGER, (r"transcript of tool outputs", r"cite the tool outputs")),
    (Task.NATIVE_COT, (r"think step by step", r"tool outputs available to you")),
    (Task.REFLECT, (r"review your reasoning", r"critique")),
    (Task.HYPOTHESIS, (r"current hypothesis:", r"treat the hypothesis as something to falsify|\"confirm: <")),
    (Task.ENTITY_RECHECK, (r"confirmed to be visible", r"answer using only")),
    (Task.CONCISE, (r"web search results:", r"your first answer:")),
    (Task.DIRECT, (r"text read from the image by ocr", r"reply with one line: answer:")),
    (Task.VISUAL_FALLBACK, (r"\"cannot determine\" is not allowed", r"answer the question directly")),
    (Task.OBSERVE, (r"\[OC-i\] CATEGORY", r"do not answer the question here|list at most")),
    (Task.READ, (r"zoomed crop of an instrument", r"read the value")),
    (Task.PLAN, (r"you plan how to answer", r"write a short plan")),
)
_COMPILED = tuple((t, tuple(re.compile(p, re.IGNORECASE | re.DOTALL) for p in ps)) for t, ps in _SIGNATURES)

# Tasks whose reply is a reasoning chain or a decision (where phantom entities are injected).
REASONING = frozenset({Task.REASON, Task.DECIDE, Task.NATIVE_COT, Task.NO_LEDGER, Task.HYPOTHESIS, Task.ENTITY_RECHECK})
# One-line answers (faults at their own, lower rates: less text, fewer chances to go wrong).
SHORT = frozenset({Task.DIRECT, Task.CONCISE, Task.VISUAL_FALLBACK})
# Long free-text chains of thought (where overthinking flips answers, F3).
LONG_CHAIN = frozenset({Task.REASON, Task.NATIVE_COT, Task.NO_LEDGER})
# Tasks whose reply ends in an answer to the question.
ANSWERING = frozenset(
    {Task.DECIDE, Task.DIRECT, Task.CONCISE, Task.VISUAL_FALLBACK, Task.ENTITY_RECHECK, Task.REFLECT,
     Task.NATIVE_COT, Task.NO_LEDGER, Task.HYPOTHESIS, Task.REASON}
)  # fmt: skip

WARNING_RE = re.compile(r"WARNING|hallucinat", re.IGNORECASE)
RESTRICTED_RE = re.compile(r"using only|only (the )?(text|what)", re.IGNORECASE)
LEDGER_LINE = re.compile(r"^([A-Z]{1,4}-\d+) \| [A-Z]+(?: [A-Z_]+)? \| [\d.]+ \| (.*)$", re.MULTILINE)
CLAIM_LINE = re.compile(r"^\[(SC-\d+)\]\[([EIJ])\] (.*?) \| Based on: (.*?) \| confidence ([\d.]+)$", re.MULTILINE)
POOL_LINE = re.compile(r"^- (.+)$", re.MULTILINE)
TRANSCRIPT_LINE = re.compile(r"^\[(\d+)\] [^:\n]+: (.*)$", re.MULTILINE)
OPTION_LINE = re.compile(r"^[A-J]\. .*$", re.MULTILINE)
MAX_ITEMS_RE = re.compile(r"at most (\d+)", re.IGNORECASE)
CATEGORY_LINE = re.compile(r"^([A-Z][A-Z_]+): ", re.MULTILINE)
# An observation request that names what to look for ("evidence for or against: B. Apollo 11").
FOCUS_RE = re.compile(r"evidence for or against:\s*(.+)", re.IGNORECASE)


def recognise(text: str) -> Task:
    """The task a prompt asks for (``UNKNOWN`` when none of the known signatures fits)."""
    for task, patterns in _COMPILED:
        if all(p.search(text) for p in patterns):
            return task
    return Task.UNKNOWN


@dataclass(frozen=True)
class LedgerLine:
    id: str
    fact: str


@dataclass(frozen=True)
class ClaimLine:
    id: str
    stage: str
    text: str
    sigma: float


@dataclass(frozen=True)
class PromptView:
    """What a reply needs from the prompt text: the cited-able ids and the evidence shown."""

    task: Task
    ledger: tuple[LedgerLine, ...]
    claims: tuple[ClaimLine, ...]
    evidence: str  # the prompt without question and options: what "the evidence" says
    warned: bool  # explicit hallucination warning or a restriction to the P_oc pool
    max_items: int
    categories: tuple[str, ...]
    focus: str = ""  # what an observation request asks to look for, "" when it names nothing

    @classmethod
    def of(cls, text: str, question: str | None = None) -> PromptView:
        task = recognise(text)
        ledger = tuple(LedgerLine(m.group(1), m.group(2)) for m in LEDGER_LINE.finditer(text))
        claims = tuple(
            ClaimLine(m.group(1), m.group(2), m.group(3), float(m.group(5))) for m in CLAIM_LINE.finditer(text)
        )
        m = MAX_ITEMS_RE.search(text)
        cats = tuple(dict.fromkeys(CATEGORY_LINE.findall(text.split("Categories:", 1)[1]))) if "Categories:" in text else ()
        return cls(
            task=task,
            ledger=ledger,
            claims=claims,
            evidence=evidence_text(text, question),
            warned=bool(WARNING_RE.search(text) or (task is Task.ENTITY_RECHECK and RESTRICTED_RE.search(text))),
            max_items=int(m.group(1)) if m else 15,
            categories=cats,
            focus=f.group(1).strip() if (f := FOCUS_RE.search(text)) else "",
        )


def evidence_text(text: str, question: str | None) -> str:
    """The prompt minus the question and the option list, so that 'the evidence contains the gold
    option text' is not trivially true because the options are printed in every prompt."""
    out = text.replace(question, " ") if question else text
    return OPTION_LINE.sub(" ", out)


def normalise(text: str) -> str:
    return " ".join(text.casefold().split())
