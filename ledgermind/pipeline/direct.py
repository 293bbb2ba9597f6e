"""DIRECT path: a small evidence budget for simple queries (§3.2, App. D, G.6).

OCR evidence, one direct answer, an optional single search round with the concise
re-answering step, and the decision claim grounded through the same cascade as FULLPIPE.
"""

from __future__ import annotations

from ledgermind.dispatch import QuestionType
from ledgermind.pipeline.answer import finalize_answer, register_decision
from ledgermind.pipeline.context import ItemContext
from ledgermind.pipeline.gather import knowledge_search, ocr_images
from ledgermind.pipeline.render import options_block, pool_block
from ledgermind.prompts.templates import CONCISE, CONCISE_SYSTEM, DIRECT
from ledgermind.scoring.score import extract_final_answer


async def run_direct(ctx: ItemContext) -> None:
    ocr = await ocr_images(ctx)
    text = DIRECT.substitute(
        question=ctx.item.question,
        options=options_block(ctx.item),
        granularity=ctx.profile.granularity,
        ocr=pool_block([e.fact for e in ocr]),
    )
    _, ans = await ctx.executor.call(
        "vqa", derived_from=[e.id for e in ocr], stage="direct", prompt=text, images=ctx.user_images()
    )
    answer = extract_final_answer(ans[0].fact) if ans else ""
    cites = [ans[0].id] if ans else []
    if QuestionType.KNOWLEDGE in ctx.profile.types:  # single-round search + concise re-answer (G.6)
        hits = await knowledge_search(ctx, deep=False)
        if hits:
            results = " ".join(e.fact for e in hits)[: ctx.cfg.search_chars]
            prompt = CONCISE.substitute(
                question=ctx.item.question,
                options=options_block(ctx.item),
                initial=answer or "(none)",
                results=results,
            )
            _, ans2 = await ctx.executor.call(
                "vqa",
                derived_from=[e.id for e in ocr + hits],
                stage="concise",
                prompt=prompt,
                system=CONCISE_SYSTEM,
            )
            if ans2:
                answer = extract_final_answer(ans2[0].fact) or ans2[0].fact
                cites = [ans2[0].id]
    ctx.traj.raw_answer = answer
    await register_decision(ctx, answer, cites)
    finalize_answer(ctx)
