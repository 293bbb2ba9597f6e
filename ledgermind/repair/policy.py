"""Repair policy Π (App. E.2, Eq. 25) as data: a trigger hit and a read-only view of the item →
the typed actions to apply, in order.

Π(T1) = RETRY → SWITCH            Π(T2) = REFRESH (if a DC depends on it) / DROP
Π(T3) = DROP(argmin σ_e)          Π(T4) = RETRY(θ′ = θ + Δθ)
Π(T5) = ACQUIRE (if M > 0) / ABSTAIN
Π(T6) = warning injection + ACQUIRE

Why it is pure: Π only decides. The pipeline's per-item executor applies every action the same
way (invoke → record → ground → verify) and is the only code that writes a tool's output into the
ledger, so every entry a repair adds has a tool call behind it (Proposition 1) whatever Π says.
An operator is a member of ``OperatorName`` and its row in ``OPERATORS`` (what applying it does);
Π selects it in ``RULES``.

STOP_AND_ANSWER (Eq. 24) has its row, since it belongs to the paper's operator set R_T, but
Eq. 25 maps no trigger to it, so no rule selects it (docs/architecture.md). Each trigger type allows
at most M0 repairs per trajectory; ACQUIRE for T5/T6 also spends the trajectory budget M that
hypothesis verification shares (Alg. 1). Without typed repair (ablation ``free_form_repair``)
every trigger but T1 gets the model's free-form reflection instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from ledgermind import paper
from ledgermind.claims import ClaimType
from ledgermind.ledger import EvidenceEntry, Ledger, Omega
from ledgermind.repair.triggers import TriggerHit
from ledgermind.tools.base import ToolKind
from ledgermind.trajectory import OperatorName, RepairLayer, Trigger

HALLUCINATION_WARNING = (
    "WARNING: the key entities or numbers of this conclusion do not appear in the evidence it cites. "
    "It may be a language-model hallucination; use only what the evidence actually shows."
)

# App. E.2: M_compat — OCR → {search, VQA}; local crop → {full-image VQA}.
DEFAULT_COMPAT: Mapping[ToolKind, tuple[ToolKind, ...]] = {
    ToolKind.OCR: (ToolKind.SEARCH, ToolKind.VQA),
    ToolKind.CROP: (ToolKind.VQA,),
    ToolKind.READ: (ToolKind.VQA,),
    ToolKind.OBSERVE: (ToolKind.OCR, ToolKind.VQA),
    ToolKind.SEARCH: (ToolKind.VQA,),
    ToolKind.DETECT: (ToolKind.VQA,),
}
FREEFORM_COST = 2.0  # one critique-and-rewrite model call


class Effect(str, Enum):
    """What applying an operator does; the executor has one branch per effect."""

    INVOKE = "invoke"  # call a tool and record its output
    SUPERSEDE = "supersede"  # retire the target, call a tool, the closest new entry supersedes it
    DROP = "drop"  # ω_e ← DROPPED; invalidation propagates to D_e
    ANSWER = "answer"  # ŷ = f_e*, e* = argmax σ over L^A
    ABSTAIN = "abstain"  # ŷ = ⊥
    REFLECT = "reflect"  # the model's free-form critique-and-rewrite (ablation)


@dataclass(frozen=True)
class Operator:
    """One row of the operator table: its layer (for λ_type, Eq. 26) and what applying it does."""

    summary: str
    layer: RepairLayer | None
    effect: Effect


OPERATORS: Mapping[OperatorName, Operator] = {
    OperatorName.DROP: Operator("DROP(e): no new entry; D_e invalidated", RepairLayer.EVIDENCE, Effect.DROP),
    OperatorName.REFRESH: Operator(
        "REFRESH(e, θ′): re-run e's tool; SUPERSEDE(e, e_new)", RepairLayer.EVIDENCE, Effect.SUPERSEDE
    ),
    OperatorName.RETRY: Operator(
        "RETRY(a, θ′): re-invoke with θ + Δθ (box ±15–40 px, query expansion, rephrasing)",
        RepairLayer.ACTION,
        Effect.INVOKE,
    ),
    OperatorName.SWITCH: Operator(
        "SWITCH(a → a′): call a compatible alternative tool (M_compat)", RepairLayer.ACTION, Effect.INVOKE
    ),
    OperatorName.ACQUIRE: Operator(
        "ACQUIRE(q_spec): call a tool to close a grounding gap", RepairLayer.ACTION, Effect.INVOKE
    ),
    OperatorName.STOP_AND_ANSWER: Operator(
        "STOP_AND_ANSWER(e*): ŷ = f_e*, e* = argmax σ (no trigger selects it)",
        RepairLayer.TRAJECTORY,
        Effect.ANSWER,
    ),
    OperatorName.ABSTAIN: Operator("ABSTAIN: ŷ = ⊥", RepairLayer.TRAJECTORY, Effect.ABSTAIN),
    OperatorName.FREEFORM_REFLECTION: Operator(
        "free-form critique-and-rewrite (ablation free_form_repair)", None, Effect.REFLECT
    ),
}


class Check(str, Enum):
    """How GroundedAfter(r) (Eq. 29, RR) is read once an action ran (always False when refused)."""

    TOOL_OK = "tool_ok"  # the call returned evidence
    REGROUND = "reground"  # the claim the hit is about, grounded again (None without one)
    CONFIDENT = "confident"  # new entries, and the claim grounded again / one of them σ ≥ σ_floor
    NEVER = "never"


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

    def available(self) -> bool:
        return self.remaining - self.reserved > 0

    def spend(self) -> bool:
        if not self.available():
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


@dataclass(frozen=True)
class Action:
    """One typed repair, as data. ``operator`` None: the hit is only logged (``note`` is the event's
    whole note). ``inputs`` None: the executor re-invokes the call ``origin`` with θ + Δθ (SWITCH:
    the item's inputs for ``tool``)."""

    operator: OperatorName | None
    targets: tuple[str, ...]
    tool: str | None = None
    inputs: Mapping[str, Any] | None = None
    origin: str | None = None  # the tool call re-invoked / switched from
    note: str = ""
    check: Check = Check.REGROUND
    charge: bool = True  # counts one of the trigger's M0 repairs
    spend: bool = False  # spends one unit of M (refunded when the request was refused)
    after_failure: bool = False  # applied only when the previous action's call failed (T1's chain)
    fallback: Action | None = None  # applied next when this re-invocation was refused as identical
    conflict: tuple[str, ...] = ()  # T3: marked CONFLICTED first; after a DROP the others resolve
    warn: bool = False  # T6: the hallucination warning goes into the next prompt


@dataclass(frozen=True)
class View:
    """What Π reads: the ledger (never written), the tools by kind, and the budgets."""

    ledger: Ledger
    tools: Mapping[str, ToolKind]
    used: Mapping[Trigger, int]
    budget: Budget
    m0: int = paper.PER_TRIGGER_BUDGET
    t5_ending: T5Ending = T5Ending(paper.T5_ENDING)
    typed: bool = True  # False: ablation free_form_repair (T1 keeps RETRY → SWITCH)
    compat: Mapping[ToolKind, tuple[ToolKind, ...]] = field(default_factory=lambda: dict(DEFAULT_COMPAT))

    def spent(self, trigger: Trigger) -> int:
        """Repairs of this trigger type so far (M0 counts them per trajectory)."""
        return self.used.get(trigger, 0)


Rule = Callable[[TriggerHit, View, AcquireSpec | None], list[Action]]


def plan(hit: TriggerHit, view: View, acquire: AcquireSpec | None = None) -> list[Action]:
    """Π(hit): the actions to apply, in order (an empty list: nothing to do, nothing logged)."""
    if not view.typed and hit.trigger is not Trigger.T1:
        if view.spent(hit.trigger) >= view.m0:
            return [Action(None, hit.targets, note="budget exhausted", charge=False)]
        return [Action(OperatorName.FREEFORM_REFLECTION, hit.targets)]
    if hit.trigger is Trigger.T2:
        hit = _unrepaired(hit, view.ledger)
        if not hit.targets:  # every stale entry was refreshed or dropped for an earlier claim
            return []
    if view.spent(hit.trigger) < view.m0:
        return RULES[hit.trigger](hit, view, acquire)
    if hit.trigger is Trigger.T5:  # no ACQUIRE left: the same ending as M = 0
        return [_t5_end(hit, view, "per-trigger budget M0 exhausted", charge=False)]
    conflict = hit.targets if hit.trigger is Trigger.T3 else ()  # unresolved: both stay out of L^A
    return [_logged(hit, "per-trigger budget M0 exhausted", conflict=conflict)]


def _logged(hit: TriggerHit, why: str, **kw: Any) -> Action:
    return Action(None, hit.targets, note=f"{hit.detail}; {why}", charge=False, **kw)


def _t1(hit: TriggerHit, view: View, _: AcquireSpec | None) -> list[Action]:
    """RETRY, and while it fails (or would repeat the failed request: not sent), SWITCH to a
    compatible tool and call it — one action per unit of M0 left."""
    call = hit.targets[0]
    actions: list[Action] = []
    for k in range(view.spent(hit.trigger) + 1, view.m0 + 1):
        act = _retry(call) if k == 1 else _switch(call, view)
        actions.append(replace(act, check=Check.TOOL_OK, after_failure=bool(actions)))
    return actions


def _retry(call: str) -> Action:
    return Action(OperatorName.RETRY, (call,), origin=call)


def _switch(call: str, view: View) -> Action:
    origin = view.ledger.tool_output(call)
    if origin is None:
        return Action(OperatorName.SWITCH, (call,), note=f"no compatible alternative for {call}")
    for alt_kind in view.compat.get(origin.kind, ()):
        for alt, alt_tool_kind in view.tools.items():
            if alt_tool_kind is alt_kind and alt != origin.tool:
                return Action(
                    OperatorName.SWITCH, (call,), tool=alt, origin=call, note=f"{origin.tool} → {alt}"
                )
    return Action(OperatorName.SWITCH, (call,), note=f"no compatible alternative for {origin.tool}")


def _t2(hit: TriggerHit, view: View, _: AcquireSpec | None) -> list[Action]:
    """REFRESH an expired entry a decision depends on (DROP if the refresh would repeat its
    request), DROP any other; one per unit of M0 left."""
    actions: list[Action] = []
    for i, eid in enumerate(hit.targets):
        if view.spent(hit.trigger) + i >= view.m0:
            actions.append(_logged(hit, "per-trigger budget M0 exhausted"))
            break
        entry = view.ledger.get(eid)
        drop = Action(OperatorName.DROP, (eid,))
        if has_decision_dependent(view.ledger, entry):
            drop = Action(
                OperatorName.REFRESH, (eid,), origin=entry.tool_call_id, fallback=replace(drop, charge=False)
            )
        actions.append(drop)
    return actions


def _unrepaired(hit: TriggerHit, ledger: Ledger) -> TriggerHit:
    """T2 fires once per claim citing an expired entry; an entry an earlier hit already
    superseded (REFRESH) or dropped needs no second repair — a second REFRESH would re-run the
    same call and supersede the entry twice."""
    left = tuple(
        eid
        for eid in hit.targets
        if ledger.get(eid).superseded_by is None and ledger.get(eid).omega is not Omega.DROPPED
    )
    return replace(hit, targets=left)


def has_decision_dependent(ledger: Ledger, entry: EvidenceEntry) -> bool:
    claims = {c.id: c for c in ledger.claims()}
    todo, seen = list(entry.dependents), set()
    while todo:  # a DC may depend on e through the SC claims it cites
        cid = todo.pop()
        if cid in seen:
            continue
        seen.add(cid)
        if claims[cid].ctype is ClaimType.DC:
            return True
        todo += [c.id for c in claims.values() if cid in c.citations]
    return False


def _t3(hit: TriggerHit, view: View, _: AcquireSpec | None) -> list[Action]:
    """Both entries become CONFLICTED; DROP(argmin σ) resolves it and the other is ACTIVE again."""
    entries = [view.ledger.get(e) for e in hit.targets]
    if any(e.omega not in {Omega.ACTIVE, Omega.CONFLICTED} for e in entries):
        return []  # an earlier repair already removed one side
    weakest = min(entries, key=lambda e: (e.sigma, -e.t))
    return [Action(OperatorName.DROP, (weakest.id,), conflict=hit.targets)]


def _t4(hit: TriggerHit, view: View, _: AcquireSpec | None) -> list[Action]:
    """RETRY the call behind the entry (or the call whose every reading was discarded); SWITCH
    when the retry would repeat its request, as Π(T1) does."""
    target = hit.targets[0]
    call = target if target not in view.ledger else view.ledger.get(target).tool_call_id
    switch = replace(_switch(call, view), charge=False, check=Check.CONFIDENT)
    return [replace(_retry(call), check=Check.CONFIDENT, fallback=switch)]


def _t5(hit: TriggerHit, view: View, acquire: AcquireSpec | None) -> list[Action]:
    """Π(T5) = ACQUIRE while M > 0, then the configured ending (``T5Ending``) on every path."""
    if acquire is None or not view.budget.available():
        return [_t5_end(hit, view, "repair budget M exhausted")]
    refused = _t5_end(hit, view, "ACQUIRE would repeat a request", charge=False)
    return [_acquire(hit, acquire, fallback=refused)]


def _acquire(hit: TriggerHit, spec: AcquireSpec, **kw: Any) -> Action:
    return Action(OperatorName.ACQUIRE, hit.targets[:1], tool=spec.tool, inputs=spec.inputs, spend=True, **kw)


def _t5_end(hit: TriggerHit, view: View, why: str, *, charge: bool = True) -> Action:
    if view.t5_ending is T5Ending.KEEP:
        return replace(_logged(hit, f"{why}; unsupported decision kept (t5_ending=keep)"), charge=charge)
    return Action(OperatorName.ABSTAIN, hit.targets, note=why, check=Check.NEVER, charge=charge)


def _t6(hit: TriggerHit, view: View, acquire: AcquireSpec | None) -> list[Action]:
    """Warning injection, plus ACQUIRE while M > 0 (its prompt carries the warning)."""
    if acquire is None or not view.budget.available():
        return [replace(_logged(hit, "warning injected, no budget"), charge=True, warn=True)]
    return [_acquire(hit, acquire, note="warning injected", warn=True)]


RULES: Mapping[Trigger, Rule] = {
    Trigger.T1: _t1,
    Trigger.T2: _t2,
    Trigger.T3: _t3,
    Trigger.T4: _t4,
    Trigger.T5: _t5,
    Trigger.T6: _t6,
}


def cost(operator: OperatorName, tool_calls: int, costs: Mapping[str, float], *, refused: bool) -> float:
    """λ_type(r) · cost(r) (Eq. 26); cost(r) = 1 + the tool calls the operator made (a re-invocation
    refused as identical sent nothing and costs nothing)."""
    if refused:
        return 0.0
    layer = OPERATORS[operator].layer
    if layer is None:
        return FREEFORM_COST
    return costs.get(layer.value, 1.0) * (1 + tool_calls)


def stop_and_answer(ledger: Ledger, candidates: Sequence[str] = ()) -> EvidenceEntry | None:
    """e* = argmax_{e ∈ L^A} σ_e (the oldest on a tie): STOP_AND_ANSWER's answer is f_e*."""
    pool = [ledger.get(c) for c in candidates] if candidates else ledger.active()
    pool = [e for e in pool if e.active]
    return max(pool, key=lambda e: (e.sigma, -e.t)) if pool else None
