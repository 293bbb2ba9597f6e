"""The mechanism census as rows of a table, whatever keys it has.

The census (``metrics.json["mechanisms"]`` and each trajectory's ``mechanisms``) is a nested
dict of counters that grows as mechanisms are added; the report renders it generically so a new
key shows up without a report change. A counter at zero is flagged "never fired": in an
ablation study a mechanism that never ran is a finding, not a detail.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


PROBLEM_WORDS = ("fail", "error", "skipped", "identical")


@dataclass(frozen=True)
class CensusRow:
    group: str  # top-level key ("triggers")
    name: str  # dotted rest ("T1"), "" for a top-level scalar
    value: Any

    @property
    def key(self) -> str:
        return f"{self.group}.{self.name}" if self.name else self.group

    @property
    def is_problem_counter(self) -> bool:
        """A counter of things that should not happen (failures, skips, identical re-reads): zero is healthy."""
        return any(word in self.key for word in PROBLEM_WORDS)

    @property
    def never_fired(self) -> bool:
        numeric = isinstance(self.value, (int, float)) and not isinstance(self.value, bool)
        return numeric and self.value == 0 and not self.is_problem_counter

    @property
    def label(self) -> str:
        return self.name or self.group


def rows(census: Mapping[str, Any] | None) -> list[CensusRow]:
    """Depth-first, in the census's own key order (it is written in a meaningful order)."""
    out: list[CensusRow] = []
    for group, value in (census or {}).items():
        if isinstance(value, Mapping):
            out += [CensusRow(str(group), name, v) for name, v in _flatten(value, "")]
        else:
            out.append(CensusRow(str(group), "", value))
    return out


def _flatten(d: Mapping[str, Any], prefix: str) -> Iterable[tuple[str, Any]]:
    for k, v in d.items():
        name = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, Mapping):
            yield from _flatten(v, name)
        else:
            yield name, v


def grouped(census_rows: Iterable[CensusRow]) -> list[tuple[str, list[CensusRow]]]:
    """Rows by top-level group, in census order (one table line per mechanism)."""
    out: list[tuple[str, list[CensusRow]]] = []
    for r in census_rows:
        if not out or out[-1][0] != r.group:
            out.append((r.group, []))
        out[-1][1].append(r)
    return out


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


def run_census(metrics: Mapping[str, Any], trajectories: Iterable[Mapping[str, Any]]) -> tuple[dict[str, Any], str]:
    """The run's census and where it came from: ``metrics.json``, else the sum of the item censuses."""
    if isinstance(metrics.get("mechanisms"), Mapping):
        return dict(metrics["mechanisms"]), "metrics.json"
    from ledgermind.metrics.census import sum_census

    parts = [c for c in map(item_census, trajectories) if c is not None]
    if not parts:
        return {}, ""
    return sum_census(parts), f"derived from {len(parts)} trajectories"
