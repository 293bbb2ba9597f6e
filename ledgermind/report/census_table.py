"""The mechanism census as rows of a table, whatever keys it has.

The census (``metrics.json["mechanisms"]`` and each trajectory's ``mechanisms``) is a nested
dict of counters that grows as mechanisms are added; the report renders it generically so a new
key shows up without a report change. A counter at zero is flagged "never fired": in an
ablation study a mechanism that never ran is a finding, not a detail — unless the run's variant
cannot reach it at all (``structural_zeros``: the BASELINE path in a full run, Dual-Read under
``no_dual_read``); those zeros are shown grey, by design, not red.

Zeros are coloured by what they mean, since a zero can be healthy, impossible or a warning; one rule
per meaning:
* ``structural`` (grey): the variant cannot reach the counter;
* ``good zero`` (neutral): zero is the healthy or uninformative value — failures, skips, identical
  re-reads, faults missed or that reached the answer, a route the dispatcher did not take (on the
  gauges every item is FULLPIPE by design), a fault kind never injected;
* ``dead`` (red, "never fired"): a mechanism this variant can reach did nothing — or, in a section
  that counts faults per kind (``injected`` / ``caught`` …), a kind was injected and never caught.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from omegaconf.errors import OmegaConfBaseException

from ledgermind.confutil import container, flat_items
from ledgermind.errors import UserError
from ledgermind.runs.reader import RunDir

PROBLEM_WORDS = ("fail", "error", "skipped", "identical")
# A zero of these is healthy or says nothing about a mechanism (module docstring): neutral, not red.
GOOD_ZERO_WORDS = PROBLEM_WORDS + (
    "missed",
    "in_answer",
    "reached",
    "faded",
    "harmed",
    "coupled",
    "surviving",
    "disagree",
    "escalated",
    "abstained",
)
# a route / reason not taken is not a dead mechanism
NEUTRAL_ZERO_GROUPS = ("paths", "t5", "knowledge_without_source")
# Sub-keys of a section that counts faults per kind (the simulator's): which ones are a mechanism's catches.
FAULT_TOTAL = "injected"
CATCH_OUTCOMES = ("caught", "flagged", "neutralised")


@dataclass(frozen=True)
class CensusRow:
    group: str  # top-level key ("triggers")
    name: str  # dotted rest ("T1"), "" for a top-level scalar
    value: Any
    structural: bool = False  # zero by design: the run's variant cannot reach this mechanism
    dead_if_zero: bool | None = None  # set by ``rows`` for per-fault-kind sections (None: decided by name)

    @property
    def key(self) -> str:
        return f"{self.group}.{self.name}" if self.name else self.group

    @property
    def is_problem_counter(self) -> bool:
        """A counter of things that should not happen (failures, skips, identical re-reads): zero is healthy."""
        return any(word in self.key for word in PROBLEM_WORDS)

    @property
    def meaning(self) -> str:
        """The colour class of a zero (module docstring): structural (grey), good-zero (neutral, no flag)
        or dead (red, "never fired": zero where the variant could act); '' for a non-zero count."""
        numeric = isinstance(self.value, (int, float)) and not isinstance(self.value, bool)
        if not numeric or self.value != 0:
            return ""
        if self.structural:
            return "structural"
        if self.dead_if_zero is not None:
            return "dead" if self.dead_if_zero else "good-zero"
        good = any(w in self.key for w in GOOD_ZERO_WORDS) or self.group in NEUTRAL_ZERO_GROUPS
        return "good-zero" if good else "dead"


def rows(census: Mapping[str, Any] | None, structural: Iterable[str] = ()) -> list[CensusRow]:
    """Depth-first, in the census's own key order (it is written in a meaningful order); keys in
    ``structural`` (or under a group named there) are marked zero-by-design."""
    marked = set(structural)
    out: list[CensusRow] = []
    for key, value in (census or {}).items():
        g = str(key)
        if isinstance(value, Mapping):
            out += [
                CensusRow(g, name, v, f"{g}.{name}" in marked or g in marked, _fault_kind_rule(value, name))
                for name, v in flat_items(value)
            ]
        else:
            out.append(CensusRow(g, "", value, g in marked))
    return out


def _fault_kind_rule(section: Mapping[str, Any], name: str) -> bool | None:
    """In a section with ``injected.<kind>`` counters: a catch counter at zero is dead only when that
    kind was injected; every other zero there (injected, missed, reached, by place) is neutral."""
    totals = section.get(FAULT_TOTAL)
    if not isinstance(totals, Mapping):
        return None
    outcome, _, kind = name.partition(".")
    if outcome in CATCH_OUTCOMES and "." not in kind:
        return bool(totals.get(kind))
    return False


def grouped(census_rows: Iterable[CensusRow]) -> list[tuple[str, list[CensusRow]]]:
    """Rows by top-level group, in census order (one table line per mechanism)."""
    return [(group, list(rs)) for group, rs in itertools.groupby(census_rows, key=lambda r: r.group)]


def item_census(trajectory: Mapping[str, Any]) -> dict[str, Any] | None:
    """The census recorded with a trajectory, else derived from it (runs from before the census).

    Derivation goes through ``ledgermind.metrics.census`` (the one definition of the counters);
    a trajectory too old or too damaged to load yields None, and the page says so.
    """
    recorded = trajectory.get("mechanisms")
    if isinstance(recorded, Mapping):
        return dict(recorded)
    from ledgermind.metrics.census import census
    from ledgermind.trajectory import Trajectory

    try:
        return census(Trajectory.from_dict(dict(trajectory)))
    except (KeyError, ValueError, TypeError, AttributeError):
        return None


def run_census(
    metrics: Mapping[str, Any], item_censuses: Iterable[Mapping[str, Any]]
) -> tuple[dict[str, Any], str]:
    """The run's census and where it came from: ``metrics.json``, else the sum of the item censuses
    (``item_census`` of each trajectory that has one)."""
    if isinstance(metrics.get("mechanisms"), Mapping):
        return dict(metrics["mechanisms"]), "metrics.json"
    from ledgermind.metrics.census import sum_census

    parts = list(item_censuses)
    return (sum_census(parts), f"derived from {len(parts)} trajectories") if parts else ({}, "")


def structural_zeros(run_dir: Path, variant: str) -> set[str]:
    """Census keys the run's variant (its recorded name) cannot reach.

    Paths: those ``choose_path`` never returns under the variant's ablation flags (OFFICIAL only
    under ``pipeline=official``). Mechanisms: the variant's ``table.structural`` keys in
    ``conf/ablation`` (``experiment/variants.py``; e.g. Dual-Read under ``no_dual_read``). A variant
    no file lists (``custom``, ``official_cot``) is read from its recorded config
    (``.hydra/config.yaml``; none: the default flags) and gets the path rule only.
    """
    from ledgermind.experiment.variants import variant as listed_variant
    from ledgermind.pipeline.agent import choose_path
    from ledgermind.trajectory import PathKind

    listed = listed_variant(variant)
    flags, official = (listed.flags, False) if listed else _recorded_flags(Path(run_dir), variant)
    if official:
        reachable = {PathKind.OFFICIAL.value}
    else:  # the dispatcher's decision only reads is_complex: a stand-in profile of each kind
        profiles = [SimpleNamespace(is_complex=c) for c in (False, True)]
        reachable = {choose_path(p, flags).value for p in profiles}  # type: ignore[arg-type]
    out = {f"paths.{p.value}" for p in PathKind if p.value not in reachable}
    return out | set(listed.structural if listed is not None else ())


def _recorded_flags(run_dir: Path, variant: str) -> tuple[Any, bool]:
    from ledgermind.pipeline.config import AblationFlags

    try:
        recorded = RunDir(run_dir).config()
        cfg = container(recorded, resolve=False) if recorded is not None else {}
        node, pipe = dict(cfg.get("ablation") or {}), dict(cfg.get("pipeline") or {})
    except (ValueError, TypeError, OmegaConfBaseException, UserError):
        node, pipe = {}, {}  # an unreadable config only costs the grey marking
    official = variant.startswith("official") or "official" in str(pipe.get("agent_factory", ""))
    names = {f.name for f in fields(AblationFlags)}
    return AblationFlags(**{k: bool(v) for k, v in node.items() if k in names}), official
