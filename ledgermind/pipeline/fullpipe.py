"""FULLPIPE: Algorithm 1 (evidence gathering, grounded reasoning) and Algorithm 2 (decision, defense).

Each function below is one block of the paper's pseudocode and names its line numbers. All
state goes through ``ctx.ledger``; ablation flags are read, never branched into copies.
"""

from __future__ import annotations

from ledgermind.claims import Claim, ClaimOrigin, ClaimStatus, ClaimType, Stage, parse_sc_lines
from ledgermind.dispatch import QuestionType, has_uncertainty_marker
from ledgermind.grounding.numbers import extract_numbers
from ledgermind.pipeline.answer import decide, finalize_answer
from ledgermind.pipeline.context import ItemContext
from ledgermind.pipeline.gather import Evidence, closest_reading, gather_evidence, jittered_crop, read
from ledgermind.pipeline.render import options_block, question_with_options
from ledgermind.prompts import schemas
from ledgermind.prompts.templates import ENTITY_RECHECK, HYPOTHESIS, REASON, VISUAL_FALLBACK
from ledgermind.repair.triggers import t6_phantom_grounding
from ledgermind.scoring.score import extract_final_answer
from ledgermind.trajectory import MarkKind


async def run_fullpipe(ctx: ItemContext) -> None:
    ev = await gather_evidence(ctx)  # Alg. 1 lines 1–21
    ctx.budget.reserve(1)  # App. A: hypothesis verification is funded before any T5/T6 ACQUIRE
    judgments = await grounded_reasoning(ctx)  # lines 22–34
    await hypothesis_verification(ctx, judgments, ev)  # lines 35–44
    ctx.budget.release()  # the decision part gets what remains
    await decide(ctx)  # Alg. 2 line 1, images re-sent (+ T5/T6 repair on the DC)
    await defense_lines(ctx)  # Alg. 2 lines 2–10
    finalize_answer(ctx)


# ----------------------------------------------------------------------------- Alg. 1 lines 22–34
async def grounded_reasoning(ctx: ItemContext) -> list[Claim]:
    """[E] → [I] → [J] claims with citations; structural and containment checks."""
    text = REASON.substitute(
        method=ctx.profile.method,
        granularity=ctx.profile.granularity,
        warning=(ctx.executor.warning or ""),
        question=question_with_options(ctx.item),
        evidence_title=ctx.evidence.evidence_title(),
        ledger=ctx.evidence.evidence_block(),
    )
    reply = await ctx.model.ask("reason", text, ctx.user_images(), schema=schemas.CLAIMS)
    claims = parse_sc_lines(reply or "")
    if not claims:
        ctx.traj.notes.append("reasoning produced no parsable claims")
    for c in claims:
        if c.id in {x.id for x in ctx.ledger.claims()}:
            c.id = ctx.ledger.next_claim_id(ClaimType.SC)
        ctx.ledger.add_claim(c)
        if ctx.free_form:  # no_ledger: claims are kept as written — no citation validation, no grounding
            continue
        support = ctx.ledger.support(c.id)  # ground(c_j): cited ACTIVE entries (line 24)
        if not support and c.stage in {Stage.E, Stage.I}:
            c.status = ClaimStatus.DROPPED  # line 26: uncited non-judgment claims are dropped
            c.grounded = False
        elif not support and c.stage is Stage.J:
            c.sigma = ctx.cfg.grounding.demote_uncited  # line 28
        else:  # a claim is no surer than the evidence it rests on (Dual-Read σ reaches the gate)
            c.sigma = min([c.sigma, *(e.sigma for e in ctx.ledger.leaf_pool(c.id))])
    if ctx.free_form:
        return []
    judgments = [c for c in ctx.ledger.claims(ClaimType.SC) if c.is_judgment and c.active]
    for c in ctx.ledger.claims(ClaimType.SC):
        if c.active:
            res = ctx.evidence.ground(c)  # lines 31–34: ρ, ECC, NCC; σ demotion for [J]
            if c.is_judgment:
                c.sigma = res.sigma_after
                hit = t6_phantom_grounding(c, res.coverage, res.ecc, res.ncc)
                if hit:  # T6: warning injection (+ ACQUIRE when budget allows; the warning goes with it)
                    await ctx.executor.repair(
                        hit, acquire=ctx.executor.acquire_spec(c.text, warned=True), claim=c
                    )
    return judgments


# ----------------------------------------------------------------------------- Alg. 1 lines 35–44
async def hypothesis_verification(
    ctx: ItemContext, judgments: list[Claim], ev: Evidence | None = None
) -> None:
    """When all judgments are weak and budget remains, falsify the strongest one."""
    if not judgments or any(c.sigma > ctx.cfg.grounding.sigma_verify for c in judgments):
        return
    if not ctx.budget.spend_reserved():
        return
    best = max(judgments, key=lambda c: c.sigma)
    ctx.traj.mark(MarkKind.HYPOTHESIS_VERIFICATION, f"{best.id} σ={best.sigma:.2f}")
    g = best.grounding or {}
    poc = ctx.evidence.p_oc()
    if g.get("ecc") is False:
        text = ctx.executor.with_warning(
            HYPOTHESIS.substitute(
                question=ctx.item.question, hypothesis=best.text, pool=ctx.evidence.p_oc_block()
            )
        )
        # line 39: c′ enters the ledger (DERIVATION, σ 0.88) only if c′ ≠ c*; a confirming
        # re-examination stays in the audit trail with no entry
        out, entries = await ctx.executor.call(
            "vqa",
            derived_from=[e.id for e in poc],
            sigma=ctx.cfg.sigma_revised,
            admit=lambda o: _revises(o.observations[0].text, best.text),
            stage="hypothesis",
            prompt=text,
            images=ctx.user_images(),
        )
        revised = _revision(entries[0].fact) if entries else None
        if revised and _norm(revised) != _norm(best.text):
            c2 = _add_revised(ctx, revised, [entries[0].id])
            res = ctx.evidence.ground(c2)
            c2.sigma = min(c2.sigma, res.sigma_after)
            ctx.traj.notes.append(f"hypothesis revised: {best.id} → {c2.id}")
        elif out.ok:
            ctx.traj.notes.append(
                f"hypothesis confirmed: {best.id} (re-examination not appended, Alg. 1 line 39)"
            )
    elif g.get("ncc") is False:
        await second_reading(ctx, best, ev)


async def second_reading(ctx: ItemContext, best: Claim, ev: Evidence | None) -> None:
    """Alg. 1 line 41: an independent reading; adopt the reading closest to Num(P_oc).

    The new reading is of its own jittered re-crop (``ReadTool`` attempt 2), not a repeat of
    Dual-Read's requests. Among all active readings, the one whose value lies closest to a number read by
    other means (OCR lines, observations: P_oc without the readings themselves) is adopted, and
    the revised claim states *that reading* and cites it with the P_oc entries that agree.
    """
    region = None
    if ev is not None and ev.crop is not None:
        image, region = await jittered_crop(ctx, ev, "second_reading")
    else:  # no crop was cut: read the whole image (a rephrased or sampled request, so it is new)
        image = ctx.item.images[0] if ctx.item.images else None
    if image is None:
        return
    sampled = region is None and ctx.cfg.reinvoke_sampling
    await read(ctx, image, 2, region, sampled=sampled, rephrase=int(region is None and not sampled))
    readings = [e for e in ctx.ledger.active() if e.meta.get("value") is not None and e.src == "read"]
    choice = closest_reading(ctx.evidence, readings)
    if choice is None:
        return
    adopted, cites = choice
    value = adopted.meta["value"]
    ctx.evidence.ground(_add_revised(ctx, f"The value is {_fmt(value)}", [adopted.id, *cites]))
    ctx.traj.notes.append(f"second reading: adopted reading {_fmt(value)} ({adopted.id}) for {best.id}")


def _add_revised(ctx: ItemContext, text: str, cites: list[str]) -> Claim:
    """c′ of verification: a [J] claim with the σ of a revised claim (DERIVATION, line 39)."""
    c = Claim(
        ctx.ledger.next_claim_id(ClaimType.SC),
        ClaimType.SC,
        text,
        Stage.J,
        cites,
        sigma=ctx.cfg.sigma_revised,
        origin=ClaimOrigin.REPAIR,
    )
    return ctx.ledger.add_claim(c)


def _revises(reply_or_revision: str, hypothesis: str) -> bool:
    """Alg. 1 line 39's c′ ≠ c*: the re-examination states a claim other than the hypothesis."""
    revised = _revision(reply_or_revision)
    return bool(revised) and _norm(revised) != _norm(hypothesis)  # type: ignore[arg-type]


def _revision(reply: str) -> str | None:
    """'Conclusion: Revise: X' → X; 'Confirm: X' → X; else the last line."""
    low = reply.lower()
    for key in ("revise:", "confirm:"):
        pos = low.rfind(key)
        if pos != -1:
            tail = reply[pos + len(key) :].strip().splitlines()
            return tail[0].strip() if tail and tail[0].strip() else None
    lines = [ln.strip() for ln in reply.splitlines() if ln.strip()]
    return lines[-1] if lines else None


# ----------------------------------------------------------------------------- Alg. 2 lines 2–10
async def defense_lines(ctx: ItemContext) -> None:
    """Alg. 2: entity recheck (ECC), then — a separate check — numeric snap for reading questions
    (NCC on the answer as it stands after the recheck), then visual fallback on uncertainty."""
    answer = ctx.traj.raw_answer
    if answer and not ctx.traj.abstained and ctx.flags.ecc_ncc and not ctx.free_form:
        answer = await _entity_recheck(ctx, answer)
        answer = _numeric_snap(ctx, answer)
    if has_uncertainty_marker(answer or "") or (not answer and not ctx.traj.abstained):  # lines 8–9
        ctx.traj.mark(MarkKind.VISUAL_FALLBACK, "uncertain or empty answer")
        text = VISUAL_FALLBACK.substitute(question=ctx.item.question, options=options_block(ctx.item))
        reply = await ctx.model.ask("visual_fallback", text, ctx.user_images())
        if reply:
            answer = extract_final_answer(reply) or reply.strip()
    ctx.traj.raw_answer = answer or ""


async def _entity_recheck(ctx: ItemContext, answer: str) -> str:
    """Lines 2–3: ECC(ŷ, P_oc) = 0 → re-answer restricted to P_oc."""
    pool = [e.fact for e in ctx.evidence.p_oc()]
    if not pool or ctx.cascade.check(answer, pool, kind=ctx.evidence.reading_kind(), judgment=True).ecc:
        return answer
    ctx.traj.mark(MarkKind.ENTITY_RECHECK, "answer entities not in P_oc")
    text = ENTITY_RECHECK.substitute(
        pool=ctx.evidence.p_oc_block(), question=ctx.item.question, options=options_block(ctx.item)
    )
    reply = await ctx.model.ask("entity_recheck", text)
    return (extract_final_answer(reply) or reply.strip()) if reply else answer


def _numeric_snap(ctx: ItemContext, answer: str) -> str:
    """Lines 5–6: on a reading question, NCC(ŷ, P_oc) = 0 → snap to the closest number in P_oc."""
    pool = [e.fact for e in ctx.evidence.p_oc()]
    if QuestionType.READ not in ctx.profile.types or not pool:
        return answer
    if ctx.cascade.check(answer, pool, kind=ctx.evidence.reading_kind(), judgment=True).ncc:
        return answer
    snapped = _snap(answer, pool)
    if snapped is None:
        return answer
    ctx.traj.mark(MarkKind.NUMERIC_SNAP, f"{answer} → {snapped}")
    return snapped


def _snap(answer: str, pool: list[str]) -> str | None:
    vals = [n for n in extract_numbers(answer) if n.value is not None]
    pool_nums = [n for f in pool for n in extract_numbers(f) if n.value is not None]
    if not vals or not pool_nums:
        return None
    v = vals[0].value
    best = min(pool_nums, key=lambda n: abs(n.value - v))  # type: ignore[operator]
    return _fmt(best.value)  # type: ignore[arg-type]


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def _norm(s: str) -> str:
    return " ".join(s.lower().split()).strip(" .")
