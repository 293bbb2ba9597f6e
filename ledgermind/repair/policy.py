"""Repair policy Π (App. E.2, Eq. 25) with locality-first escalation, budgets and cost (Eq. 26).

Π(T1) = RETRY → SWITCH            Π(T2) = REFRESH (if a DC depends on it) / DROP
Π(T3) = DROP(argmin σ_e)          Π(T4) = RETRY(θ′ = θ + Δθ)
Π(T5) = ACQUIRE (if M > 0) / ABSTAIN
Π(T6) = warning injection + ACQUIRE

STOP_AND_ANSWER (Eq. 24) is in the operator registry, since it belongs to the paper's operator set
R_T, but Eq. 25 maps no trigger to it, so Π never applies it (docs/architecture.md).

Each trigger type allows at most M0 repairs per trajectory; ACQUIRE for T5/T6 also spends the
trajectory budget M that hypothesis verification shares (Alg. 1). ``FreeformRepair`` is the
``free_form_repair`` ablation behind the same ``handle`` interface.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from ledgermind import paper
from ledgermind.claims import ClaimType
from ledgermind.ledger import EvidenceEntry, Omega
from ledgermind.repair.operators import OPERATORS, OperatorResult, RepairContext
from ledgermind.repair.reinvocation import reinvoking
from ledgermind.repair.triggers import TriggerHit
from ledgermind.trajectory import OperatorName, RepairEvent, RepairLayer, Trigger

log = logging.getLogger(__name__)

HALLUCINATION_WARNING = (
    "WARNING: the key entities or numbers of this conclusion do not appear in the evidence it cites. "
    "It may be a language-model hallucination; use only what the evidence actually shows."
)


@dataclass
class Budget:
    """The trajectory repair budget M (Alg. 1), shared by hypothesis verification and ACQUIRE.

    App. A funds hypothesis verification first and gives the decision part what remains, so the
    FULLPIPE ``reserve``s one unit for it before reasoning: T5/T6 ACQUIRE (``spend``) cannot touch
    a reserved unit, hypothesis verification takes it with ``spend_reserved``, and ``release``
    returns it to the pool once verification is over (or was not needed).
    """

    remaining: int
    reserved: int = 0

    def spend(self) -> bool:
        if self.remaining - self.reserved <= 0:
            return False
        self.remaining -= 1
        return True

    def reserve(self, n: int = 1) -> None:
        self.reserved = min(self.remaining, self.reserved + n)

    def spend_reserved(self) -> bool:
        if self.reserved > 0:
            self.reserved -= 1
            self.remaining -= 1
            return True
        return self.spend()

    def release(self) -> None:
        self.reserved = 0

    def refund(self) -> None:
        """Return a unit spent on a re-invocation that was refused as identical (nothing was sent)."""
        self.remaining += 1


class T5Ending(str, Enum):
    """What a T5 firing does when no ACQUIRE can be made (M = 0, M0 used up, or the ACQUIRE would
    repeat a request). App. E.2: Π(T5) = ACQUIRE if M > 0 else ABSTAIN — ``abstain``. ``keep``
    (the pipeline's default, pipeline.t5_ending) is a documented deviation: the decision stands, since ρ is
    lexical and a correct answer no evidence states would otherwise become ⊥. Either applies on
    every path."""

    ABSTAIN = "abstain"
    KEEP = "keep"


@dataclass(frozen=True)
class AcquireSpec:
    """q_spec for ACQUIRE: which tool to call with which inputs to close a grounding gap."""

    tool: str
    inputs: Mapping[str, Any]


@dataclass
class RepairOutcome:
    events: list[RepairEvent] = field(default_factory=list)
    new_entries: list[str] = field(default_factory=list)
    abstain: bool = False
    warning: str | None = None  # T6 warning to inject into the next prompt
    rewrite: str | None = None  # free-form reflection output (ablation only)

    def extend(self, other: RepairOutcome) -> None:
        self.events += other.events
        self.new_entries += other.new_entries
        self.abstain = self.abstain or other.abstain
        self.warning = other.warning or self.warning
        self.rewrite = other.rewrite or self.rewrite


Regrounder = Callable[[], bool]

# Operators that re-invoke a tool: their requests may not repeat one already sent for the item.
_REINVOKING = frozenset({OperatorName.RETRY, OperatorName.REFRESH, OperatorName.ACQUIRE})


class RepairEngine:
    """Applies Π to trigger hits. Never raises for a failing tool: that is another T1."""

    def __init__(
        self,
        ctx: RepairContext,
        budget: Budget,
        per_trigger_budget: int = paper.PER_TRIGGER_BUDGET,
        costs: Mapping[str, float] | None = None,
        sigma_floor: float = paper.SIGMA_FLOOR,
        t5_ending: T5Ending | str = paper.T5_ENDING,
    ) -> None:
        self.ctx = ctx
        self.t5_ending = T5Ending(t5_ending)
        self.sigma_floor = sigma_floor
        self.budget = budget
        self.m0 = per_trigger_budget
        self.costs = dict(costs or paper.REPAIR_COSTS)
        self.used: Counter[Trigger] = Counter()

    # ------------------------------------------------------------------ accounting
    def cost(self, result: OperatorResult) -> float:
        """λ_type(r) · cost(r); cost(r) = 1 + number of tool calls the operator made (a re-invocation
        refused as identical sent nothing and costs nothing)."""
        if result.skipped_identical:
            return 0.0
        return self.costs.get(result.layer.value, 1.0) * (1 + result.tool_calls)

    def _event(
        self, hit: TriggerHit, res: OperatorResult, grounded_after: bool | None, note: str = ""
    ) -> RepairEvent:
        return RepairEvent(
            trigger=hit.trigger,
            operator=res.operator,
            layer=res.layer,
            targets=list(res.targets or hit.targets),
            new_entries=list(res.new_entries),
            cost=self.cost(res),
            grounded_after=grounded_after,
            note="; ".join(x for x in (hit.detail, res.note, note) if x),
            step=int(self.ctx.ledger.now()),
            error=res.error,
            tool_call=res.tool_output.call_id if res.tool_output is not None else None,
            variation=res.variation,
            skipped_identical=res.skipped_identical,
        )

    def _exhausted(self, hit: TriggerHit) -> RepairEvent:
        return RepairEvent(
            hit.trigger, None, None, list(hit.targets), note=f"{hit.detail}; per-trigger budget M0 exhausted"
        )

    async def _apply(self, op: OperatorName, **kw: Any) -> OperatorResult:
        """Apply one operator; if it raises, the failure is recorded on its event (census
        ``operator_failures``), never passed off as a tool anomaly, and the trajectory goes on."""
        operator = OPERATORS.get(op.value)
        try:
            if op not in _REINVOKING:
                return await operator.apply(self.ctx, **kw)
            with reinvoking() as scope:
                res = await operator.apply(self.ctx, **kw)
            res.skipped_identical = bool(scope.skipped)
            return res
        except Exception as exc:
            log.warning("repair operator %s failed: %s: %s", op.value, type(exc).__name__, exc)
            return OperatorResult(operator=op, layer=operator.layer, error=f"{type(exc).__name__}: {exc}")

    # ------------------------------------------------------------------ Π
    async def handle(
        self,
        hit: TriggerHit,
        *,
        acquire: AcquireSpec | None = None,
        regrounded: Regrounder | None = None,
    ) -> RepairOutcome:
        if hit.trigger is Trigger.T2:
            hit = self._unrepaired(hit)
            if not hit.targets:  # every stale entry was refreshed or dropped for an earlier claim
                return RepairOutcome()
        if self.used[hit.trigger] >= self.m0:
            if hit.trigger is Trigger.T3:  # unresolved: both stay out of L^A
                self.ctx.ledger.mark_conflicted(hit.targets)
            if hit.trigger is Trigger.T5:  # no ACQUIRE left: the same ending as M = 0
                return await self._t5_end(hit, [], "per-trigger budget M0 exhausted")
            return RepairOutcome(events=[self._exhausted(hit)])
        handler = {
            Trigger.T1: self._t1,
            Trigger.T2: self._t2,
            Trigger.T3: self._t3,
            Trigger.T4: self._t4,
            Trigger.T5: self._t5,
            Trigger.T6: self._t6,
        }[hit.trigger]
        return await handler(hit, acquire, regrounded)

    async def _t1(self, hit: TriggerHit, _acq: AcquireSpec | None, _rg: Regrounder | None) -> RepairOutcome:
        """RETRY, and if the retry fails again (or would repeat the failed request: not sent), SWITCH
        to a compatible tool and call it."""
        out = RepairOutcome()
        call_id = hit.targets[0]
        while self.used[hit.trigger] < self.m0:
            self.used[hit.trigger] += 1
            if self.used[hit.trigger] == 1:
                res = await self._apply(OperatorName.RETRY, call_id=call_id)
            else:
                res = await self._switch_and_call(call_id)
            ok = res.tool_output is not None and res.tool_output.ok
            out.events.append(self._event(hit, res, ok))
            out.new_entries += res.new_entries
            if ok:
                break
        return out

    async def _switch_and_call(self, call_id: str) -> OperatorResult:
        sw = await self._apply(OperatorName.SWITCH, call_id=call_id)
        origin = self.ctx.ledger.tool_output(call_id)
        if not sw.switched_to or origin is None or self.ctx.switch_inputs is None:
            return sw
        alt = self.ctx.tools[sw.switched_to]
        acq = await self._apply(
            OperatorName.ACQUIRE,
            tool=sw.switched_to,
            inputs=self.ctx.switch_inputs(alt, origin),
            target=call_id,
        )
        # Report the escalation as one SWITCH repair whose tool call is the alternative action.
        return OperatorResult(
            operator=OperatorName.SWITCH,
            layer=RepairLayer.ACTION,
            targets=[call_id],
            new_entries=acq.new_entries,
            tool_output=acq.tool_output,
            tool_calls=acq.tool_calls,
            switched_to=sw.switched_to,
            note=sw.note,
            variation=acq.variation,
            skipped_identical=acq.skipped_identical,  # the alternative's request was already sent: not again
        )

    async def _t2(self, hit: TriggerHit, _acq: AcquireSpec | None, rg: Regrounder | None) -> RepairOutcome:
        out = RepairOutcome()
        for eid in hit.targets:
            if self.used[hit.trigger] >= self.m0:
                out.events.append(self._exhausted(hit))
                break
            self.used[hit.trigger] += 1
            entry = self.ctx.ledger.get(eid)
            if self._has_decision_dependent(entry):
                res = await self._apply(OperatorName.REFRESH, entry_id=eid)
                if res.skipped_identical:  # the refresh would repeat its request: Π(T2) falls back to DROP
                    out.events.append(self._event(hit, res, False))
                    res = await self._apply(OperatorName.DROP, entry_id=eid)
            else:
                res = await self._apply(OperatorName.DROP, entry_id=eid)
            out.events.append(self._event(hit, res, rg() if rg else None))
            out.new_entries += res.new_entries
        return out

    def _unrepaired(self, hit: TriggerHit) -> TriggerHit:
        """T2 fires once per claim citing an expired entry; an entry an earlier hit already
        superseded (REFRESH) or dropped needs no second repair — a second REFRESH would re-run the
        same call and supersede the entry twice."""
        ledger = self.ctx.ledger
        left = tuple(
            eid
            for eid in hit.targets
            if ledger.get(eid).superseded_by is None and ledger.get(eid).omega is not Omega.DROPPED
        )
        return hit if left == tuple(hit.targets) else replace(hit, targets=left)

    def _has_decision_dependent(self, entry: EvidenceEntry) -> bool:
        ledger = self.ctx.ledger
        claims = {c.id: c for c in ledger.claims()}
        todo, seen = list(entry.dependents), set()
        while todo:  # a DC may depend on e through the SC claims it cites
            cid = todo.pop()
            if cid in seen or cid not in claims:
                continue
            seen.add(cid)
            if claims[cid].ctype is ClaimType.DC:
                return True
            todo += [c.id for c in claims.values() if cid in c.citations]
        return False

    async def _t3(self, hit: TriggerHit, _acq: AcquireSpec | None, rg: Regrounder | None) -> RepairOutcome:
        """Both entries become CONFLICTED; DROP(argmin σ) resolves it and the other is ACTIVE again."""
        ledger = self.ctx.ledger
        entries = [ledger.get(e) for e in hit.targets]
        if any(e.omega not in {Omega.ACTIVE, Omega.CONFLICTED} for e in entries):
            return RepairOutcome()  # an earlier repair already removed one side
        ledger.mark_conflicted(hit.targets)
        self.used[hit.trigger] += 1
        weakest = min(entries, key=lambda e: (e.sigma, -e.t))
        res = await self._apply(OperatorName.DROP, entry_id=weakest.id)
        for e in entries:
            if e.id != weakest.id:
                ledger.resolve_conflict(e.id)
        return RepairOutcome(events=[self._event(hit, res, rg() if rg else None)])

    async def _t4(self, hit: TriggerHit, _acq: AcquireSpec | None, rg: Regrounder | None) -> RepairOutcome:
        self.used[hit.trigger] += 1
        target = hit.targets[0]  # an entry, or a tool call whose every reading was discarded
        call_id = target if target not in self.ctx.ledger else self.ctx.ledger.get(target).tool_call_id
        res = await self._apply(OperatorName.RETRY, call_id=call_id)
        out = RepairOutcome()
        if res.skipped_identical:  # RETRY would repeat the request: escalate to SWITCH, as Π(T1) does
            out.events.append(self._event(hit, res, False))
            res = await self._switch_and_call(call_id)
        ok = rg() if rg else any(self.ctx.ledger.get(e).sigma >= self.sigma_floor for e in res.new_entries)
        out.events.append(self._event(hit, res, bool(res.new_entries) and ok))
        out.new_entries += res.new_entries
        return out

    async def _t5(self, hit: TriggerHit, acq: AcquireSpec | None, rg: Regrounder | None) -> RepairOutcome:
        """Π(T5) = ACQUIRE while M > 0, then the configured ending (``T5Ending``) on every path."""
        self.used[hit.trigger] += 1
        if acq is None or not self.budget.spend():
            return await self._t5_end(hit, [], "repair budget M exhausted")
        res = await self._apply(OperatorName.ACQUIRE, tool=acq.tool, inputs=acq.inputs, target=hit.targets[0])
        if not res.skipped_identical:
            return RepairOutcome(
                events=[self._event(hit, res, rg() if rg else None)], new_entries=res.new_entries
            )
        self.budget.refund()  # nothing was sent
        return await self._t5_end(hit, [self._event(hit, res, False)], "ACQUIRE would repeat a request")

    async def _t5_end(self, hit: TriggerHit, events: list[RepairEvent], why: str) -> RepairOutcome:
        if self.t5_ending is T5Ending.KEEP:
            note = f"{hit.detail}; {why}; unsupported decision kept (t5_ending=keep)"
            return RepairOutcome(
                events=[*events, RepairEvent(hit.trigger, None, None, list(hit.targets), note=note)]
            )
        res = await self._apply(OperatorName.ABSTAIN)
        return RepairOutcome(events=[*events, self._event(hit, res, False, why)], abstain=True)

    async def _t6(self, hit: TriggerHit, acq: AcquireSpec | None, rg: Regrounder | None) -> RepairOutcome:
        self.used[hit.trigger] += 1
        out = RepairOutcome(warning=HALLUCINATION_WARNING)
        if acq is not None and self.budget.spend():
            res = await self._apply(
                OperatorName.ACQUIRE, tool=acq.tool, inputs=acq.inputs, target=hit.targets[0]
            )
            if res.skipped_identical:
                self.budget.refund()  # nothing was sent; the warning still goes to the next prompt
            out.events.append(
                self._event(
                    hit, res, False if res.skipped_identical else (rg() if rg else None), "warning injected"
                )
            )
            out.new_entries += res.new_entries
        else:
            out.events.append(
                RepairEvent(
                    hit.trigger,
                    None,
                    None,
                    list(hit.targets),
                    note=f"{hit.detail}; warning injected, no budget",
                )
            )
        return out


Reflector = Callable[[TriggerHit], Awaitable[str]]


class FreeformRepair:
    """Ablation ``free_form_repair``: critique-and-rewrite by the model, no typed operators.

    The rewrite enters the trajectory as claims with ``ClaimOrigin.FREEFORM`` — without tool
    provenance, which is exactly what the ablation measures (repair-time amplification, F4).
    """

    def __init__(
        self,
        reflect: Reflector,
        per_trigger_budget: int = paper.PER_TRIGGER_BUDGET,
        cost: float = 2.0,
        tool_repair: RepairEngine | None = None,
    ) -> None:
        self.reflect = reflect
        self.tool_repair = tool_repair  # T1 (a failed tool call) keeps typed RETRY → SWITCH
        self.m0 = per_trigger_budget
        self.cost_per_call = cost
        self.used: Counter[Trigger] = Counter()

    async def handle(
        self, hit: TriggerHit, *, acquire: AcquireSpec | None = None, regrounded: Regrounder | None = None
    ) -> RepairOutcome:
        if hit.trigger is Trigger.T1 and self.tool_repair is not None:
            return await self.tool_repair.handle(hit)
        del acquire  # free-form reflection never calls tools
        if self.used[hit.trigger] >= self.m0:
            return RepairOutcome(
                events=[RepairEvent(hit.trigger, None, None, list(hit.targets), note="budget exhausted")]
            )
        self.used[hit.trigger] += 1
        text = await self.reflect(hit)
        event = RepairEvent(
            trigger=hit.trigger,
            operator=OperatorName.FREEFORM_REFLECTION,
            layer=None,
            targets=list(hit.targets),
            cost=self.cost_per_call,
            grounded_after=regrounded() if regrounded else None,
            note=hit.detail,
        )
        return RepairOutcome(events=[event], rewrite=text)
