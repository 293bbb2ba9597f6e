"""Entity rows derived from the numeric rows' human annotations.

Why this exists: the entity check is scored on 68 rows. With so few, a name form that fixes one
row can never earn its place in cross-validation (when that row is held out nothing else speaks
for the form), and a form that breaks rows nobody looked at goes unseen. The numeric rows of the
same file carry the same human annotations: WiCE annotators marked, token by token, what the
evidence does not support, and VitaminC annotators judged whole claims. Read with the rule the
dev file's own entity rows follow (its README: "entity span(s) [...] fully marked non-supported"
-> not supported, "unmarked in a partially-supported claim" -> supported), they give more entity
verdicts that nobody here wrote, on claims the entity rules were not written for.

Derivation of one numeric row (nothing else is read than the row itself):

* the entity spans are ECC's own Ent(c) of the claim (:func:`~ledgermind.grounding.ecc.claim_entities`),
  so every derived row is one the check actually scores;
* **WiCE** (``marked_tokens``): a span is *marked* when every word of it is among the marked
  tokens, *unmarked* when none is. The row is "not supported" when some span is marked,
  "supported" when every span is unmarked (a fully supported claim has no marks at all), and
  left out when a span is only partly marked (the annotation does not say which);
* **VitaminC** rows are left out. Their label judges the whole claim, and their evidence is one
  sentence of a Wikipedia article whose subject is often named only in the article's title, which
  the row does not carry ("X has recorded ..." against "The state recorded ..."): "supports"
  then does not mean the evidence names the entity. (Tried: the 32 such rows are all "supported"
  and reward any form that accepts a missing name.)

Known noise, the same kind as in the entity rows themselves: an unmarked span is not always one
the annotators checked. The derived rows train the cross-validated choice and are reported
apart; the target figure stays the one on the dev file's entity rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import Any

from ledgermind.errors import UserError
from ledgermind.grounding.ecc import claim_entities
from ledgermind.studies.agreement import AnnotatedPair, Check, read_rows
from perception.aliases import AliasTable
from perception.ner import EntityExtractor

#: Strata of derived rows, by source stratum (vitc: none derived); ``agreement.GROUPS["entity_derived"]``
#: collects them.
DERIVED_STRATA = {"wice": "wice_derived", "vitc_exact": "vitc_derived", "vitc_bound": "vitc_derived"}
DERIVED_SUFFIX = "~ent"
_WORD = re.compile(r"\w+")


class SpanMark(str, Enum):
    """How much of one entity span the WiCE annotators marked non-supported."""

    MARKED = "marked"
    UNMARKED = "unmarked"
    PARTLY = "partly"


def span_mark(span: str, marked_tokens: Iterable[str]) -> SpanMark:
    """MARKED when every word of ``span`` is a marked token, UNMARKED when none is."""
    marked = set(marked_tokens)
    words = [w for w in _WORD.findall(span) if w.lower() != "s"]  # a possessive "'s" is no word of the name
    hits = [w in marked for w in words]
    if hits and all(hits):
        return SpanMark.MARKED
    return SpanMark.UNMARKED if not any(hits) else SpanMark.PARTLY


def derived_expectation(record: Mapping[str, Any], spans: Sequence[str]) -> bool | None:
    """The entity verdict a numeric row's annotation implies (module doc), None when it implies none."""
    source = record.get("source") or {}
    # claim-level labels (VitaminC) say nothing about one name (module doc)
    wice = source.get("dataset") == "WiCE" and "marked_tokens" in record
    if not spans or not wice or str(source.get("label", "")) not in {"supported", "partially_supported"}:
        return None
    marks = [span_mark(s, record.get("marked_tokens") or ()) for s in spans]
    if SpanMark.MARKED in marks:
        return False
    return True if all(m is SpanMark.UNMARKED for m in marks) else None


def derive_entity_pairs(
    records: Iterable[Mapping[str, Any]], ner: EntityExtractor, aliases: AliasTable | None = None
) -> list[AnnotatedPair]:
    """One ECC row per numeric row whose annotation implies an entity verdict (module doc)."""
    aliases = aliases or AliasTable.default()
    records = [r for r in records if r.get("subset") == "numeric"]
    warm = getattr(ner, "warm", None)
    if warm is not None:
        warm([str(r.get("claim", "")) for r in records])
    out: list[AnnotatedPair] = []
    for record in records:
        try:
            claim, stratum = str(record["claim"]), DERIVED_STRATA[str(record["stratum"])]
            evidence = tuple(str(e) for e in record["evidence"])
        except (KeyError, TypeError) as exc:
            raise UserError(f"row {record.get('id', '?')!r} lacks a usable field: {exc}") from None
        spans = [e.text for e in claim_entities(claim, ner, aliases)]
        expected = derived_expectation(record, spans)
        if expected is not None:
            pid, kind = f"{record['id']}{DERIVED_SUFFIX}", str(record.get("kind", "other"))
            out.append(AnnotatedPair(pid, Check.ECC, stratum, claim, evidence, kind, expected))
    return out


def load_derived_pairs(path: Path | str, ner: EntityExtractor) -> list[AnnotatedPair]:
    """:func:`derive_entity_pairs` over an annotated JSONL file (the format of ``load_pairs``)."""
    return derive_entity_pairs(read_rows(path), ner)
