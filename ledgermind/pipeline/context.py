"""Per-item execution context: the ledger, the tools, model calls, verification and repair.

One ``ItemContext`` exists per question. It is the only place that talks to the backend and
invokes tools, so that every call is timed and recorded in the trajectory, every tool output
passes the verifier (T1, T4) and every repair goes through the configured engine.
"""

from __future__ import annotations

import hashlib
import math
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import Any

from ledgermind.backends.base import Backend, ContentPart, GenerationRequest, Message
from ledgermind.backends.cache import request_key
from ledgermind.benchmarks.item import Item
from ledgermind.claims import Claim, ClaimOrigin, ClaimType, Stage
from ledgermind.dispatch import QuestionProfile, QuestionType
from ledgermind.errors import BackendError, LedgerMindError, ToolError
from ledgermind.grounding import GroundingCascade, GroundingResult
from ledgermind.ledger import EvidenceEntry, Ledger
from ledgermind.pipeline.config import AblationFlags, PipelineConfig
from ledgermind.pipeline.mllm_tools import ObserveTool, PlanTool, ReadTool, VQATool
from ledgermind.pipeline.render import image_parts, pool_block
from ledgermind.prompts.templates import REFLECT
from ledgermind.repair.policy import HALLUCINATION_WARNING
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
from ledgermind.tools.base import Tool, ToolKind, ToolOutput
from ledgermind.trajectory import MarkKind, ModelCall, PathKind, Trajectory

MODEL_TOOL_KINDS = frozenset({ToolKind.PLAN, ToolKind.OBSERVE, ToolKind.READ, ToolKind.VQA})
STRUCTURED_HINT = "\nRespond with a JSON object that follows the requested schema."


class ItemContext:
    def __init__(
        self,
        item: Item,
        profile: QuestionProfile,
        path: PathKind,
        backend: Backend,
        perception_tools: dict[str, Tool],
        cascade: GroundingCascade,
        cfg: PipelineConfig,
        flags: AblationFlags,
    ) -> None:
        self.item, self.profile, self.backend, self.cfg, self.flags = item, profile, backend, cfg, flags
        self.cascade = cascade
        self.traj = Trajectory(item.id, item.question, path, flags=asdict(flags), profile=_profile_dict(profile))
        self.ledger: Ledger = self.traj.ledger
        self.budget = Budget(cfg.repair_budget)
        self.warning: str | None = None
        self.model_s = 0.0
        self.structured = cfg.structured_output and backend.supports_structured_output
        # The baseline and the no_ledger ablation answer without verification or repair.
        self.repairs_enabled = flags.use_ledger and not flags.baseline
        self.tools: dict[str, Tool] = {
            **perception_tools,
            "plan": PlanTool(self._call),
            "observe": ObserveTool(self._call),
            "read": ReadTool(self._call),
            "vqa": VQATool(self._call),
        }
        seed = int(hashlib.sha256(f"{cfg.seed}:{item.id}".encode()).hexdigest()[:8], 16)
        rctx = RepairContext(
            ledger=self.ledger,
            tools=self.tools,
            record=self.record,
            switch_inputs=self._switch_inputs,
            rng=random.Random(seed),
            jitter_px=tuple(cfg.retry_jitter_px),  # type: ignore[arg-type]
            expansion_terms=self._expansion_terms(),
        )
        self.repair: RepairEngine | FreeformRepair
        if flags.typed_repair:
            self.repair = RepairEngine(rctx, self.budget, cfg.per_trigger_budget, cfg.repair_costs, cfg.sigma_floor)
        else:
            self.repair = FreeformRepair(self._reflect, cfg.per_trigger_budget)
        self.verifier = Verifier(
            self.ledger, self.ground, beta=cfg.beta, sigma_floor=cfg.sigma_floor, conflict_iou=cfg.conflict_iou
        )

    # ------------------------------------------------------------------ model calls
    def user_images(self) -> list[ContentPart]:
        return image_parts(self.item)

    async def _call(
        self,
        stage: str,
        text: str,
        images: Sequence[ContentPart],
        system: str | None,
        schema: dict[str, Any] | None,
        draw: int = 0,
    ) -> str:
        """The single door to the backend: times and records every call; failures raise.

        ``draw`` > 0 asks for an independent sample (temperature ``reading_temperature``, seed
        ``seed + draw``): Dual-Read's second reading and later readings are such draws, so they are
        different requests (and cache keys) from the greedy first reading (App. D.5).
        """
        messages = [Message.text("system", system)] if system else []
        hint = STRUCTURED_HINT if schema else ""
        messages.append(Message("user", [*images, text + hint]))
        req = GenerationRequest(
            messages=messages,
            temperature=self.cfg.reading_temperature if draw else self.cfg.temperature,
            max_tokens=self.cfg.max_tokens,
            seed=self.cfg.seed + draw,
            json_schema=schema if self.structured else None,
            stage=stage,
        )
        t0 = time.perf_counter()
        try:
            reply = await self.backend.generate(req)
        except (BackendError, LedgerMindError) as exc:
            self._log_call(stage, time.perf_counter() - t0, error=str(exc), key=request_key(req, self.backend.model_id))
            raise ToolError(f"api_error: {exc}") from exc
        self._log_call(stage, time.perf_counter() - t0, reply=reply, key=request_key(req, self.backend.model_id))
        return reply.text

    def _log_call(self, stage: str, dt: float, reply: Any = None, error: str | None = None, key: str = "") -> None:
        """Record a model call; each call is one step of τ, so it advances the ledger's clock (TTL)."""
        self.model_s += dt
        self.ledger.advance()
        self.traj.model_calls.append(
            ModelCall(
                stage=stage,
                latency_s=dt,
                prompt_tokens=getattr(reply, "prompt_tokens", 0),
                completion_tokens=getattr(reply, "completion_tokens", 0),
                backend=getattr(reply, "backend", self.backend.name),
                model=getattr(reply, "model", self.backend.model_id),
                cached=getattr(reply, "cached", False),
                reply=getattr(reply, "text", ""),
                error=error,
                step=int(self.ledger.now()),
                request_key=key,
                meta=_plain_meta(getattr(reply, "meta", None)),
            )
        )

    async def ask(self, stage: str, text: str, images: Sequence[ContentPart] = (), system: str | None = None) -> str | None:
        """A model call that is not evidence (reasoning, decision): None when the backend failed."""
        try:
            return await self._call(stage, text, images, system, None)
        except ToolError as exc:
            self.traj.notes.append(f"{stage}: {exc}")
            return None

    async def ask_structured(self, stage: str, text: str, schema: dict[str, Any], images: Sequence[ContentPart] = ()) -> str | None:
        try:
            return await self._call(stage, text, images, None, schema if self.structured else None)
        except ToolError as exc:
            self.traj.notes.append(f"{stage}: {exc}")
            return None

    # ------------------------------------------------------------------ tools and evidence
    def sigma_for(self, out: ToolOutput) -> float | None:
        """σ policy by tool kind (App. A): None = use the tool's own score."""
        return {
            ToolKind.PLAN: self.cfg.sigma_plan,
            ToolKind.OBSERVE: self.cfg.sigma_oc,
            ToolKind.SEARCH: self.cfg.sigma_retrieval,
            ToolKind.OCR: self.cfg.sigma_ocr,
        }.get(out.kind)

    def record(self, out: ToolOutput, *, derived_from: Sequence[str] = (), sigma: float | None = None) -> list[EvidenceEntry]:
        ttl = {ToolKind.SEARCH: self.cfg.ttl_retrieval}.get(out.kind, self.cfg.ttl_perception)
        if out.kind in {ToolKind.PLAN, ToolKind.VQA}:
            ttl = math.inf  # derivations expire through their leaves
        return self.ledger.record(
            out,
            sigma=sigma if sigma is not None else self.sigma_for(out),
            default_sigma=self.cfg.sigma_oc,
            ttl=ttl,
            derived_from=derived_from,
        )

    async def call_tool(
        self, name: str, *, derived_from: Sequence[str] = (), sigma: float | None = None, **inputs: Any
    ) -> tuple[ToolOutput, list[EvidenceEntry]]:
        """Invoke a tool, record its output, run T1/T4 and the repairs they call for."""
        out = await self.tools[name].ainvoke(**inputs)
        entries = self.record(out, derived_from=derived_from, sigma=sigma)
        hits = self.verifier.on_tool_output(out, entries) if self.repairs_enabled else []
        for hit in hits:
            outcome = await self.handle(hit)
            entries += [self.ledger.get(e) for e in outcome.new_entries]
        return out, entries

    def tool_seconds(self) -> float:
        """Time in perception/search tools, repairs' tool calls included (model-backed tools are model time)."""
        return sum(o.latency_s for o in self.ledger.tool_outputs() if o.kind not in MODEL_TOOL_KINDS)

    def _switch_inputs(self, tool: Tool, origin: ToolOutput) -> dict[str, Any]:
        """Inputs for the alternative tool chosen by SWITCH (M_compat, App. E.2)."""
        q = self.item.question
        if tool.kind is ToolKind.SEARCH:  # App. D.6: the extracted query, never the whole question
            from ledgermind.pipeline.evidence import extract_query

            return {"query": extract_query(self)}
        if tool.kind is ToolKind.OCR:
            return {"image": self.item.images[0]} if self.item.images else {}
        what = "Transcribe the visible text and values" if origin.kind is ToolKind.OCR else "Describe the region relevant to"
        return {"stage": "switch_vqa", "prompt": f"{what} for this question: {q}", "images": self.user_images()}

    def _expansion_terms(self) -> list[str]:
        from ledgermind.pipeline.evidence import keywords

        return keywords(self.item.question)[:5]

    # ------------------------------------------------------------------ grounding
    def reading_kind(self) -> str:
        return "reading" if QuestionType.READ in self.profile.types else "other"

    def ground(self, claim: Claim) -> GroundingResult:
        """Run the cascade on a claim against its leaf pool P_c and store the verdict on it."""
        pool = [e.fact for e in self.ledger.leaf_pool(claim.id)]
        judgment = claim.is_judgment or claim.ctype is ClaimType.DC
        res = self.cascade.check(claim.text, pool, kind=self.reading_kind(), sigma=claim.sigma, judgment=judgment)
        if claim.ctype is ClaimType.DC and not res.grounded:
            res = self._through_judgments(claim, res)
        claim.grounding = _result_dict(res)
        claim.grounded = res.grounded and claim.active
        return res

    def _through_judgments(self, dc: Claim, res: GroundingResult) -> GroundingResult:
        """A decision is supported through the [J] claims it cites (App. A: DC ← SC chain).

        The lexical overlap of "B. <option text>" with evidence is low for a computed answer, so ρ
        of the DC alone would fire T5 on correct answers. When the DC cites an active, grounded
        [J] claim that concluded the same answer, the DC inherits that claim's grounding.
        """
        for cid in dc.citations:
            j = next((c for c in self.ledger.claims(ClaimType.SC) if c.id == cid), None)
            if j is None or not (j.is_judgment and j.active and j.grounded and j.grounding):
                continue
            if self._same_answer(dc.text, j.text):
                g = j.grounding
                return replace(res, coverage=max(res.coverage, g["coverage"]), ecc=g["ecc"], ncc=g["ncc"],
                               missing_entities=(), unmatched_numbers=(), grounded=True, cited=True)
        return res

    def _same_answer(self, decision: str, conclusion: str) -> bool:
        from ledgermind.scoring.mmmu import choice_info, parse_multi_choice_response

        if self.item.options:
            index2ans, letters = choice_info(self.item.options)
            mine = parse_multi_choice_response(f"Answer: {decision}", letters, index2ans).letter
            theirs = parse_multi_choice_response(conclusion, letters, index2ans).letter
            return mine is not None and mine == theirs
        norm = " ".join(decision.lower().split()).strip(" .")
        return bool(norm) and norm in " ".join(conclusion.lower().split())

    def p_oc(self) -> list[EvidenceEntry]:
        """P_oc: active TEXT and NUMBER evidence — categorised OCs plus OCR lines (Alg. 1 line 4)."""
        out = []
        for e in self.ledger.active():
            origin = self.ledger.tool_output(e.tool_call_id)
            kind = origin.kind if origin else None
            if kind is ToolKind.OCR or (kind in {ToolKind.OBSERVE, ToolKind.READ} and (e.category in {"TEXT", "NUMBER", None})):
                out.append(e)
        return out

    def p_oc_block(self) -> str:
        return pool_block([e.fact for e in self.p_oc()])

    # ------------------------------------------------------------------ repair
    async def handle(self, hit: TriggerHit, acquire: AcquireSpec | None = None, regrounded: Any = None) -> RepairOutcome:
        outcome = await self.repair.handle(hit, acquire=acquire, regrounded=regrounded)
        firing = 1 + max((e.hit for e in self.traj.events), default=0)
        for event in outcome.events:
            event.hit = firing
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
        return AcquireSpec(
            "observe",
            {
                "question": f"{warning}{self.item.question}\nFocus on evidence for or against: {about}",
                "plan": "",
                "categories": [f"{c.value}: {t}" for c, t in self.profile.oc_instructions().items()],
                "images": self.user_images(),
                "max_oc": min(5, self.cfg.max_oc),
                "structured": self.structured,
            },
        )

    async def _reflect(self, hit: TriggerHit) -> str:
        from ledgermind.pipeline.render import claims_block

        text = REFLECT.substitute(
            problem=f"{hit.trigger.value} {hit.detail}".strip(),
            question=self.item.question,
            claims=claims_block(self.ledger.claims()),
            answer=self.traj.raw_answer or "(none yet)",
        )
        return await self.ask("reflect", text, self.user_images()) or ""

    def _apply_freeform(self, hit: TriggerHit, rewrite: str) -> None:
        """Free-form rewrite (ablation): the new text enters as a claim without new provenance."""
        from ledgermind.scoring.score import extract_final_answer

        target = next((t for t in hit.targets if t.startswith(("SC-", "DC-"))), None)
        cites = self.ledger.claim(target).citations if target and target in {c.id for c in self.ledger.claims()} else []
        claim = Claim(self.ledger.next_claim_id(ClaimType.SC), ClaimType.SC, rewrite.strip()[:500], Stage.J, list(cites),
                      origin=ClaimOrigin.FREEFORM)
        self.ledger.add_claim(claim)
        self.ground(claim)
        if "Answer:" in rewrite:
            self.traj.raw_answer = extract_final_answer(rewrite)
            self.traj.notes.append("answer rewritten by free-form reflection")


def _plain_meta(meta: Any) -> dict[str, Any]:
    """Reply.meta as JSON-safe values (the trajectory must serialise)."""
    if not isinstance(meta, dict):
        return {}
    return {str(k): v for k, v in meta.items() if isinstance(v, (str, int, float, bool)) or v is None}


def _profile_dict(p: QuestionProfile) -> dict[str, Any]:
    return {
        "complexity": p.complexity.value,
        "reasons": {k.value: list(v) for k, v in p.reasons.items()},
        "types": sorted(t.value for t in p.types),
        "granularity": p.granularity,
        "method": p.method,
        "oc_categories": [c.value for c in p.oc_categories],
    }


def _result_dict(r: GroundingResult) -> dict[str, Any]:
    d = asdict(r)
    d["missing_entities"] = list(r.missing_entities)
    d["unmatched_numbers"] = list(r.unmatched_numbers)
    return d

