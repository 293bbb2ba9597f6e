"""The 11-field evidence entry of the Structured Evidence Ledger (paper Eq. 11, App. B.1)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ledgermind.tools.base import BBox


class Kappa(str, Enum):
    """Epistemic type κ(e)."""

    PERCEPTION = "PERCEPTION"
    RETRIEVAL = "RETRIEVAL"
    DERIVATION = "DERIVATION"


class Omega(str, Enum):
    """Lifecycle status ω_e (App. B.2 finite state machine)."""

    ACTIVE = "ACTIVE"
    STALE = "STALE"
    CONFLICTED = "CONFLICTED"
    DROPPED = "DROPPED"


LEAF_KINDS = frozenset({Kappa.PERCEPTION, Kappa.RETRIEVAL})


@dataclass
class EvidenceEntry:
    """e = (id, src, κ, t_e, f_e, σ_e, ω_e, b_e, ℓ_e, ξ_e, D_e).

    Besides the paper's 11 fields we keep the provenance needed to audit and replay:
    ``tool_call_id`` (the ``ToolOutput`` it came from), ``derived_from`` (for DERIVATION
    entries: the entries they were computed from, used for leaf resolution) and free ``meta``
    (e.g. the OC category). Entries are only created by ``Ledger.record``.
    """

    id: str
    src: str
    kappa: Kappa
    t: float
    fact: str
    sigma: float
    omega: Omega = Omega.ACTIVE
    bbox: BBox | None = None
    ttl: float = math.inf
    superseded_by: str | None = None
    dependents: set[str] = field(default_factory=set)  # D_e: ids of claims citing e
    tool_call_id: str = ""
    derived_from: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return self.omega is Omega.ACTIVE

    @property
    def category(self) -> str | None:
        """OC semantic category (TEXT, NUMBER, ...) when the entry is an observation claim."""
        return self.meta.get("category")

    def is_expired(self, now: float) -> bool:
        """TTL rule of MARK_STALE (Eq. 13): (t_now − t_e) > ℓ_e."""
        return (now - self.t) > self.ttl

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "src": self.src,
            "kappa": self.kappa.value,
            "t": self.t,
            "fact": self.fact,
            "sigma": self.sigma,
            "omega": self.omega.value,
            "bbox": self.bbox.as_list() if self.bbox else None,
            "ttl": None if math.isinf(self.ttl) else self.ttl,
            "superseded_by": self.superseded_by,
            "dependents": sorted(self.dependents),
            "tool_call_id": self.tool_call_id,
            "derived_from": list(self.derived_from),
            "meta": self.meta,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EvidenceEntry:
        return cls(
            id=d["id"],
            src=d["src"],
            kappa=Kappa(d["kappa"]),
            t=float(d["t"]),
            fact=d["fact"],
            sigma=float(d["sigma"]),
            omega=Omega(d["omega"]),
            bbox=BBox.from_list(d["bbox"]) if d.get("bbox") else None,
            ttl=math.inf if d.get("ttl") is None else float(d["ttl"]),
            superseded_by=d.get("superseded_by"),
            dependents=set(d.get("dependents", [])),
            tool_call_id=d.get("tool_call_id", ""),
            derived_from=tuple(d.get("derived_from", [])),
            meta=dict(d.get("meta") or {}),
        )
