"""The event-triggered verifier and its four-step protocol (App. E.1).

(1) grounding audit: ρ(c) (and ECC/NCC) for the claims of the step → T5, T6;
(2) conflict scan over L^ACTIVE → T3;
(3) staleness scan of every cited entry's TTL → T2 (and MARK_STALE);
(4) repair recommendation: the hits, in the order the policy should handle them.
Tool outputs (T1) and confidence drops (T4) are checked as they are recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import KW_ONLY, dataclass

from ledgermind import paper
from ledgermind.claims import Claim
from ledgermind.grounding.cascade import GroundingResult
from ledgermind.ledger import EvidenceEntry, Ledger
from ledgermind.repair.triggers import (
    TriggerHit,
    t1_tool_anomaly,
    t2_stale_reference,
    t3_conflicts,
    t4_confidence_drop,
    t4_illegible_output,
    t5_unsupported_decision,
    t6_phantom_grounding,
)
from ledgermind.tools.base import ToolOutput
from ledgermind.trajectory import Trigger

Grounder = Callable[[Claim], GroundingResult]

# Order of step (4): trajectory-threatening events first, local ones after.
PRIORITY = [Trigger.T1, Trigger.T3, Trigger.T2, Trigger.T4, Trigger.T6, Trigger.T5]


@dataclass(eq=False)
class Verifier:
    ledger: Ledger
    ground: Grounder
    _: KW_ONLY
    beta: float = paper.BETA
    sigma_floor: float = paper.SIGMA_FLOOR
    conflict_iou: float = paper.CONFLICT_IOU

    def on_tool_output(self, out: ToolOutput, entries: Iterable[EvidenceEntry]) -> list[TriggerHit]:
        """T1 on the output (T4 instead when it is empty because every reading was below σ_floor),
        T4 on every entry it created."""
        low = t4_illegible_output(out, self.sigma_floor)
        hits = [low] if low else [h for h in [t1_tool_anomaly(out)] if h]
        hits += [h for e in entries if (h := t4_confidence_drop(e, self.sigma_floor))]
        return hits

    def grounding_audit(self, claims: Iterable[Claim]) -> list[TriggerHit]:
        """Step (1): T5 for decision claims below β, T6 for cited-but-mismatched claims."""
        hits: list[TriggerHit] = []
        for c in claims:
            if not c.active:
                continue
            g = self.ground(c)
            if h := t5_unsupported_decision(c, g.coverage, self.beta):
                hits.append(h)
            if h := t6_phantom_grounding(c, g.coverage, g.ecc, g.ncc):
                hits.append(h)
        return hits

    def conflict_scan(self) -> list[TriggerHit]:
        """Step (2): T3 over the active ledger."""
        return t3_conflicts(self.ledger, self.conflict_iou)

    def staleness_scan(self, claims: Iterable[Claim]) -> list[TriggerHit]:
        """Step (3): T2 for claims citing expired entries; MARK_STALE applied to them."""
        hits = [h for c in claims if c.active and (h := t2_stale_reference(self.ledger, c))]
        for h in hits:
            for eid in h.targets:
                for cid in self.ledger.mark_stale(eid):  # MARK_STALE: re-verify the dependents
                    if cid in {c.id for c in self.ledger.claims()}:
                        self.ground(self.ledger.claim(cid))
        return hits

    def protocol(self, claims: Iterable[Claim]) -> list[TriggerHit]:
        """Run steps (1)–(3) and return the hits ordered for step (4).

        The grounding audit covers the claims of this step; the staleness scan covers every
        active claim of the trajectory, since any of them may cite an expired entry.
        """
        claims = list(claims)
        every = list({c.id: c for c in [*self.ledger.claims(), *claims]}.values())
        hits = self.grounding_audit(claims) + self.conflict_scan() + self.staleness_scan(every)
        return sorted(hits, key=lambda h: PRIORITY.index(h.trigger))
