"""Recognising what a request asks for by the output FORMAT it requests, as a model reads it.

Why format and not wording: a simulator keyed on template phrases breaks (or changes its error
rates) when a sentence of a prompt is reworded, and then measures our wording instead of the
mechanisms. What a reply must look like is the stable part of a request: a JSON schema's required
keys, or the line formats the prompt spells out (``[OC-i] CATEGORY | …``, ``[SC-j][E/I/J] … |
Based on:``, ``Answer: <…> | Based on:``, ``"Confirm: <…>" / "Revise: <…>"``, five numbered plan
fields, a value with its unit, an ``Answer:`` line). ``tests/simulator/test_paraphrase.py``
rewrites every template (synonyms, reordered sentences, same formats) and checks that tasks and
replies do not change. Evidence is read by one parser for both formats the agent prints (ledger
lines ``ID | KIND | σ | fact`` and transcript lines ``[ID] source: fact``). The simulator never
reads ``request.stage``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any


class Task(str, Enum):
    PLAN = "plan"
    OBSERVE = "observe"
    REASON = "reason"
    DECIDE = "decide"
    HYPOTHESIS = "hypothesis"
    ANSWER = "answer"  # any request for an "Answer: <answer>" line (direct, concise, fallback, recheck, CoT, reflection)
    READ = "read"
    UNKNOWN = "unknown"


# A JSON schema's required keys → the task (structured outputs).
_SCHEMA_TASKS: tuple[tuple[frozenset[str], Task], ...] = (
    (frozenset({"claims"}), Task.REASON),
    (frozenset({"observations"}), Task.OBSERVE),
    (frozenset({"answer"}), Task.DECIDE),
    (frozenset({"value"}), Task.READ),
)
# Line formats a prompt spells out, checked in order (a format a reply must follow, never a phrase).
_FORMATS: tuple[tuple[Task, re.Pattern[str]], ...] = (
    (Task.REASON, re.compile(r"\[SC-j\]\s*\[E/I/J\]")),
    (Task.OBSERVE, re.compile(r"\[OC-i\]\s*CATEGORY\s*\|")),
    (Task.DECIDE, re.compile(r"Answer:\s*<[^>\n]*>\s*\|\s*Based on:")),
    (Task.HYPOTHESIS, re.compile(r"\"Confirm:\s*<[^>\n]*>\"[^\n]*\"Revise:\s*<[^>\n]*>\"")),
    # five numbered "N. Field:" lines in order (field values may run over several lines)
    (Task.PLAN, re.compile(r"(?ms)^1\.[^\n:]+:.*?^2\.[^\n:]+:.*?^3\.[^\n:]+:.*?^4\.[^\n:]+:.*?^5\.[^\n:]+:")),
    (Task.READ, re.compile(r"e\.g\.\s*\"-?\d+(?:\.\d+)?\s*[^\"\d\s][^\"]*\"")),
    (Task.ANSWER, re.compile(r"(?m)Answer:\s*<[^>\n]*>\s*$|Answer:\s*\Z")),
)

# What a reply may rest on: evidence lines of the ledger or of a transcript, shown claims, pool lines.
LEDGER_LINE = re.compile(r"^([A-Z]{1,4}-\d+) \| [A-Z]+(?: [A-Z_]+)? \| [\d.]+ \| (.*)$", re.MULTILINE)
TRANSCRIPT_LINE = re.compile(r"^\[([A-Z]{1,4}-\d+|\d+)\] ([^:\n]{1,80}): (.*)$", re.MULTILINE)
CLAIM_LINE = re.compile(r"^\[((?:SC|DC|OC)-\d+)\](?:\[([EIJ])\])? (.*?) \| Based on: .*$", re.MULTILINE)
POOL_LINE = re.compile(r"^- (.+)$", re.MULTILINE)
OPTION_LINE = re.compile(r"^[A-J]\. .*$", re.MULTILINE)
MAX_ITEMS_RE = re.compile(r"at most (\d+)", re.IGNORECASE)
CATEGORY_LINE = re.compile(r"^([A-Z][A-Z_]+): ", re.MULTILINE)
# A judgment a prompt shows: "the answer is X", "Current …: X" lines, "Confirm/Revise: …".
ANSWER_IS = re.compile(r"answer is\s+(?:option\s+)?([A-J](?![\w])|-?\d+(?:\.\d+)?)", re.IGNORECASE)
# A "Label: value" line of the prompt (not evidence, claims, numbered fields or an Answer line).
HELD_LINE = re.compile(
    r"^(?![\[\d])(?!(?:answer|question)\s*:)([^\n:|]{1,200}):[ \t]*([^\n|]+)$", re.IGNORECASE | re.MULTILINE
)


def recognise(text: str, schema: Mapping[str, Any] | None = None) -> Task:
    """The task a request asks for, by its schema or the output format its text spells out."""
    if schema:
        required = frozenset(schema.get("required", ()))
        for keys, task in _SCHEMA_TASKS:
            if keys <= required:
                return task
    for task, pattern in _FORMATS:
        if pattern.search(text):
            return task
    return Task.UNKNOWN


@dataclass(frozen=True)
class Evidence:
    """One evidence line shown to the model: its id and its fact (ledger or transcript format)."""

    id: str
    fact: str


@dataclass(frozen=True)
class ShownClaim:
    id: str
    stage: str
    text: str


@dataclass(frozen=True)
class PromptView:
    """What a reply needs from the request: its task, the evidence, claims and pool shown."""

    task: Task
    evidence: tuple[Evidence, ...]
    claims: tuple[ShownClaim, ...]
    pool: tuple[str, ...]
    context: str  # the prompt without question and options: what "the evidence" says
    max_items: int
    categories: tuple[str, ...]

    @classmethod
    def of(
        cls, text: str, question: str | None = None, schema: Mapping[str, Any] | None = None
    ) -> PromptView:
        task = recognise(text, schema)
        ledger = [Evidence(m.group(1), m.group(2)) for m in LEDGER_LINE.finditer(text)]
        ledger += [Evidence(m.group(1), m.group(3)) for m in TRANSCRIPT_LINE.finditer(text)]
        claims = tuple(
            ShownClaim(m.group(1), m.group(2) or "", m.group(3)) for m in CLAIM_LINE.finditer(text)
        )
        return cls(
            task=task,
            evidence=tuple(ledger),
            claims=claims,
            pool=tuple(m.group(1).strip() for m in POOL_LINE.finditer(text)),
            context=context_text(text, question),
            max_items=_max_items(text, schema),
            categories=tuple(dict.fromkeys(CATEGORY_LINE.findall(text.split("Categories:", 1)[1])))
            if "Categories:" in text
            else (),
        )

    def facts(self) -> list[str]:
        return [e.fact for e in self.evidence] + list(self.pool)

    def shown_judgment(self) -> str | None:
        """The latest answer the prompt shows as a judgment: a [J] or decision claim stating "the
        answer is X", else a held answer ("Current hypothesis: …", "Your first answer: …").
        The printed confidence is never read."""
        for c in reversed(self.claims):
            if c.stage in {"J", ""} and (hit := ANSWER_IS.search(c.text)):
                return hit.group(1)
        for hit in reversed(list(HELD_LINE.finditer(self.context))):
            value = hit.group(2).strip()
            if m := ANSWER_IS.search(value):
                return m.group(1)
            if m := re.match(r"\(?([A-J])\b[).:,]?(?:\s|$)", value):
                return m.group(1)
            if m := re.fullmatch(r"-?\d+(?:\.\d+)?", value):
                return m.group(0)
        return None


def _max_items(text: str, schema: Mapping[str, Any] | None) -> int:
    try:
        return int(schema["properties"]["observations"]["maxItems"])  # type: ignore[index]
    except (KeyError, TypeError, ValueError):
        m = MAX_ITEMS_RE.search(text)
        return int(m.group(1)) if m else 15


def context_text(text: str, question: str | None) -> str:
    """The prompt minus the question and the option list, so that 'the evidence states option X'
    is not trivially true because the options are printed in every prompt."""
    out = text.replace(question, " ") if question else text
    return OPTION_LINE.sub(" ", out)


def normalise(text: str) -> str:
    return " ".join(text.casefold().split())
