"""What the repair engine needs from a live item, and what repairs hand back to it.

Why it exists: operators are generic (they act on a ledger and a tool registry), but some of
their inputs depend on the item — SWITCH's inputs for the alternative tool, RETRY's query
expansion terms, ACQUIRE's q_spec, the free-form reflection prompt — and a repair's outcome
(events, the T6 warning, a free-form rewrite) must land in the trajectory.

The flow inside an item is explicit: ``build_engine`` makes the item's repair engine from the
parts it acts on, ``RepairIO`` applies its outcomes, and ``CheckedTools.call`` is every tool call
of a stage — invoke and record (``EvidenceIO.invoke`` returns what was recorded), then verify the
fresh output (T1/T4) and repair what the checks find.
"""

from __future__ import annotations

import functools
import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ledgermind.benchmarks.item import Item
from ledgermind.claims import Claim, ClaimOrigin, ClaimType, Stage
from ledgermind.dispatch import QuestionProfile
from ledgermind.dispatch.terms import content_words
from ledgermind.ledger import EvidenceEntry
from ledgermind.pipeline.config import AblationFlags, PipelineConfig
from ledgermind.pipeline.evidence import EvidenceIO, extract_query
from ledgermind.pipeline.model_io import ModelIO
from ledgermind.pipeline.render import image_parts
from ledgermind.prompts.templates import REFLECT
from ledgermind.repair import (
    AcquireSpec,
    Budget,
    FreeformRepair,
    RepairContext,
    RepairEngine,
    RepairOutcome,
    TriggerHit,
    Verifier,
)
from ledgermind.repair.policy import HALLUCINATION_WARNING
from ledgermind.tools.base import Tool, ToolKind, ToolOutput
from ledgermind.trajectory import MarkKind, OperatorName, Trajectory, Trigger

Engine = RepairEngine | FreeformRepair


def build_engine(
    cfg: PipelineConfig,
    flags: AblationFlags,
    item: Item,
    traj: Trajectory,
    model: ModelIO,
    evidence: EvidenceIO,
    budget: Budget,
) -> Engine:
    """The item's repair engine: typed repair (Alg. 3), or free-form reflection (ablation)."""
    seed = int(hashlib.sha256(f"{cfg.seed}:{item.id}".encode()).hexdigest()[:8], 16)
    rctx = RepairContext(
        ledger=traj.ledger,
        tools=evidence.tools,
        record=evidence.record,
        switch_inputs=functools.partial(switch_inputs, item, evidence),
        rng=random.Random(seed),
        jitter_px=tuple(cfg.retry_jitter_px),  # type: ignore[arg-type]
        expansion_terms=content_words(item.question)[:5],
        allow_sampling=cfg.reinvoke_sampling,
    )
    typed = RepairEngine(
        rctx, budget, cfg.per_trigger_budget, cfg.repair_costs, cfg.sigma_floor, t5_ending=cfg.t5_ending
    )
    if flags.typed_repair:
        return typed
    # T1 keeps RETRY → SWITCH: a crashed tool left no claim to reflect on, and the variant
    # must have the same tool budget as full (DESIGN.md §4).
    return FreeformRepair(
        functools.partial(reflect, item, traj, model), cfg.per_trigger_budget, tool_repair=typed
    )


class RepairIO:
    def __init__(
        self,
        item: Item,
        profile: QuestionProfile,
        cfg: PipelineConfig,
        traj: Trajectory,
        model: ModelIO,
        evidence: EvidenceIO,
        engine: Engine,
    ) -> None:
        self.item, self.profile, self.cfg, self.traj = item, profile, cfg, traj
        self.ledger = traj.ledger
        self.model, self.evidence, self.engine = model, evidence, engine
        self.warning: str | None = None

    async def handle(
        self, hit: TriggerHit, acquire: AcquireSpec | None = None, regrounded: Any = None
    ) -> RepairOutcome:
        outcome = await self.engine.handle(hit, acquire=acquire, regrounded=regrounded)
        firing = 1 + max((e.hit for e in self.traj.events), default=0)
        for event in outcome.events:
            event.hit = firing
            # an event the engine made without a clock reading (budget exhausted, no budget for a
            # warning's ACQUIRE) happened now, not at step 0 of the timeline
            event.step = event.step or int(self.ledger.now())
        self.traj.events.extend(outcome.events)
        if outcome.warning:
            self.warning = outcome.warning
            self.traj.notes.append(f"warning injected after {hit.trigger.value}")
        if outcome.rewrite:
            self._apply_freeform(hit, outcome.rewrite)
        return outcome

    def with_warning(self, text: str) -> str:
        """T6 warning injection: a pending warning goes in front of the next prompt that can act on it."""
        if not self.warning:
            return text
        self.traj.mark(MarkKind.WARNING_INJECTED, "T6 warning in the prompt")
        return f"{self.warning}\n\n{text}"

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


async def reflect(item: Item, traj: Trajectory, model: ModelIO, hit: TriggerHit) -> str:
    """Free-form reflection (ablation): the model rewrites what a trigger flagged."""
    from ledgermind.pipeline.render import claims_block

    text = REFLECT.substitute(
        problem=f"{hit.trigger.value} {hit.detail}".strip(),
        question=item.question,
        claims=claims_block(traj.ledger.claims()),
        answer=traj.raw_answer or "(none yet)",
    )
    return await model.ask("reflect", text, image_parts(item)) or ""


def switch_inputs(item: Item, evidence: EvidenceIO, tool: Tool, origin: ToolOutput) -> dict[str, Any]:
    """Inputs for the alternative tool chosen by SWITCH (M_compat, App. E.2)."""
    q = item.question
    if tool.kind is ToolKind.SEARCH:  # App. D.6: the extracted query, never the whole question
        return {"query": extract_query(evidence)}
    if tool.kind is ToolKind.OCR:
        return {"image": item.images[0]} if item.images else {}
    what = (
        "Transcribe the visible text and values"
        if origin.kind is ToolKind.OCR
        else "Describe the region relevant to"
    )
    return {"stage": "switch_vqa", "prompt": f"{what} for this question: {q}", "images": image_parts(item)}


@dataclass(frozen=True)
class CheckedTools:
    """Every tool call of a stage: invoke and record, then verify the fresh output and repair.

    ``tool_repairs``: T1/T4 fire at all (off for the baseline); ``ledger_repairs``: repairs other
    than T1's (off without the ledger, where only a crashed tool is retried/switched).
    """

    evidence: EvidenceIO
    verifier: Verifier
    repairs: RepairIO
    tool_repairs: bool
    ledger_repairs: bool

    async def call(
        self,
        name: str,
        *,
        derived_from: Sequence[str] = (),
        sigma: float | None = None,
        admit: Callable[[ToolOutput], bool] | None = None,
        **inputs: Any,
    ) -> tuple[ToolOutput, list[EvidenceEntry]]:
        """The output and its entries, with the entries the repairs it called for created
        (``admit``: see ``EvidenceIO.invoke``)."""
        out, entries = await self.evidence.invoke(
            name, derived_from=derived_from, sigma=sigma, admit=admit, **inputs
        )
        entries += await self.verify_then_repair(out, entries)
        return out, entries

    async def verify_then_repair(self, out: ToolOutput, entries: list[EvidenceEntry]) -> list[EvidenceEntry]:
        """T1/T4 on a fresh output and the repairs they call for; returns the entries repairs created."""
        hits = self.verifier.on_tool_output(out, entries) if self.tool_repairs else []
        if not self.ledger_repairs:
            hits = [h for h in hits if h.trigger is Trigger.T1]
        created: list[EvidenceEntry] = []
        for hit in hits:
            outcome = await self.repairs.handle(hit)
            created += [self.repairs.ledger.get(e) for e in outcome.new_entries]
        return created
