"""Deterministic decomposition of a reasoning trace into at most ten atomic claims (S-RFA).

The paper's auditor decomposes each trace into ≤ 10 atomic claims before labelling them. In
``ledger`` mode we do that without a judge, by rule, so that the split is identical for every
trace whatever produced it:

* a trace that has LedgerMind's structure (``[SC-j][E|I|J] …`` lines, or bare ``[E]``/``[I]``/
  ``[J]`` prefixes) is split at those claims — the citation tails are not part of a claim;
* any other trace is split into sentences (and lines);
* the *final-answer sentence* (the last one carrying ``Answer:``, else the last sentence) is the
  decision claim DC; everything before it is state/reasoning (SC);
* when there are more than ``max_claims - 1`` SC pieces, consecutive pieces are merged into
  ``max_claims - 1`` nearly equal groups. Merging (rather than truncating) keeps every
  statement of the trace under audit: a phantom entity in the first paragraph of a long trace
  must still be seen.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from ledgermind.claims import parse_sc_lines, split_citation_tail

MAX_CLAIMS = 10  # Figure 5: "at most ten atomic claims"

_THINK_RE = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_BARE_STAGE_RE = re.compile(r"^\s*[-•*]*\s*\[\s*([EIJ])\s*\]\s*[:.\-–]?\s*(.+)$", re.IGNORECASE)
# sentence ends: . ! ? followed by space/newline and an upper-case letter, digit, quote or bracket.
# Decimals never split (no space). A single capital before the period is an option label or an
# initial ("A. Apollo", "John F. Kennedy") unless a lower-case word precedes it, as a label or
# point name ending a sentence does ("meet at point B. Therefore", "the answer is C. It").
_SENTENCE_END_RE = re.compile(r"([.!?])\s+(?=[\"'(\[A-Z0-9*#\\])")
_INITIAL_RE = re.compile(r"(?:^|[^\w\s]\s*|\b[A-Z]\w*\s+)[A-Z]\.$")
_ANSWER_RE = re.compile(r"answer\s*[:：]", re.IGNORECASE)
# a period after these words is part of a name or a reference, not a sentence end ("Dr. Wren")
_ABBREVIATION_RE = re.compile(
    r"\b(?:Dr|Mr|Mrs|Ms|Prof|Sr|Jr|St|Mt|Gen|Col|Capt|Lt|Rev|Hon|Fig|Figs|Eq|Eqs|No|Nos|Vol|pp|vs|etc|approx|"
    r"e\.g|i\.e|cf|al|Inc|Ltd|Co|Corp|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.$"
)
_WORD_RE = re.compile(r"[^\W\d_]")  # a piece needs a letter: "1." alone is an enumerator


@dataclass(frozen=True)
class SplitTrace:
    """The SC pieces (in trace order) and the decision sentence of one trace."""

    statements: tuple[str, ...]
    decision: str
    structured: bool  # True when the [SC]/[E]/[I]/[J] structure was used


def split_trace(text: str, max_claims: int = MAX_CLAIMS) -> SplitTrace:
    """Split one trace into ≤ ``max_claims - 1`` SC statements and one decision sentence."""
    if max_claims < 2:
        raise ValueError("max_claims must leave room for one SC and the DC (>= 2)")
    text = _THINK_RE.sub(" ", text or "").strip()  # hidden reasoning is not part of the audited trace
    pieces = _sentences(text)
    decision = ([s for s in pieces if _ANSWER_RE.search(s)] or pieces or [""])[-1]
    structured = _structured_statements(text)
    statements = structured or [p for p in pieces if p != decision]
    return SplitTrace(tuple(pack(statements, max_claims - 1)), decision, bool(structured))


def pack(pieces: list[str], limit: int) -> list[str]:
    """Merge consecutive pieces into at most ``limit`` groups of nearly equal count, in order.

    The pieces of a group are joined by a line break, a boundary that NER never crosses
    (``perception.ner.doc_entities``): "meet at point B." + "Therefore, …" stays two sentences
    for ECC, never the "entity" "B. Therefore".
    """
    if len(pieces) <= limit:
        return list(pieces)
    size, extra = divmod(len(pieces), limit)  # the first ``extra`` groups hold one piece more
    starts = [g * size + min(g, extra) for g in range(limit + 1)]
    return ["\n".join(pieces[a:b]) for a, b in itertools.pairwise(starts)]


def _structured_statements(text: str) -> list[str]:
    if claims := [c.text for c in parse_sc_lines(text)]:
        return claims
    bare = [m.group(2).strip() for line in text.splitlines() if (m := _BARE_STAGE_RE.match(line))]
    return [split_citation_tail(b)[0] or b for b in bare if _WORD_RE.search(b)]


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for line in text.splitlines():
        parts = _SENTENCE_END_RE.split(line.strip().strip("*#>-• ").strip())
        # re.split keeps the captured punctuation as separate items: glue it back
        buf = ""  # an empty piece is dropped with the pieces that hold no letter
        for part in parts:
            if part in {".", "!", "?"}:
                buf += part
            elif buf and (_ABBREVIATION_RE.search(buf) or _INITIAL_RE.search(buf)):  # "as Dr." + "Tobias"
                buf += " " + part
            else:
                out.append(buf.strip())
                buf = part
        out.append(buf.strip())
    return [s for s in out if _WORD_RE.search(s)]
