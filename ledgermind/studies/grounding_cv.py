"""Cross-validated agreement of the grounding checks with human annotations.

Glue between :mod:`ledgermind.studies.kfold` (generic K-fold choice of a candidate) and
:mod:`ledgermind.studies.agreement` (verdicts on annotated pairs). A candidate is a whole
:class:`GroundingConfig`; the grid is the product of a few fields' candidate values, with the
shipped config first so that ties keep it. Every candidate runs the real cascade on every row
once (sharing one NER and alias cache), then each fold's choice is arithmetic on the verdicts.

The selection objective is the macro mean of the target groups' agreement (exact numbers,
entities, bounds), so the 68 entity rows weigh as much as the 107 exact-number rows.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import fields, replace
from typing import Any

from ledgermind.errors import UserError
from ledgermind.grounding.cascade import GroundingCascade, GroundingConfig, default_ner
from ledgermind.markdown import md_table
from ledgermind.studies.agreement import GROUPS, AnnotatedPair, Check, Verdict, evaluate
from ledgermind.studies.kfold import cross_validate, stratified_folds

#: The columns of the dev-vs-CV table after the group (``CVReport.cells`` fills them).
CV_HEAD = ("dev (shipped)", "dev (best on all rows)", "CV mean ± sd over folds", "CV pooled", "gap dev−CV")

#: Default grid: ECC's general name forms on/off, its similarity threshold τ (None = strict Eq. 4),
#: NCC's "about X" tolerance and relation-aware NCC on/off (off = strict Eq. 5); the shipped value
#: of each field is its first.
DEFAULT_GRID = (
    "ecc_designators=true,false",
    "ecc_acronyms=true,false",
    "ecc_adjectival=true,false",
    "ecc_surname=false,true",
    "ecc_place_guard=true,false",
    "ecc_country_names=false,true",
    "ecc_similarity=none,1.0,0.8,0.67,0.5",
    "approx_rel=0.1,0.05,0.2",
    "ncc_relations=true,false",
    "ncc_unit_conversion=false,true",
)
#: Fields that change only ECC's verdict / only NCC's verdict: a row is re-checked only when a
#: field its check depends on changes, so a product grid costs the sum of its axes, not the product.
ECC_FIELDS = frozenset(
    {
        "ecc_similarity",
        "ecc_designators",
        "ecc_acronyms",
        "ecc_adjectival",
        "ecc_place_guard",
        "ecc_country_names",
        "ecc_surname",
    }
)
NCC_FIELDS = frozenset({"delta_read", "ncc_relations", "approx_rel", "ncc_unit_conversion"})


def parse_grid(specs: Sequence[str], base: GroundingConfig) -> list[GroundingConfig]:
    """``["field=v1,v2", ...]`` -> every combination as a config; ``base`` first when it is one."""
    known = {f.name for f in fields(GroundingConfig)}
    axes: list[tuple[str, list[Any]]] = []
    for spec in specs:
        name, sep, values = spec.partition("=")
        name = name.strip()
        if not sep or name not in known or not values.strip():
            raise UserError(f"--grid {spec!r}: expected NAME=V1,V2,... with NAME one of {sorted(known)}")
        axes.append((name, [_value(v) for v in values.split(",")]))
    names = [n for n, _ in axes]
    try:  # each value is checked by __post_init__
        combos = itertools.product(*(values for _, values in axes))
        candidates = list(dict.fromkeys(replace(base, **dict(zip(names, c))) for c in combos))
    except (UserError, TypeError, ValueError) as exc:  # __post_init__ checks; replace: unknown field
        raise UserError(f"--grid: {exc}") from None
    return prefer(candidates, base) if base in candidates else candidates


def _value(text: str) -> float | bool | None:
    text = text.strip()
    if text.lower() in {"none", "null"}:
        return None
    if text.lower() in {"true", "false"}:
        return text.lower() == "true"
    try:
        return float(text)
    except ValueError:
        raise UserError(f"--grid value {text!r} is not a number, true/false or none") from None


#: The selection objective's groups: the entity rows and the entity verdicts derived from the
#: numeric rows' annotations (``derived_pairs``) are one group, so each entity verdict weighs the
#: same whichever row it comes from, and ECC's three groups stay one third of the objective.
OBJECTIVE_GROUPS = ("exact_number", "entity+derived", "bound")
_SCORED = {**GROUPS, "entity+derived": (Check.ECC, GROUPS["entity"][1] | GROUPS["entity_derived"][1])}


def group_agreement(group: str):
    check, strata = _SCORED[group]

    def metric(verdicts: Sequence[Verdict]) -> float:
        scored = [v.agrees for v in verdicts if v.pair.check is check and v.pair.stratum in strata]
        return sum(scored) / len(scored) if scored else float("nan")

    return metric


def macro_agreement(verdicts: Sequence[Verdict]) -> float:
    values = [group_agreement(g)(verdicts) for g in OBJECTIVE_GROUPS]
    values = [v for v in values if not math.isnan(v)]
    return statistics.fmean(values) if values else float("nan")


def run_grid(
    pairs: Sequence[AnnotatedPair], candidates: Sequence[GroundingConfig]
) -> dict[GroundingConfig, list[Verdict]]:
    """Verdicts of every candidate on every pair (one shared NER; the per-process alias tables).

    A pair scored by ECC is re-checked only for a new combination of the fields ECC depends on
    (all but ``NCC_FIELDS``), an NCC pair likewise; the verdicts are those a full run would give.
    """
    ner = default_ner()
    memo: dict[tuple[Check, tuple], dict[str, Verdict]] = {}
    out: dict[GroundingConfig, list[Verdict]] = {}
    for cfg in candidates:
        verdicts: dict[str, Verdict] = {}
        for check, ignored in ((Check.ECC, NCC_FIELDS), (Check.NCC, ECC_FIELDS)):
            key = (check, tuple((f.name, getattr(cfg, f.name)) for f in fields(cfg) if f.name not in ignored))
            if key not in memo:
                subset = [p for p in pairs if p.check is check]
                memo[key] = {v.pair.id: v for v in evaluate(subset, GroundingCascade(cfg, ner)).verdicts}
            verdicts.update(memo[key])
        out[cfg] = [verdicts[p.id] for p in pairs]
    return out


def strict_eq4(cfg: GroundingConfig) -> GroundingConfig:
    """``cfg`` with every general ECC form off and no similarity: Eq. 4's phrase membership."""
    off: dict[str, Any] = {name: None if name == "ecc_similarity" else False for name in ECC_FIELDS}
    return replace(cfg, **off)


def strict_paper(cfg: GroundingConfig) -> GroundingConfig:
    """``cfg`` with the paper's strict checks: Eq. 4 phrase membership and Eq. 5 equality.

    The origin of the honest cross-validation: every deviation from the paper (ECC's name forms,
    its similarity test, relation-aware NCC) is off and must earn its place on the training folds.
    """
    return replace(strict_eq4(cfg), ncc_relations=False, ncc_unit_conversion=False)


def prefer(candidates: Sequence[GroundingConfig], first: GroundingConfig) -> list[GroundingConfig]:
    """``candidates`` reordered so that ``first`` wins every tie (added when absent)."""
    return [first, *(c for c in candidates if c != first)]


def changed_fields(cfg: GroundingConfig, ref: GroundingConfig) -> list[str]:
    """The names of the fields where ``cfg`` differs from ``ref``."""
    return [f.name for f in fields(cfg) if getattr(cfg, f.name) != getattr(ref, f.name)]


def simplest_first(candidates: Sequence[GroundingConfig], origin: GroundingConfig) -> list[GroundingConfig]:
    """``origin`` first, then by how many fields differ from it (stable): a tie goes to the
    candidate with fewer changes, so a rule that fixes nothing on the training folds stays off."""
    return sorted(prefer(candidates, origin), key=lambda cfg: len(changed_fields(cfg, origin)))


def cross_validate_grounding(
    pairs: Sequence[AnnotatedPair],
    candidates: Sequence[GroundingConfig],
    k: int,
    seed: int = 0,
    shipped: GroundingConfig | None = None,
) -> str:
    """Markdown report: dev (``shipped``, all rows) vs K-fold held-out figures per group.

    The first candidate wins ties. With the shipped config first, a rule the training folds
    cannot tell from its absence stays on; with strict Eq. 4 first (the default of ``eval-grounding --folds``) every
    rule must *earn* its place on the training folds, which is the harder, more honest test of
    rules that fix a single row each.
    """
    shipped = shipped or candidates[0]
    outcomes = run_grid(pairs, list(dict.fromkeys([*candidates, shipped])))
    folds = stratified_folds([(p.check, p.stratum, p.expected) for p in pairs], k, seed)
    groups = [g for g in GROUPS if not math.isnan(group_agreement(g)(outcomes[shipped]))]
    metrics = {g: group_agreement(g) for g in groups}
    report = cross_validate({c: outcomes[c] for c in candidates}, folds, macro_agreement, metrics)
    best_dev = max(candidates, key=lambda c: macro_agreement(outcomes[c]))
    rows = [
        [g, *report.cells(g, metric(outcomes[shipped]), metric(outcomes[best_dev]))]
        for g, metric in metrics.items()
    ]
    lines = md_table(["group", *CV_HEAD], rows, rest="---")
    lines += ["", f"shipped: {describe(shipped)}; best on all rows: {describe(best_dev)}"]
    lines += [
        f"fold {f.fold}: chose {describe(f.chosen)} (train macro {f.train_score:.3f}; n_test={f.n_held_out})"
        for f in report.folds
    ]
    lines.append(f"ties prefer: {describe(candidates[0])}")
    return "\n".join(lines) + "\n\n" + one_change_table(prefer(candidates, shipped), outcomes, groups)


def one_change_table(
    candidates: Sequence[GroundingConfig],
    outcomes: dict[GroundingConfig, list[Verdict]],
    groups: Sequence[str] = tuple(GROUPS),
) -> str:
    """Dev agreement of each candidate that differs from the shipped one in a single field: a rule
    whose removal changes nothing on the dev rows is untested by them."""
    shipped = candidates[0]
    rows = []
    for cfg in candidates:
        changed = changed_fields(cfg, shipped)
        if len(changed) <= 1:
            label = f"{changed[0]}={getattr(cfg, changed[0])}" if changed else "shipped"
            rows.append([label, *(f"{group_agreement(g)(outcomes[cfg]):.3f}" for g in groups)])
    return "\n".join(md_table(["one change from shipped (dev, all rows)", *groups], rows, rest="---"))


def describe(cfg: GroundingConfig) -> str:
    """The fields where ``cfg`` differs from the shipped defaults ("shipped defaults" when none)."""
    return (
        " ".join(f"{n}={getattr(cfg, n)}" for n in changed_fields(cfg, GroundingConfig()))
        or "shipped defaults"
    )
