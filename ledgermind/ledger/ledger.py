"""The Structured Evidence Ledger: the single state of a trajectory (paper §3.1, App. B).

It holds the evidence entries, the claims that cite them, and the bipartite dependency graph
between them (App. B.3). Pipelines, the verifier and repair operators read and write the
trajectory state only through this API.

Time is a logical clock (one tick per recorded tool output) unless a clock is injected: TTLs
are then measured in steps, which keeps runs deterministic and replayable.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ledgermind.claims import Claim, ClaimStatus, ClaimType
from ledgermind.errors import LedgerError, ProvenanceError
from ledgermind.ledger.entry import LEAF_KINDS, EvidenceEntry, Kappa, Omega
from ledgermind.ledger.mapping import map_observations
from ledgermind.records import Record, decode, encode
from ledgermind.tools.base import ToolOutput


@dataclass
class Transition(Record):
    """One lifecycle operation, kept for the audit trail."""

    op: str  # APPEND | MARK_STALE | SUPERSEDE | REINSTATE | DROP | CONFLICT | RESOLVE | SET_SIGMA
    entry_id: str
    t: float
    detail: dict[str, Any] = field(default_factory=dict)


class Ledger(Record):
    """Evidence entries + claims + dependency graph. Entries enter only via ``record``."""

    def __init__(self, clock: Callable[[], float] | None = None, id_prefix: str = "OC") -> None:
        self._entries: dict[str, EvidenceEntry] = {}
        self._claims: dict[str, Claim] = {}
        self._tool_outputs: dict[str, ToolOutput] = {}
        self._counter = itertools.count(1)
        self._tick = 0.0
        self._clock = clock
        self.id_prefix = id_prefix
        self.transitions: list[Transition] = []

    # ------------------------------------------------------------------ time
    def now(self) -> float:
        return self._clock() if self._clock else self._tick

    def advance(self, steps: float = 1.0) -> float:
        """Advance the logical clock (no-op when an external clock is injected)."""
        self._tick += steps
        return self.now()

    # ------------------------------------------------------------------ APPEND
    def record(
        self,
        output: ToolOutput,
        *,
        sigma: float | None = None,
        default_sigma: float = 0.92,
        ttl: float = math.inf,
        derived_from: Iterable[str] = (),
        meta: dict[str, Any] | None = None,
        per_observation_meta: bool = True,
    ) -> list[EvidenceEntry]:
        """APPEND (Eq. 12) one entry per observation of a tool output, with f_e = M(o_t).

        ``sigma`` forces the confidence (e.g. 0.92 for OCs, 0.85 for retrieval); otherwise the
        observation's own score is used, falling back to ``default_sigma``. An output with an
        error or no observations records nothing (the verifier raises T1 on it).
        """
        if not isinstance(output, ToolOutput) or not output.live:
            raise ProvenanceError(
                "only the ToolOutput a tool invocation of this run returned can enter the ledger "
                "(reloaded, copied or rebuilt outputs are audit records, not evidence)"
            )
        self._tool_outputs[output.call_id] = output
        parents = tuple(derived_from)
        for p in parents:
            self.get(p)  # unknown parents are an error: leaf resolution would silently break
        if not output.ok:
            return []
        self.advance()
        created = []
        for obs, fact in map_observations(output):
            entry_meta = dict(meta or {})
            if per_observation_meta:
                entry_meta.update({k: v for k, v in obs.meta.items() if _is_plain(v)})
            entry = EvidenceEntry(
                id=f"{self.id_prefix}-{next(self._counter)}",
                src=fact.src,
                kappa=fact.kappa,
                t=self.now(),
                fact=fact.fact,
                sigma=_clamp(
                    sigma if sigma is not None else (fact.score if fact.score is not None else default_sigma)
                ),
                bbox=fact.bbox,
                ttl=ttl,
                tool_call_id=output.call_id,
                derived_from=parents if fact.kappa is Kappa.DERIVATION or parents else (),
                meta=entry_meta,
            )
            if entry.kappa is Kappa.DERIVATION:
                self._check_acyclic(entry)
            self._entries[entry.id] = entry
            self.transitions.append(Transition("APPEND", entry.id, entry.t, {"tool": output.tool}))
            created.append(entry)
        return created

    def keep_output(self, output: ToolOutput) -> None:
        """Keep a tool output in the audit trail *without* appending evidence.

        WHY: Alg. 1 line 39 appends the re-examination c′ only when c′ ≠ c*; a re-examination
        that confirms the hypothesis adds no entry, but the call happened and stays auditable.
        """
        if not isinstance(output, ToolOutput) or not output.live:
            raise ProvenanceError("only the ToolOutput a tool invocation of this run returned can be kept")
        self._tool_outputs[output.call_id] = output

    # ------------------------------------------------------------------ lifecycle
    def mark_stale(self, entry_id: str | None = None) -> list[str]:
        """MARK_STALE (Eq. 13): ω ← STALE iff (t_now − t_e) > ℓ_e. Returns claims to re-verify.

        With ``entry_id`` only that entry is checked, otherwise every active entry.
        """
        now = self.now()
        targets = [self.get(entry_id)] if entry_id else self.active()
        reverify: list[str] = []
        for e in targets:
            if e.active and e.is_expired(now):
                self._move(e, Omega.STALE, "MARK_STALE")
                reverify.extend(sorted(e.dependents))
        return reverify

    def supersede(self, old_id: str, new_id: str) -> None:
        """SUPERSEDE (Eq. 14): ω_old ← STALE, ξ_old ← id(new). ``new`` must already be recorded."""
        old, new = self.get(old_id), self.get(new_id)
        if old.id == new.id:
            raise LedgerError("an entry cannot supersede itself")
        old.superseded_by = new.id
        self._move(old, Omega.STALE, "SUPERSEDE", by=new.id)

    def retire(self, entry_id: str, reason: str) -> list[str]:
        """ω ← STALE outside the TTL rule (REFRESH marks its target stale, App. E.2).

        Returns the dependent claims that must be re-verified, as MARK_STALE does.
        """
        e = self.get(entry_id)
        if e.omega is Omega.ACTIVE:
            self._move(e, Omega.STALE, "MARK_STALE", reason=reason)
        return sorted(e.dependents)

    def reinstate(self, entry_id: str, reason: str) -> None:
        """A superseded (STALE) entry becomes ACTIVE again when a later comparison prefers it over
        its successor (Dual-Read escalation adopts the reading closest to Num(P_oc)). Not for
        entries whose TTL expired: time does not run backwards."""
        e = self.get(entry_id)
        if e.omega is not Omega.STALE or e.superseded_by is None or e.is_expired(self.now()):
            raise LedgerError(
                f"only a superseded, unexpired entry can be reinstated ({e.id} is {e.omega.value})"
            )
        e.superseded_by = None
        self._move(e, Omega.ACTIVE, "REINSTATE", reason=reason)

    def drop(self, entry_id: str) -> list[str]:
        """DROP (Eq. 15): ω ← DROPPED and invalidation propagated to every claim in D_e."""
        e = self.get(entry_id)
        self._move(e, Omega.DROPPED, "DROP")
        invalidated = []
        for cid in sorted(self.affected(entry_id)):
            c = self._claims.get(cid)
            if c is not None and c.status is ClaimStatus.ACTIVE:
                c.status = ClaimStatus.INVALIDATED
                invalidated.append(cid)
        return invalidated

    def mark_conflicted(self, entry_ids: Iterable[str]) -> None:
        """Mark entries found in conflict by the verifier's conflict scan (trigger T3)."""
        for eid in entry_ids:
            e = self.get(eid)
            if e.omega is Omega.ACTIVE:
                self._move(e, Omega.CONFLICTED, "CONFLICT")

    def resolve_conflict(self, entry_id: str) -> None:
        """A CONFLICTED entry whose rival was dropped (Π(T3)) becomes ACTIVE again."""
        e = self.get(entry_id)
        if e.omega is Omega.CONFLICTED:
            self._move(e, Omega.ACTIVE, "RESOLVE")

    def _move(self, e: EvidenceEntry, omega: Omega, op: str, **detail: Any) -> None:
        """ω_e ← ``omega``, kept in the audit trail as the lifecycle operation ``op``."""
        e.omega = omega
        self.transitions.append(Transition(op, e.id, self.now(), detail))

    def set_sigma(self, entry_id: str, sigma: float, reason: str) -> None:
        """Change an entry's confidence (Dual-Read: 0.97 / 0.65). Not a content change."""
        e = self.get(entry_id)
        old = e.sigma
        e.sigma = _clamp(sigma)
        self.transitions.append(
            Transition("SET_SIGMA", e.id, self.now(), {"from": old, "to": e.sigma, "reason": reason})
        )

    # ------------------------------------------------------------------ queries
    def get(self, entry_id: str) -> EvidenceEntry:
        try:
            return self._entries[entry_id]
        except KeyError:
            raise LedgerError(f"unknown evidence entry {entry_id!r}") from None

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self) -> list[EvidenceEntry]:
        return list(self._entries.values())

    def active(self) -> list[EvidenceEntry]:
        """L_t^ACTIVE."""
        return [e for e in self._entries.values() if e.active]

    def tool_output(self, call_id: str) -> ToolOutput | None:
        return self._tool_outputs.get(call_id)

    def tool_outputs(self) -> list[ToolOutput]:
        return list(self._tool_outputs.values())

    def leaves(self, entry_id: str) -> list[EvidenceEntry]:
        """Resolve an entry to its PERCEPTION/RETRIEVAL leaves (DERIVATION is transparent, §3.2)."""
        out: dict[str, EvidenceEntry] = {}
        self._collect_leaves(entry_id, out, stack=())
        return list(out.values())

    def _collect_leaves(self, entry_id: str, out: dict[str, EvidenceEntry], stack: tuple[str, ...]) -> None:
        if entry_id in stack:
            raise LedgerError(f"dependency cycle through {' → '.join((*stack, entry_id))}")
        e = self.get(entry_id)
        if e.kappa in LEAF_KINDS:
            out.setdefault(e.id, e)
            return
        for parent in e.derived_from:
            self._collect_leaves(parent, out, (*stack, entry_id))

    def _check_acyclic(self, entry: EvidenceEntry) -> None:
        seen: set[str] = set()
        todo = list(entry.derived_from)
        while todo:
            pid = todo.pop()
            if pid == entry.id:
                raise LedgerError(f"dependency cycle through {entry.id}")
            if pid in seen:
                continue
            seen.add(pid)
            todo.extend(self.get(pid).derived_from)

    # ------------------------------------------------------------------ claims & graph
    def add_claim(self, claim: Claim) -> Claim:
        """Register a claim and link it to the entries it cites (edges of G_t, App. B.3).

        Citations are resolved now: ids that are neither an entry nor an earlier claim are kept
        in ``unknown_citations`` (a structural grounding failure, never an exception).
        """
        if claim.id in self._claims:
            raise LedgerError(f"duplicate claim id {claim.id!r}")
        claim.step = int(self.now())
        claim.unknown_citations = [
            c for c in claim.citations if c not in self._entries and c not in self._claims
        ]
        self._claims[claim.id] = claim
        for eid in self.cited_entries(claim.id, active_only=False):
            self._entries[eid].dependents.add(claim.id)
        return claim

    def next_claim_id(self, ctype: ClaimType) -> str:
        n = sum(1 for c in self._claims.values() if c.ctype is ctype) + 1
        while f"{ctype.value}-{n}" in self._claims:
            n += 1
        return f"{ctype.value}-{n}"

    def claims(self, ctype: ClaimType | None = None) -> list[Claim]:
        return [c for c in self._claims.values() if ctype is None or c.ctype is ctype]

    def claim(self, claim_id: str) -> Claim:
        try:
            return self._claims[claim_id]
        except KeyError:
            raise LedgerError(f"unknown claim {claim_id!r}") from None

    def cited_entries(self, claim_id: str, *, active_only: bool = True) -> list[str]:
        """Entry ids a claim cites, directly or through the SC claims it cites, in order."""
        out: dict[str, None] = {}
        self._cited(claim_id, out, set(), active_only)
        return list(out)

    def _cited(self, claim_id: str, out: dict[str, None], seen: set[str], active_only: bool) -> None:
        if claim_id in seen:
            return
        seen.add(claim_id)
        for cid in self._claims[claim_id].citations:
            if cid in self._entries:
                if not active_only or self._entries[cid].active:
                    out.setdefault(cid, None)
            elif cid in self._claims and self._claims[cid].status is not ClaimStatus.DROPPED:
                self._cited(cid, out, seen, active_only)

    def support(self, claim_id: str) -> list[EvidenceEntry]:
        """S(c) (Eq. 1): active entries the claim cites."""
        return [self._entries[e] for e in self.cited_entries(claim_id, active_only=True)]

    def leaf_pool(self, claim_id: str) -> list[EvidenceEntry]:
        """P_c: facts of the PERCEPTION/RETRIEVAL leaves of the claim's active support (§3.2)."""
        out: dict[str, EvidenceEntry] = {}
        for e in self.support(claim_id):
            for leaf in self.leaves(e.id):
                if leaf.active or leaf.id == e.id:
                    out.setdefault(leaf.id, leaf)
        return list(out.values())

    def affected(self, entry_id: str) -> set[str]:
        """Affected(e): claims that must be re-audited when ω_e changes (App. B.3)."""
        return set(self.get(entry_id).dependents)

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict[str, Any]:
        return {
            "id_prefix": self.id_prefix,
            "tick": self._tick,
            **encode(
                {
                    "entries": self.entries(),
                    "claims": self.claims(),
                    "tool_outputs": self.tool_outputs(),
                    "transitions": self.transitions,
                }
            ),
        }

    @classmethod
    def from_dict(cls, data: Any, **extra: Any) -> Ledger:
        if not isinstance(data, Mapping):  # a file of another shape: the codec's error, as for any record
            raise ValueError(f"Ledger: expected an object, got {data!r:.40}")
        led = cls(id_prefix=decode(str, data.get("id_prefix", "OC"), "id_prefix"), **extra)
        led._tick = float(decode(float, data.get("tick", 0.0), "tick"))
        led._entries = {e.id: e for e in decode(list[EvidenceEntry], data.get("entries", []))}
        led._claims = {c.id: c for c in decode(list[Claim], data.get("claims", []))}
        led._tool_outputs = {o.call_id: o for o in decode(list[ToolOutput], data.get("tool_outputs", []))}
        led.transitions = decode(list[Transition], data.get("transitions", []))
        nums = [int(e.split("-")[-1]) for e in led._entries if e.split("-")[-1].isdigit()]
        led._counter = itertools.count(max(nums, default=0) + 1)
        return led


def _clamp(x: float) -> float:
    return max(0.0, min(1.0, float(x)))


def _is_plain(v: Any) -> bool:
    return (
        isinstance(v, (str, int, float, bool))
        or v is None
        or (isinstance(v, (list, tuple)) and all(isinstance(x, (str, int, float, bool)) for x in v))
    )
