"""What the repair engine needs from a live item, and what repairs hand back to it.

Why it exists: operators are generic (they act on a ledger and a tool registry), but some of
their inputs depend on the item — SWITCH's inputs for the alternative tool, RETRY's query
expansion terms, ACQUIRE's q_spec, the free-form reflection prompt — and a repair's outcome
(events, the T6 warning, a free-form rewrite) must land in the trajectory.
"""

from __future__ import annotations

from typing import Any

from ledgermind.benchmarks.item import Item
from ledgermind.claims import Claim, ClaimOrigin, ClaimType, Stage
from ledgermind.dispatch import QuestionProfile
from ledgermind.dispatch.terms import keywords
from ledgermind.pipeline.config import PipelineConfig
from ledgermind.pipeline.evidence import EvidenceIO, extract_query
from ledgermind.pipeline.model_io import ModelIO
from ledgermind.pipeline.render import image_parts
from ledgermind.prompts.templates import REFLECT
from ledgermind.repair import AcquireSpec, FreeformRepair, RepairEngine, RepairOutcome, TriggerHit
from ledgermind.repair.policy import HALLUCINATION_WARNING
from ledgermind.tools.base import Tool, ToolKind, ToolOutput
from ledgermind.trajectory import MarkKind, OperatorName, Trajectory

class RepairIO:
    def __init__(
        self, item: Item, profile: QuestionProfile, cfg: PipelineConfig, traj: Trajectory, model: ModelIO,
        evidence: EvidenceIO,
    ) -> None:
        self.item, self.profile, self.cfg, self.traj = item, profile, cfg, traj
        self.ledger = traj.ledger
        self.model, self.evidence = model, evidence
        self.engine: RepairEngine | FreeformRepair | None = None  # set by ItemContext
        self.warning: str | None = None

    def user_images(self) -> list[Any]:
        return image_parts(self.item)

    def expansion_terms(self) -> list[str]:
        return keywords(self.item.question)[:5]

    async def handle(self, hit: TriggerHit, acquire: AcquireSpec | None = None, regrounded: Any = None) -> RepairOutcome:
        outcome = await self.engine.handle(  # type: ignore[union-attr]
            hit, acquire=acquire, regrounded=regrounded)
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
                "images": self.user_images(),
                "max_oc": min(5, self.cfg.max_oc),
                "structured": self.model.structured,
                "rephrase": earlier,
            },
        )

    async def reflect(self, hit: TriggerHit) -> str:
        from ledgermind.pipeline.render import claims_block

        text = REFLECT.substitute(
            problem=f"{hit.trigger.value} {hit.detail}".strip(),
            question=self.item.question,
            claims=claims_block(self.ledger.claims()),
            answer=self.traj.raw_answer or "(none yet)",
        )
        return await self.model.ask("reflect", text, self.user_images()) or ""

    def _apply_freeform(self, hit: TriggerHit, rewrite: str) -> None:
        """Free-form rewrite (ablation): the new text enters as a claim without new provenance."""
        from ledgermind.scoring.score import extract_final_answer

        target = next((t for t in hit.targets if t.startswith(("SC-", "DC-"))), None)
        cites = self.ledger.claim(target).citations if target and target in {c.id for c in self.ledger.claims()} else []
        claim = Claim(self.ledger.next_claim_id(ClaimType.SC), ClaimType.SC, rewrite.strip()[:500], Stage.J, list(cites),
                      origin=ClaimOrigin.FREEFORM)
        self.ledger.add_claim(claim)
        self.evidence.ground(claim)
        if "Answer:" in rewrite:
            self.traj.raw_answer = extract_final_answer(rewrite)
            self.traj.notes.append("answer rewritten by free-form reflection")

    def switch_inputs(self, tool: Tool, origin: ToolOutput) -> dict[str, Any]:
        """Inputs for the alternative tool chosen by SWITCH (M_compat, App. E.2)."""
        q = self.item.question
        if tool.kind is ToolKind.SEARCH:  # App. D.6: the extracted query, never the whole question
            return {"query": extract_query(self.evidence)}
        if tool.kind is ToolKind.OCR:
            return {"image": self.item.images[0]} if self.item.images else {}
        what = "Transcribe the visible text and values" if origin.kind is ToolKind.OCR else "Describe the region relevant to"
        return {"stage": "switch_vqa", "prompt": f"{what} for this question: {q}", "images": self.user_images()}
