"""Decision claims (Alg. 2 line 1) and the normalised final answer ŷ."""

from __future__ import annotations

import re

from ledgermind.backends.base import reply_json
from ledgermind.benchmarks.item import AnswerType
from ledgermind.claims import Claim, ClaimStatus, ClaimType, extract_citations
from ledgermind.pipeline.context import ItemContext
from ledgermind.pipeline.evidence import EvidenceIO
from ledgermind.pipeline.render import claims_block, decision_claim_text, option_text, options_block
from ledgermind.prompts import schemas
from ledgermind.prompts.templates import DECIDE
from ledgermind.scoring.mmmu import choice_info, parse_multi_choice_response
from ledgermind.scoring.score import extract_final_answer
from ledgermind.trajectory import MarkKind, Trajectory, Trigger


def parse_decision(reply: str) -> tuple[str, list[str]]:
    """``Answer: X | Based on: [..]`` or JSON ``{"answer": X, "cites": [..]}`` → (X, cites)."""
    try:
        data = reply_json(reply.strip())
        if isinstance(data, dict) and "answer" in data:
            cites = data.get("cites") or []
            return str(data["answer"]).strip(), extract_citations(" ".join(map(str, cites)))
    except ValueError:  # json.JSONDecodeError included
        pass
    tail = reply[reply.rfind("Answer:") :] if "Answer:" in reply else reply
    head, _, cite_part = tail.partition("|")
    if "Answer:" in head:
        answer = extract_final_answer(head)
    else:
        lines = [ln.strip() for ln in head.splitlines() if ln.strip()]
        answer = lines[-1] if lines else ""
    return answer.strip(), extract_citations(cite_part)


def mcq_letter(ctx: ItemContext, text: str) -> str | None:
    """The option letter ``text`` commits to: the official MMMU-Pro parser, or else a label that
    opens the answer and is closed by punctuation ("H, as the survey described"). The parser gives
    up on that reply when its added words hold another capital A–J ("Ingrid"); a label closed by a
    space is not taken ("A stroke." is an option's text, not option A)."""
    # vision: the options are pixels, known to the scorer
    options = ctx.item.options or ctx.item.meta.get("options")
    if not options:
        return None
    index2ans, letters = choice_info(options)
    letter = parse_multi_choice_response(text, letters, index2ans).letter
    if letter is None:
        tail = text.rsplit("Answer:", 1)[-1]
        m = _CLOSED_LABEL.match(tail)
        letter = m.group(1) if m and m.group(1) in letters else None
    return letter


_LEADING_LABEL = re.compile(r"^\s*\(?([A-J])\)?(?:[.):,;]|\s|$)\s*")
_CLOSED_LABEL = re.compile(r"^\s*\(?([A-J])(?:\)|[.:,;](?!\w))")


def decision_text(ctx: ItemContext, answer: str) -> str:
    """What the DC asserts: for an MCQ the chosen option's content, not only its label, plus any
    words the model added to its choice ("H, as the survey described"). Those words are the
    model's own justification: dropping them would hide an entity it invented from ECC."""
    letter = mcq_letter(ctx, f"Answer: {answer}")
    opt = option_text(ctx.item, letter)
    if not (letter and opt):
        return answer
    return decision_claim_text(letter, opt, stated_rationale(answer, letter, opt))


def stated_rationale(answer: str, letter: str, option: str) -> str:
    """The words of ``answer`` beyond its leading option label and the option's own text ("" if none)."""
    m = _LEADING_LABEL.match(answer)
    if not m or m.group(1) != letter:
        return ""
    rest = answer[m.end() :].strip()
    if rest.casefold().startswith(option.strip().casefold()):
        rest = rest[len(option.strip()) :]
    rest = rest.strip(" \t;,.:-—")
    return rest if re.search(r"[^\W\d_]{2}", rest) else ""


async def decide(ctx: ItemContext, *, redecide: int | None = None) -> Claim | None:
    """Synthesise the DC from the ledger (images re-sent), ground it, and run T5/T6 repair."""
    text = DECIDE.substitute(
        question=ctx.item.question,
        options=options_block(ctx.item),
        granularity=ctx.profile.granularity,
        evidence_title=ctx.evidence.evidence_title(),
        ledger=ctx.evidence.evidence_block(),
        claims=claims_block(ctx.ledger.claims(ClaimType.SC)),
    )
    text = ctx.executor.with_warning(text)
    reply = await ctx.model.ask("decide", text, ctx.decision_images(), schema=schemas.DECISION)
    if reply is None:
        return None
    answer, cites = parse_decision(reply)
    ctx.traj.raw_answer = answer
    return await register_decision(ctx, answer, cites, redecide=redecide)


def add_decision(ctx: ItemContext, answer: str, cites: list[str]) -> Claim:
    """The DC stating ``answer``; a new decision supersedes earlier ones."""
    for old in ctx.ledger.claims(ClaimType.DC):
        old.status = ClaimStatus.DROPPED
    return ctx.ledger.add_claim(
        Claim(ctx.ledger.next_claim_id(ClaimType.DC), ClaimType.DC, decision_text(ctx, answer), None, cites)
    )


async def register_decision(
    ctx: ItemContext, answer: str, cites: list[str], *, redecide: int | None = None
) -> Claim:
    """Register ``answer`` as the DC, ground it, and repair it (App. E.1 protocol, Π).

    Evidence a repair acquires closes the DC's grounding gap only through a decision that may cite
    it, so the decision is taken again after every repair that added entries. Each such repair
    spends the trajectory budget M (ACQUIRE) or a per-trigger budget M0, so this ends; ``redecide``
    (default M) bounds the re-decisions outright.
    """
    left = ctx.cfg.repair_budget if redecide is None else redecide
    dc = add_decision(ctx, answer, cites)
    ctx.evidence.ground(dc, audit_only=not ctx.executor.ledger_repairs)  # without repairs nothing acts on it
    acquired = False
    hits = ctx.verifier.protocol([dc]) if ctx.executor.ledger_repairs else []  # App. E.1 steps (1)–(4)
    for hit in hits:
        if hit.trigger in {Trigger.T5, Trigger.T6} and not dc.active:
            continue
        if hit.trigger is Trigger.T5:
            mark_t5_support(ctx.evidence, ctx.traj, dc, beta=ctx.cfg.grounding.beta)
        added = await ctx.executor.repair(
            hit, acquire=ctx.executor.acquire_spec(dc.text, warned=hit.trigger is Trigger.T6), claim=dc
        )
        if ctx.traj.abstained:
            return dc
        acquired = acquired or bool(added)
    if acquired and left > 0:  # new evidence closes the gap only if the decision may cite it
        again = await decide(ctx, redecide=left - 1)
        return again or dc
    return dc


_T5_MARKS = {
    "none": MarkKind.T5_NO_SUPPORT,
    "perception": MarkKind.T5_PERCEPTION_SUPPORT,
    "retrieval": MarkKind.T5_RETRIEVAL_SUPPORT,
}


def mark_t5_support(evidence: EvidenceIO, traj: Trajectory, dc: Claim, *, beta: float) -> None:
    """Why T5 fired: the DC's coverage ρ and whether any ACTIVE entry could state an answer."""
    kind = evidence.possible_support(dc.text)
    rho = (dc.grounding or {}).get("coverage", 0.0)
    traj.mark(_T5_MARKS[kind], f"{dc.id} ρ={rho:.2f} < β={beta}; support possible from: {kind}")


def finalize_answer(ctx: ItemContext) -> None:
    """ŷ: an option letter for MCQs, the answer text otherwise; ⊥ (None) after ABSTAIN."""
    t = ctx.traj
    if t.abstained:
        t.answer = None
        return
    raw = t.raw_answer.strip()
    if ctx.item.answer_type is AnswerType.MCQ or ctx.item.options:
        t.answer = mcq_letter(ctx, f"Answer: {raw}") or mcq_letter(ctx, raw) or (raw or None)
    else:
        t.answer = raw or None
