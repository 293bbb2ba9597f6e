"""Evidence gathering: Algorithm 1 lines 1–21 (plan, observations + OCR, crop-zoom, Dual-Read, search)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ledgermind.dispatch import QuestionType
from ledgermind.grounding import GroundingCascade
from ledgermind.grounding.numbers import extract_numbers
from ledgermind.ledger import EvidenceEntry, Kappa, Omega
from ledgermind.pipeline.context import ItemContext
from ledgermind.pipeline.evidence import EvidenceIO, extract_query
from ledgermind.pipeline.render import question_with_options, referenced_images
from ledgermind.tools.base import ToolKind
from ledgermind.trajectory import MarkKind


@dataclass
class Evidence:
    """What the later stages of an item use of its gathered evidence: the crop and its readings."""

    crop: EvidenceEntry | None = None
    crop_image: Any = None
    source_image: Path | None = None  # the original image the crop was cut from
    readings: list[EvidenceEntry] = field(default_factory=list)


async def gather_evidence(ctx: ItemContext) -> Evidence:
    ev = Evidence()
    types = ctx.profile.types
    question = question_with_options(ctx.item)
    # line 2: π ← TASKPLAN(q); APPEND(π, DERIVATION, 1.0)
    _, plan = await ctx.executor.call(
        "plan", question=question, granularity=ctx.profile.granularity, method=ctx.profile.method
    )
    ocr = await ocr_images(ctx)
    # line 3: SOBSERVE(q, I, π) → PERCEPTION, σ = 0.92
    _, ocs = await ctx.executor.call(
        "observe",
        question=question,
        plan=plan[0].fact if plan else "",
        categories=[f"{c.value}: {t}" for c, t in ctx.profile.oc_instructions().items()],
        images=ctx.user_images(),
        max_oc=ctx.cfg.max_oc,
        structured=ctx.structured,
    )
    mark_tool_agreement(ctx.cascade, ocs, ocr)
    if types & {QuestionType.READ, QuestionType.LOCATION} and ctx.item.images:  # lines 5–14
        await crop_and_read(ctx, ev, read=QuestionType.READ in types)
    if QuestionType.KNOWLEDGE in types:  # lines 15–21
        await knowledge_search(ctx, deep=QuestionType.DEEP_KNOWLEDGE in types)
    if ctx.executor.ledger_repairs:
        for hit in ctx.verifier.conflict_scan():  # conflicts among the evidence just gathered (T3)
            await ctx.executor.repair(hit)
    return ev


async def ocr_images(ctx: ItemContext) -> list[EvidenceEntry]:
    """OCR evidence from perception/ for every referenced image (merged with the OCs, line 3)."""
    if "ocr" not in ctx.tools:
        return []
    entries: list[EvidenceEntry] = []
    for i in referenced_images(ctx.item):
        _, es = await ctx.executor.call("ocr", image=Path(ctx.item.images[i - 1]))
        for e in es:
            e.meta.setdefault("category", "TEXT")
            e.meta["image"] = i
        entries += es
    return entries


def mark_tool_agreement(
    cascade: GroundingCascade, ocs: list[EvidenceEntry], ocr: list[EvidenceEntry]
) -> None:
    """OCErr bookkeeping (Eq. 27): does a TEXT/NUMBER OC agree with what OCR read?"""
    if not ocr:
        return
    pool = [e.fact for e in ocr]
    for oc in ocs:
        if oc.category in {"TEXT", "NUMBER"}:
            res = cascade.check(oc.fact, pool, judgment=False)
            oc.meta["tool_agreement"] = bool(res.ncc and res.coverage >= 0.5)


async def crop_and_read(ctx: ItemContext, ev: Evidence, *, read: bool) -> None:
    q = ctx.item.question
    image = Path(ctx.item.images[referenced_images(ctx.item)[0] - 1])
    out, crop = await ctx.executor.call("crop_zoom", image=image, question=q)  # lines 6–7: r*, 2.5× zoom
    if not crop:
        return
    ev.crop, ev.crop_image, ev.source_image = crop[0], out.artifacts.get("image"), image
    _, zoomed_ocr = (
        await ctx.executor.call("ocr", image=image, region=ev.crop.bbox.as_list())
        if ev.crop.bbox
        else (None, [])
    )
    for e in zoomed_ocr:
        e.meta.setdefault("category", "TEXT")
    perception = [
        e
        for e in ctx.ledger.active()
        if e.kappa is Kappa.PERCEPTION and e.id != ev.crop.id and e not in zoomed_ocr
    ]
    if perception:  # line 8: SUPERSEDE(argmin_{κ=PERC} σ_e, e_c)
        weakest = min(perception, key=lambda e: (e.sigma, -e.t))
        ctx.ledger.supersede(weakest.id, ev.crop.id)
    if read and ev.crop_image is not None:
        await dual_read(ctx, ev)


async def dual_read(ctx: ItemContext, ev: Evidence) -> None:
    """App. D.5: two context-free readings; Δv ≤ 0.15 → σ 0.97, else 0.65 and adopt v2.

    The two readings must be "calls that do not share context", so they are different requests:
    the second reads a *jittered re-crop* of the same region (the crop tool's own ±[15, 40] px
    perturbation, ``perturb_seed``), i.e. different pixels under the same greedy decoding —
    cacheable, replayable, and never the first reply handed back by the cache. The resulting σ
    is set on the crop and on the adopted reading, which is what claims cite, so it reaches the
    verification gate (claims take the minimum σ of their leaves).
    """
    assert ev.crop is not None
    region = ev.crop.bbox.as_list() if ev.crop.bbox else None
    r1 = await read(ctx, ev.crop_image, 0, region)
    ev.readings += r1
    if not ctx.flags.dual_read:
        return  # ablation: a single reading, σ as for a normal crop
    image2, region2 = await jittered_crop(ctx, ev, "dual_read")
    r2 = await read(ctx, image2, 1, region2)
    ev.readings += r2
    v1 = r1[0].meta.get("value") if r1 else None
    v2 = r2[0].meta.get("value") if r2 else None
    if v1 is None or v2 is None:
        _set_reading_sigma(ctx, ev, ctx.cfg.sigma_dual_disagree, "dual-read: a reading is missing")
        ctx.traj.mark(MarkKind.DUAL_READ_DISAGREE, f"a reading is missing (v1={v1}, v2={v2})")
        return
    delta = abs(v1 - v2) / max(abs(v1), abs(v2), 1e-9)
    agree = delta <= ctx.cfg.dual_read_delta
    if not agree:
        ctx.ledger.supersede(r1[0].id, r2[0].id)  # adopt v2 on disagreement
    sigma = ctx.cfg.sigma_dual_agree if agree else ctx.cfg.sigma_dual_disagree
    _set_reading_sigma(ctx, ev, sigma, f"dual-read Δv={delta:.3f}")
    kind = MarkKind.DUAL_READ_AGREE if agree else MarkKind.DUAL_READ_DISAGREE
    ctx.traj.mark(kind, f"v1={v1:g} v2={v2:g} Δv={delta:.3f}")
    if not agree and ctx.cfg.dual_read_escalate:
        await escalate_dual_read(ctx, ev)


async def escalate_dual_read(ctx: ItemContext, ev: Evidence) -> None:
    """App. D.5: "disagreement triggers hypothesis verification" — its NCC branch (Alg. 1 line 41):
    one more independent reading of its own re-crop, and the reading whose value lies closest to
    Num(P_oc) is adopted. It spends one unit of the repair budget M.

    Why not through σ: D.5 sets σ = 0.65 on disagreement, above σ_verify = 0.6 (Alg. 1 line 35),
    so the σ gate alone never starts verification from a disagreement (docs/architecture.md,
    ``dual_read_escalate``).
    """
    if not ctx.budget.spend():
        return
    image, region = await jittered_crop(ctx, ev, "dual_read_escalation")
    ev.readings += await read(ctx, image, 2, region)
    readings = [
        e for e in ev.readings if e.meta.get("value") is not None and e.omega in {Omega.ACTIVE, Omega.STALE}
    ]
    choice = closest_reading(ctx.evidence, readings)
    if choice is None:  # nothing read by other means to compare with: v2 stays adopted (D.5)
        ctx.traj.mark(MarkKind.DUAL_READ_ESCALATED, "third reading; no number in P_oc to compare, v2 kept")
        return
    adopted, _ = choice
    if not adopted.active:  # an earlier reading is the closest: it comes back in place of the others
        ctx.ledger.reinstate(adopted.id, "dual-read escalation: closest to Num(P_oc)")
        ctx.ledger.set_sigma(adopted.id, ctx.cfg.sigma_dual_disagree, "dual-read escalation")
    for e in readings:
        if e.id != adopted.id and e.active:
            ctx.ledger.supersede(e.id, adopted.id)
    ctx.traj.mark(
        MarkKind.DUAL_READ_ESCALATED,
        f"adopted {adopted.meta['value']:g} ({adopted.id}), closest to Num(P_oc)",
    )


async def read(
    ctx: ItemContext, image: Any, attempt: int, region: list[float] | None, **variation: Any
) -> list[EvidenceEntry]:
    """One reading of ``image``, located at ``region`` of the original (``ReadTool``)."""
    _, entries = await ctx.executor.call(
        "read", image=image, attempt=attempt, structured=ctx.structured, located_at=region, **variation
    )
    return entries


def closest_reading(
    evidence: EvidenceIO, readings: list[EvidenceEntry]
) -> tuple[EvidenceEntry, list[str]] | None:
    """The reading whose value lies closest to a number read by other means (P_oc without the
    readings: OCR lines, observations), with the ids of the P_oc entries at that distance."""
    others = [e for e in evidence.p_oc() if e.src != "read"]
    pool = [(n.value, e) for e in others for n in extract_numbers(e.fact) if n.value is not None]
    if not readings or not pool:
        return None

    def gap(r: EvidenceEntry) -> float:
        return min(abs(r.meta["value"] - v) for v, _ in pool)

    adopted = min(readings, key=lambda r: (gap(r), -r.t))
    return adopted, [e.id for v, e in pool if abs(v - adopted.meta["value"]) == gap(adopted)][:2]


async def jittered_crop(ctx: ItemContext, ev: Evidence, purpose: str) -> tuple[Any, list[float] | None]:
    """A re-crop of the crop region shifted by the crop tool's RETRY perturbation (falls back to
    the first crop when there is no source image or region, or the re-crop fails)."""
    assert ev.crop is not None
    if ev.source_image is None or ev.crop.bbox is None:
        return ev.crop_image, ev.crop.bbox.as_list() if ev.crop.bbox else None
    out, entries = await ctx.executor.call(
        "crop_zoom",
        image=ev.source_image,
        bbox=ev.crop.bbox.as_list(),
        perturb_seed=f"{ctx.cfg.seed}:{ctx.item.id}:{purpose}",
    )
    image = out.artifacts.get("image")
    if image is None or not entries or entries[0].bbox is None:
        return ev.crop_image, ev.crop.bbox.as_list()
    return image, entries[0].bbox.as_list()


def _set_reading_sigma(ctx: ItemContext, ev: Evidence, sigma: float, reason: str) -> None:
    assert ev.crop is not None
    for e in [ev.crop, *ev.readings]:
        if e.active:
            ctx.ledger.set_sigma(e.id, sigma, reason)


async def knowledge_search(ctx: ItemContext, *, deep: bool) -> list[EvidenceEntry]:
    """App. D.6 two-round strategy; results are RETRIEVAL entries with σ = 0.85 (line 20). The one
    place any path searches (DIRECT: one round, FULLPIPE and the baseline: two for deep knowledge)."""
    name = next((n for n, t in ctx.tools.items() if t.kind is ToolKind.SEARCH), None)
    if name is None:
        ctx.traj.mark(MarkKind.SEARCH_SKIPPED_NO_PROVIDER, "knowledge question but no search tool configured")
        return []
    _, round1 = await ctx.executor.call(name, query=extract_query(ctx.evidence))
    entries = list(round1)
    if deep and round1:
        _, round2 = await ctx.executor.call(name, query=extract_query(ctx.evidence, round1))
        entries += round2
    return entries
