"""Where accuracy was lost: the run page's "why" panel.

Why a panel of its own: accuracy and its splits say *how good* a run is; a researcher asks next
*why* it lost the items it lost, and whether the mechanism built for that failure saw it. Two
views, both read from what the run recorded (never recomputed from a model):

* per fault kind, for a backend whose census carries a section counting faults per kind (the
  simulated backbone: ``injected`` / ``flagged`` / ``neutralised`` / ``faded`` / ``reached``): the counts are
  the census's own numbers, shown with links to example items where the fault reached the answer
  or was missed;
* per trigger and per operator, for any backend: among the items lost (wrong, partial, unparsed),
  how many had that trigger fire / operator run, against how many right items had it, and the
  lost items where no trigger fired at all (nothing flagged them), with example links.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

LOST = ("wrong", "partial", "unparsed")  # item outcomes that lost accuracy (errors are counted apart)
# per-kind outcomes (a section's ``harmed`` counts per mechanism, not per kind: it is not a column here)
OUTCOME_ORDER = ("injected", "caught", "flagged", "neutralised", "faded", "missed", "reached", "in_answer")
OUTCOME_LABEL = {
    "in_answer": "reached the answer",
    "reached": "reached the answer",
    "faded": "faded unflagged",
}
EXAMPLE_OUTCOMES = ("reached", "in_answer", "missed")  # where an example item explains a loss
EXAMPLES = 3


@dataclass(frozen=True)
class Example:
    id: str
    href: str


@dataclass(frozen=True)
class FaultRow:
    kind: str
    counts: dict[str, int | None]  # outcome -> the census total (None: the census has no such counter)
    examples: list[Example] = field(default_factory=list)


@dataclass(frozen=True)
class FaultSection:
    name: str  # the census group ("simulator")
    outcomes: tuple[str, ...]
    rows: list[FaultRow]

    def label(self, outcome: str) -> str:
        return OUTCOME_LABEL.get(outcome, outcome)


@dataclass(frozen=True)
class MechanismRow:
    name: str
    lost: int  # lost items where it fired / ran
    right: int  # correct items where it fired / ran
    examples: list[Example] = field(default_factory=list)


@dataclass(frozen=True)
class WhyView:
    n_scored: int
    n_lost: int
    faults: list[FaultSection]
    triggers: list[MechanismRow]
    operators: list[MechanismRow]
    unflagged: MechanismRow  # lost items where no trigger fired


def build_why(
    census: Mapping[str, Any],
    item_census: Mapping[str, Mapping[str, Any]],
    items: Sequence[Any],
    triggers: Sequence[str],
    operators: Sequence[str],
) -> WhyView:
    """``census``: the run's (summed) census; ``item_census``: id → that item's census; ``items``:
    the item rows (id, href, outcome, triggers, operators)."""
    hrefs = {i.id: i.href for i in items}
    scored = [i for i in items if i.outcome != "error"]
    lost = [i for i in scored if i.outcome in LOST]
    return WhyView(
        n_scored=len(scored),
        n_lost=len(lost),
        faults=[
            fault_section(name, section, item_census, hrefs)
            for name, section in census.items()
            if isinstance(_at(section, "injected"), Mapping)  # a section that counts faults per kind
        ],
        triggers=[_mechanism(t, scored, lambda i, t=t: t in i.triggers) for t in triggers],
        operators=[_mechanism(o, scored, lambda i, o=o: o in i.operators) for o in operators],
        unflagged=_mechanism("no trigger fired", scored, lambda i: not i.triggers),
    )


def fault_section(
    name: str,
    section: Mapping[str, Any],
    item_census: Mapping[str, Mapping[str, Any]],
    hrefs: Mapping[str, str],
) -> FaultSection:
    outcomes = tuple(o for o in OUTCOME_ORDER if isinstance(section.get(o), Mapping))
    kinds = list(dict.fromkeys(k for o in outcomes for k in section[o]))
    rows = []
    for kind in kinds:
        counts = {o: (int(section[o][kind] or 0) if kind in section[o] else None) for o in outcomes}
        if not any(counts.values()):
            continue  # a kind never injected and never counted: nothing to explain
        rows.append(FaultRow(kind, counts, _examples(name, kind, item_census, hrefs)))
    return FaultSection(name, outcomes, rows)


def _examples(
    name: str, kind: str, item_census: Mapping[str, Mapping[str, Any]], hrefs: Mapping[str, str]
) -> list[Example]:
    """Items where this fault kind reached the answer (else was missed or did harm), first few."""
    hits = (
        i for o in EXAMPLE_OUTCOMES for i, c in item_census.items() if i in hrefs and _at(c, name, o, kind)
    )
    return [Example(i, hrefs[i]) for i in list(dict.fromkeys(hits))[:EXAMPLES]]


def _at(node: Any, *keys: str) -> Any:
    """``node[k1][k2]…``, or None where a level is missing or not a mapping (an old or partial census)."""
    for k in keys:
        node = node.get(k) if isinstance(node, Mapping) else None
    return node


def _mechanism(name: str, scored: Iterable[Any], fired: Any) -> MechanismRow:
    hit = [i for i in scored if fired(i)]
    lost = [i for i in hit if i.outcome in LOST]
    return MechanismRow(
        name,
        len(lost),
        sum(1 for i in hit if i.outcome == "correct"),
        [Example(i.id, i.href) for i in lost[:EXAMPLES]],
    )
