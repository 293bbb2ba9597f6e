"""The 11-field evidence entry of the Structured Evidence Ledger (paper Eq. 11, App. B.1)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ledgermind.records import Record, codec
from ledgermind.tools.base import BBOX, BBox


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


def _finite_or_none(ttl: float) -> float | None:
    """JSON has no infinity: an entry that never expires is written with ``ttl: null``."""
    return None if math.isinf(ttl) else ttl


def _inf_if_none(ttl: float | None) -> float:
    return math.inf if ttl is None else float(ttl)


@dataclass
class EvidenceEntry(Record):
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
    bbox: BBox | None = field(default=None, metadata=BBOX)
    ttl: float = field(default=math.inf, metadata=codec(_finite_or_none, _inf_if_none))
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
