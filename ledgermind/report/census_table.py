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


def total(censuses: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Key-wise sum of nested counter dicts (numbers add; other values keep the first seen)."""
    out: dict[str, Any] = {}
    for c in censuses:
        _add_into(out, c)
    return out


def _add_into(acc: dict[str, Any], c: Mapping[str, Any]) -> None:
    for k, v in c.items():
        if isinstance(v, Mapping):
            _add_into(acc.setdefault(k, {}), v)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            acc[k] = acc.get(k, 0) + v
        elif isinstance(v, bool):
            acc[k] = acc.get(k, 0) + int(v)
        else:
            acc.setdefault(k, v)
