"""The per-item executor: every tool call of an item and every repair action, applied one way.

Why it exists: Proposition 1 (every evidence entry has a tool call behind it) holds by
construction only if one piece of code writes tool output into the ledger. This is it: a stage's
call (``call``) and a repair's call go through the same ``_invoke`` — invoke, record under the σ/TTL
policy (``EvidenceIO.record``), then ground and verify — and Π (``repair.policy.plan``) only says,
as data, which actions to take. A re-invocation is sent with ``reinvocation=True``: the model
door then refuses a request already sent for this item, and Π's fallback action applies instead.
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ledgermind.benchmarks.item import Item
from ledgermind.claims import Claim, ClaimOrigin, ClaimType, Stage
from ledgermind.dispatch import QuestionProfile
from ledgermind.dispatch.terms import content_words
from ledgermind.errors import LedgerError
from ledgermind.ledger import EvidenceEntry
from ledgermind.pipeline.config import AblationFlags, PipelineConfig
from ledgermind.pipeline.evidence import EvidenceIO, extract_query
from ledgermind.pipeline.model_io import ModelIO
from ledgermind.pipeline.render import claims_block, image_parts
from ledgermind.prompts.templates import REFLECT
from ledgermind.repair import (
    HALLUCINATION_WARNING,
    OPERATORS,
    AcquireSpec,
    Action,
    Budget,
    T5Ending,
    View,
    plan,
)
from ledgermind.repair.policy import Check, Effect, cost, stop_and_answer
from ledgermind.repair.reinvocation import Perturbation, describe_variation
from ledgermind.repair.triggers import TriggerHit
from ledgermind.repair.verifier import Verifier
from ledgermind.tools.base import Tool, ToolKind, ToolOutput
from ledgermind.trajectory import MarkKind, OperatorName, RepairEvent, Trajectory, Trigger

log = logging.getLogger(__name__)


@dataclass
class Applied:
    """What applying one action did."""

    output: ToolOutput | None = None
    entries: list[str] = field(default_factory=list)
    note: str = ""
    variation: str | None = None
    refused: bool = False  # the re-invocation repeated a request of the item: not sent
    error: str | None = None  # the operator itself raised (a bug, never a tool anomaly)
    rewrite: str = ""  # free-form reflection


class Executor:
    def __init__(
        self,
        item: Item,
        profile: QuestionProfile,
        cfg: PipelineConfig,
        flags: AblationFlags,
        traj: Trajectory,
        model: ModelIO,
        evidence: EvidenceIO,
        verifier: Verifier,
        budget: Budget,
    ) -> None:
        self.item, self.profile, self.cfg, self.traj = item, profile, cfg, traj
        self.ledger = traj.ledger
        self.model, self.evidence, self.verifier, self.budget = model, evidence, verifier, budget
        self.tools = evidence.tools
        seed = int(hashlib.sha256(f"{cfg.seed}:{item.id}".encode()).hexdigest()[:8], 16)
        self.perturbation = Perturbation(
            random.Random(seed),
            tuple(cfg.retry_jitter_px),  # type: ignore[arg-type]
            content_words(item.question)[:5],
            allow_sampling=cfg.reinvoke_sampling,
        )
        self.used: Counter[Trigger] = Counter()
        self.typed = flags.typed_repair
        # no_ledger repairs only a failed tool call (T1, so the tool budget is the same); the
        # baseline repairs nothing (DESIGN.md §4)
        self.tool_repairs = not flags.baseline
        self.ledger_repairs = flags.use_ledger and not flags.baseline
        self.warning: str | None = None

    # ------------------------------------------------------------------ tool calls
    async def call(
        self,
        name: str,
        *,
        derived_from: Sequence[str] = (),
        sigma: float | None = None,
        admit: Callable[[ToolOutput], bool] | None = None,
        **inputs: Any,
    ) -> tuple[ToolOutput, list[EvidenceEntry]]:
        """A stage's tool call: invoke and record, verify the fresh output (T1/T4) and repair it;
        returns the output and its entries with those the repairs created. ``admit``: a successful
        output it rejects is kept in the audit trail but appends no entry (Alg. 1 line 39)."""
        out, entries, _ = await self._invoke(
            name, inputs, derived_from=derived_from, sigma=sigma, admit=admit
        )
        hits = self.verifier.on_tool_output(out, entries) if self.tool_repairs else []
        for hit in hits:
            if self.ledger_repairs or hit.trigger is Trigger.T1:
                entries += [self.ledger.get(e) for e in await self.repair(hit)]
        return out, entries

    async def _invoke(
        self,
        name: str,
        inputs: Mapping[str, Any],
        *,
        reinvocation: bool = False,
        derived_from: Sequence[str] = (),
        sigma: float | None = None,
        admit: Callable[[ToolOutput], bool] | None = None,
    ) -> tuple[ToolOutput, list[EvidenceEntry], bool]:
        """The one place tool output enters the ledger; the flag says whether the model door
        refused a repeated request (only asked for with ``reinvocation``)."""
        self.model.refused = [] if reinvocation else None
        try:
            out = await self.tools[name].ainvoke(**inputs)
        finally:
            refused, self.model.refused = bool(self.model.refused), None
        if admit is not None and out.ok and not admit(out):
            self.ledger.keep_output(out)
            return out, [], refused
        return out, self.evidence.record(out, derived_from=derived_from, sigma=sigma), refused

    # ------------------------------------------------------------------ repairs
    async def repair(
        self, hit: TriggerHit, *, acquire: AcquireSpec | None = None, claim: Claim | None = None
    ) -> list[str]:
        """Apply Π(hit) and record its events; returns the ids of the entries repairs created.
        ``claim``: the claim the hit is about, grounded again after each action (RR, Eq. 29)."""
        view = View(
            self.ledger,
            {n: t.kind for n, t in self.tools.items()},
            self.used,
            self.budget,
            self.cfg.per_trigger_budget,
            T5Ending(self.cfg.t5_ending),
            self.typed,
        )
        events: list[RepairEvent] = []
        created: list[str] = []
        rewrite, ok = "", False
        actions = plan(hit, view, acquire)
        for first in actions:
            if first.after_failure and ok:
                break
            action: Action | None = first
            while action is not None:
                self.used[hit.trigger] += action.charge
                res = await self._apply(hit, action)
                ok = res.output is not None and res.output.ok
                events.append(self._event(hit, action, res, claim))
                created += res.entries
                rewrite = res.rewrite or rewrite
                action = action.fallback if res.refused else None
        firing = 1 + max((e.hit for e in self.traj.events), default=0)
        for event in events:
            event.hit = firing
            event.step = event.step or int(self.ledger.now())  # a logged hit happened now
        self.traj.events.extend(events)
        if any(a.warn for a in actions):
            self.warning = HALLUCINATION_WARNING
            self.traj.notes.append(f"warning injected after {hit.trigger.value}")
        if rewrite:
            self._apply_freeform(hit, rewrite)
        return created

    async def _apply(self, hit: TriggerHit, action: Action) -> Applied:
        """One action; an operator that raises is recorded on its event (census
        ``operator_failures``), never passed off as a tool anomaly, and the item goes on."""
        if action.conflict:  # T3: both sides leave L^A until the DROP resolves it
            self.ledger.mark_conflicted(action.conflict)
        if action.operator is None:
            return Applied()
        effect = OPERATORS[action.operator].effect
        try:
            if action.spend:
                self.budget.spend()
            if effect is Effect.DROP:
                invalidated = self.ledger.drop(action.targets[0])
                for other in action.conflict:
                    if other != action.targets[0]:
                        self.ledger.resolve_conflict(other)
                return Applied(note=f"invalidated claims: {invalidated}" if invalidated else "")
            if effect is Effect.ABSTAIN:
                self.traj.abstained = True
                return Applied()
            if effect is Effect.ANSWER:
                best = stop_and_answer(self.ledger, action.targets)
                return Applied(note=f"answer {best.fact!r} ({best.id})" if best else "no active evidence")
            if effect is Effect.REFLECT:
                return Applied(rewrite=await self._reflect(hit))
            res = await self._reinvoke(action, supersede=effect is Effect.SUPERSEDE)
            if res.refused and action.spend:
                self.budget.refund()  # nothing was sent
            return res
        except Exception as exc:
            log.warning("repair operator %s failed: %s: %s", action.operator.value, type(exc).__name__, exc)
            return Applied(error=f"{type(exc).__name__}: {exc}")

    async def _reinvoke(self, action: Action, *, supersede: bool) -> Applied:
        """RETRY / REFRESH / SWITCH / ACQUIRE: θ + Δθ of the origin call, or the inputs Π gave."""
        origin = self.ledger.tool_output(action.origin) if action.origin else None
        if action.origin and origin is None:
            raise LedgerError(f"no recorded tool call {action.origin!r} to re-invoke")
        if action.tool is None and origin is None:
            return Applied()  # SWITCH with no compatible alternative
        name = action.tool or origin.tool  # type: ignore[union-attr]
        if name not in self.tools:
            raise LedgerError(f"tool {name!r} is not available for repair")
        tool = self.tools[name]
        if action.inputs is None and action.tool is None:
            inputs = self.perturbation.inputs(origin, tool)  # type: ignore[arg-type]
            variation = describe_variation(origin.inputs, inputs)  # type: ignore[union-attr]
        else:
            inputs = dict(action.inputs) if action.inputs is not None else self._switch_inputs(tool, origin)
            rephrase = int(inputs.get("rephrase", 0) or 0)
            variation = f"rephrase={rephrase}" if rephrase else None
        old = self.ledger.get(action.targets[0]) if supersede else None
        if old is not None:
            self.ledger.retire(old.id, "refresh")
        out, entries, refused = await self._invoke(name, inputs, reinvocation=True)
        if old is not None and entries:
            self.ledger.supersede(old.id, _closest(old, entries).id)
        return Applied(out, [e.id for e in entries], variation=variation, refused=refused)

    def _event(self, hit: TriggerHit, action: Action, res: Applied, claim: Claim | None) -> RepairEvent:
        if action.operator is None:
            return RepairEvent(hit.trigger, None, None, list(action.targets), note=action.note)
        return RepairEvent(
            trigger=hit.trigger,
            operator=action.operator,
            layer=OPERATORS[action.operator].layer,
            targets=list(action.targets),
            new_entries=list(res.entries),
            cost=cost(
                action.operator, int(res.output is not None), self.cfg.repair_costs, refused=res.refused
            ),
            grounded_after=self._grounded_after(action, res, claim),
            note="; ".join(x for x in (hit.detail, res.note, action.note) if x),
            step=int(self.ledger.now()),
            error=res.error,
            tool_call=res.output.call_id if res.output is not None else None,
            variation=res.variation,
            skipped_identical=res.refused,
        )

    def _grounded_after(self, action: Action, res: Applied, claim: Claim | None) -> bool | None:
        if res.refused or action.check is Check.NEVER:
            return False
        if action.check is Check.TOOL_OK:
            return res.output is not None and res.output.ok
        regrounded = self.evidence.ground(claim).grounded if claim is not None else None
        if action.check is Check.REGROUND:
            return regrounded
        if regrounded is None:
            regrounded = any(self.ledger.get(e).sigma >= self.cfg.sigma_floor for e in res.entries)
        return bool(res.entries) and regrounded

    # ------------------------------------------------------------------ what repairs need of the item
    def _switch_inputs(self, tool: Tool, origin: ToolOutput | None) -> dict[str, Any]:
        """Inputs for the alternative tool chosen by SWITCH (M_compat, App. E.2)."""
        if tool.kind is ToolKind.SEARCH:  # App. D.6: the extracted query, never the whole question
            return {"query": extract_query(self.evidence)}
        if tool.kind is ToolKind.OCR:
            return {"image": self.item.images[0]} if self.item.images else {}
        what = (
            "Transcribe the visible text and values"
            if origin is not None and origin.kind is ToolKind.OCR
            else "Describe the region relevant to"
        )
        prompt = f"{what} for this question: {self.item.question}"
        return {"stage": "switch_vqa", "prompt": prompt, "images": image_parts(self.item)}

    def acquire_spec(self, about: str, *, warned: bool = False) -> AcquireSpec:
        """q_spec for ACQUIRE: new observations of the image focused on the gap (PERCEPTION evidence).

        ``warned``: the ACQUIRE follows a T6 hit, so its prompt carries the hallucination warning.
        """
        warning = f"{HALLUCINATION_WARNING}\n" if warned else ""
        # The k-th ACQUIRE of an item re-asks with the k-th rephrasing: a repeated gap (the same DC
        # text after a re-decision) would otherwise be the same request, answered identically.
        earlier = sum(1 for e in self.traj.events if e.operator is OperatorName.ACQUIRE)
        return AcquireSpec(
            "observe",
            {
                "question": f"{warning}{self.item.question}\nFocus on evidence for or against: {about}",
                "plan": "",
                "categories": [f"{c.value}: {t}" for c, t in self.profile.oc_instructions().items()],
                "images": image_parts(self.item),
                "max_oc": min(5, self.cfg.max_oc),
                "structured": self.model.structured,
                "rephrase": earlier,
            },
        )

    def with_warning(self, text: str) -> str:
        """T6 warning injection: a pending warning goes in front of the next prompt that can act on it."""
        if not self.warning:
            return text
        self.traj.mark(MarkKind.WARNING_INJECTED, "T6 warning in the prompt")
        return f"{self.warning}\n\n{text}"

    async def _reflect(self, hit: TriggerHit) -> str:
        """Free-form reflection (ablation): the model rewrites what a trigger flagged."""
        text = REFLECT.substitute(
            problem=f"{hit.trigger.value} {hit.detail}".strip(),
            question=self.item.question,
            claims=claims_block(self.ledger.claims()),
            answer=self.traj.raw_answer or "(none yet)",
        )
        return await self.model.ask("reflect", text, image_parts(self.item)) or ""

    def _apply_freeform(self, hit: TriggerHit, rewrite: str) -> None:
        """Free-form rewrite (ablation): the new text enters as a claim without new provenance."""
        from ledgermind.scoring.score import extract_final_answer

        target = next((t for t in hit.targets if t.startswith(("SC-", "DC-"))), None)
        cites = (
            self.ledger.claim(target).citations
            if target and target in {c.id for c in self.ledger.claims()}
            else []
        )
        claim = Claim(
            self.ledger.next_claim_id(ClaimType.SC),
            ClaimType.SC,
            rewrite.strip()[:500],
            Stage.J,
            list(cites),
            origin=ClaimOrigin.FREEFORM,
        )
        self.ledger.add_claim(claim)
        self.evidence.ground(claim)
        if "Answer:" in rewrite:
            self.traj.raw_answer = extract_final_answer(rewrite)
            self.traj.notes.append("answer rewritten by free-form reflection")


def _closest(old: EvidenceEntry, created: list[EvidenceEntry]) -> EvidenceEntry:
    if old.bbox is None:
        return created[0]
    return max(created, key=lambda e: e.bbox.iou(old.bbox) if e.bbox else -1.0)  # type: ignore[arg-type]
