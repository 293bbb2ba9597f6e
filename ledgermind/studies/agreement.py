"""Agreement of the claim auditor with human support annotations.

Why this exists: ECC and NCC are string-level proxies for "is this entity / number supported by
the evidence?". The only honest way to know how good the proxies are is to compare their verdicts
with people's, on claim/evidence pairs nobody here wrote (WiCE token-level "not supported" marks,
VitaminC bound claims; ``../shared/data/grounding_ext/dev.jsonl``). Each row names the single check
it scores (``subset``: ``numeric`` -> NCC, ``entity`` -> ECC) and a ``stratum`` (``wice``,
``vitc_exact``, ``vitc_bound``); we report agreement and the 2×2 confusion matrix per stratum, per
target group and overall.

The rows use the auditor's JSONL input format, so the verdicts come from the same
:class:`~ledgermind.grounding.cascade.GroundingCascade` the pipeline and ``ledgermind
audit`` use; nothing here re-implements a check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from ledgermind.errors import UserError
from ledgermind.grounding.cascade import GroundingCascade, GroundingResult
from ledgermind.jsonl import read_jsonl
from ledgermind.markdown import md_table


class Check(str, Enum):
    """The grounding check a row scores (the row's ``subset`` names it)."""

    NCC = "ncc"
    ECC = "ecc"


SUBSET_CHECK = {"numeric": Check.NCC, "entity": Check.ECC}

#: The groups the study reports, each a check and the strata it is scored on.
GROUPS: dict[str, tuple[Check, frozenset[str]]] = {
    "exact_number": (Check.NCC, frozenset({"wice", "vitc_exact"})),
    "entity": (Check.ECC, frozenset({"wice", "vitc_exact", "vitc_bound"})),
    "bound": (Check.NCC, frozenset({"vitc_bound"})),
    # entity verdicts derived from the numeric rows' annotations (derived_pairs.py)
    "entity_derived": (Check.ECC, frozenset({"wice_derived", "vitc_derived"})),
}


@dataclass(frozen=True)
class AnnotatedPair:
    """One dev row: a claim, its evidence, the check to score and the human verdict."""

    id: str
    check: Check
    stratum: str
    claim: str
    evidence: tuple[str, ...]
    kind: str
    expected: bool

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> AnnotatedPair:
        try:
            check = SUBSET_CHECK[record["subset"]]
            expected = record["expected"][check.value]
            rid, stratum, claim = (str(record[k]) for k in ("id", "stratum", "claim"))
            evidence = tuple(str(e) for e in record["evidence"])
            pair = cls(rid, check, stratum, claim, evidence, str(record.get("kind", "other")), bool(expected))
        except (KeyError, TypeError) as exc:
            raise UserError(f"row {record.get('id', '?')!r} lacks a usable field: {exc}") from None
        if expected is None:
            raise UserError(
                f"row {pair.id!r}: expected.{check.value} is null for subset {record['subset']!r}"
            )
        return pair


@dataclass
class Confusion:
    """2×2 counts with "supported" (check passes) as the positive class."""

    tp: int = 0  # human: supported,      auditor: pass
    fn: int = 0  # human: supported,      auditor: fail
    fp: int = 0  # human: not supported,  auditor: pass
    tn: int = 0  # human: not supported,  auditor: fail

    def add(self, expected: bool, predicted: bool) -> None:
        if expected:
            self.tp += predicted
            self.fn += not predicted
        else:
            self.fp += predicted
            self.tn += not predicted

    @property
    def n(self) -> int:
        return self.tp + self.fn + self.fp + self.tn

    @property
    def agreement(self) -> float:
        return (self.tp + self.tn) / self.n if self.n else float("nan")


@dataclass(frozen=True)
class Verdict:
    """The auditor's verdict on one pair, with what it flagged (for reading the misses)."""

    pair: AnnotatedPair
    predicted: bool
    flagged: tuple[str, ...]

    @property
    def agrees(self) -> bool:
        return self.predicted == self.pair.expected


@dataclass
class AgreementReport:
    """Per-stratum, per-group and overall confusion matrices plus every verdict."""

    verdicts: list[Verdict] = field(default_factory=list)
    strata: dict[str, Confusion] = field(default_factory=dict)
    groups: dict[str, Confusion] = field(default_factory=dict)
    overall: Confusion = field(default_factory=Confusion)

    @property
    def misses(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.agrees]

    def table(self) -> str:
        """Markdown table: one row per stratum (check shown), per target group, and overall."""
        groups = [(f"group:{name}", conf) for name, conf in self.groups.items()]
        scopes = [*sorted(self.strata.items()), *groups, ("overall", self.overall)]
        head = ["scope", "check", "n", "agreement", "TP", "FN", "FP", "TN"]
        note = "(positive = supported; FN = auditor flags a pair people call supported)"
        return "\n".join([*md_table(head, [_cells(name, conf) for name, conf in scopes], rest="---"), note])


def _cells(name: str, conf: Confusion) -> list[object]:
    check, _, scope = name.rpartition("/")
    return [scope, check or "-", conf.n, f"{conf.agreement:.3f}", conf.tp, conf.fn, conf.fp, conf.tn]


def read_rows(path: Path | str) -> list[dict[str, Any]]:
    """The rows of an annotated JSONL file; a missing file or bad line is a one-line :class:`UserError`."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"annotated pairs file not found: {path}")
    return [row.value for row in read_jsonl(path, torn_tail=False)]


def load_pairs(path: Path | str) -> list[AnnotatedPair]:
    """The annotated pairs of a JSONL file; a row without a usable field is a :class:`UserError`."""
    return [AnnotatedPair.from_record(row) for row in read_rows(path)]


def verdict(pair: AnnotatedPair, result: GroundingResult) -> Verdict:
    """Score only the check the pair names (the other check's verdict is not annotated)."""
    if pair.check is Check.NCC:
        return Verdict(pair, result.ncc, result.unmatched_numbers)
    return Verdict(pair, result.ecc, result.missing_entities)


def evaluate(pairs: Sequence[AnnotatedPair], cascade: GroundingCascade) -> AgreementReport:
    """Run the cascade on every pair and tally agreement with the human verdicts."""
    warm = getattr(cascade.ner, "warm", None)
    if warm is not None:
        warm([p.claim for p in pairs])  # one nlp.pipe batch instead of one model call per claim
    report = AgreementReport()
    for pair in pairs:
        v = verdict(pair, cascade.check(pair.claim, pair.evidence, kind=pair.kind))
        report.verdicts.append(v)
        stratum = report.strata.setdefault(f"{pair.check.value}/{pair.stratum}", Confusion())
        stratum.add(pair.expected, v.predicted)
        for group, (check, strata) in GROUPS.items():
            if pair.check is check and pair.stratum in strata:
                report.groups.setdefault(group, Confusion()).add(pair.expected, v.predicted)
        report.overall.add(pair.expected, v.predicted)
    return report
