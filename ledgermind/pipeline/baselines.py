"""The native chain-of-thought baseline and the ``no_ledger`` ablation.

Both keep their trace in the same trajectory format as LedgerMind so the symmetric audit can
compare them: tool outputs are still stored (for the audit), the model's text goes to
``transcript``, and the decision claim is grounded *after the fact* for the metrics only — it
never influences ŷ, and no citation is validated while answering.
"""

from __future__ import annotations

import re

from ledgermind.claims import extract_citations
from ledgermind.dispatch import QuestionType
from ledgermind.pipeline.answer import add_decision, finalize_answer
from ledgermind.pipeline.context import ItemContext
from ledgermind.pipeline.gather import knowledge_search, ocr_images
from ledgermind.pipeline.render import options_block
from ledgermind.prompts.templates import NATIVE_COT
from ledgermind.scoring.score import extract_final_answer


async def run_native_cot(ctx: ItemContext) -> None:
    await ocr_images(ctx)
    if QuestionType.KNOWLEDGE in ctx.profile.types:
        await knowledge_search(ctx, deep=QuestionType.DEEP_KNOWLEDGE in ctx.profile.types)
    # every stored tool output as a numbered line; the model cites the numbers
    numbered = list(enumerate(ctx.ledger.entries(), 1))
    evidence = "\n".join(f"[{n}] {e.src}: {e.fact}" for n, e in numbered) or "(no tool output)"
    index = {str(n): e.id for n, e in numbered}
    text = NATIVE_COT.substitute(
        question=ctx.item.question, options=options_block(ctx.item), evidence=evidence
    )
    reply = await ctx.model.ask("native_cot", text, ctx.user_images()) or ""
    ctx.traj.transcript = [{"role": "tools", "text": evidence}, {"role": "model", "text": reply}]
    ctx.traj.raw_answer = extract_final_answer(reply) if reply else ""
    # post-hoc audit only: the numbers the model cited, mapped to the stored outputs
    cited = [index[n] for n in dict.fromkeys(re.findall(r"\[(\d+)\]", reply)) if n in index]
    cited += [c for c in extract_citations(reply) if c in ctx.ledger]
    ctx.evidence.ground(add_decision(ctx, ctx.traj.raw_answer, cited), audit_only=True)
    ctx.traj.notes.append("decision grounded post hoc for the audit (not used to answer)")
    finalize_answer(ctx)


async def run_no_ledger(ctx: ItemContext) -> None:
    """Ablation w/o Ledger (DESIGN.md §4): the path the dispatcher picks, the same tools and tool
    budget, with a free-form transcript in place of the ledger (``ctx.free_form``): prompt-level
    citation instructions only, no citation validation, no grounding and no ledger repairs."""
    from ledgermind.pipeline.direct import run_direct
    from ledgermind.pipeline.fullpipe import run_fullpipe

    route = "FULLPIPE" if ctx.profile.is_complex or not ctx.flags.dispatcher else "DIRECT"
    ctx.traj.profile["route"] = route
    await (run_fullpipe(ctx) if route == "FULLPIPE" else run_direct(ctx))
    model_text = "\n".join(c.reply for c in ctx.traj.model_calls if c.reply)
    ctx.traj.transcript = [
        {"role": "tools", "text": ctx.evidence.evidence_block()},
        {"role": "model", "text": model_text},
    ]
