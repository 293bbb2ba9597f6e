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


@dataclass(frozen=True)
class CensusRow:
    group: str  # top-level key ("triggers")
    name: str  # dotted rest ("T1"), "" for a top-level scalar
    value: Any

    @property
    def key(self) -> str:
        return f"{self.group}.{self.name}" if self.name else self.group

    @property
    def never_fired(self) -> bool:
        return isinstance(self.value, (int, float)) and not isinstance(self.value, bool) and self.value == 0


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
