"""MLLM calls that produce evidence go through the tool interface (DESIGN.md §3).

Task plans, observation claims, crop readings and re-examinations are model outputs, but they
enter the ledger exactly like OCR lines: as sealed ``ToolOutput`` objects mapped by M, with the
κ the paper assigns (PLAN, VQA → DERIVATION; OBSERVE, READ → PERCEPTION).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from ledgermind.backends.base import ContentPart, reply_json
from ledgermind.claims import parse_oc_lines
from ledgermind.errors import ToolError
from ledgermind.grounding.numbers import extract_numbers
from ledgermind.prompts import schemas
from ledgermind.prompts.templates import DUAL_READ, OBSERVE, PLAN
from ledgermind.repair.reinvocation import rephrased
from ledgermind.tools.base import BBox, Observation, Tool, ToolKind

# (stage, prompt text, images, system prompt, json schema[, draw]) -> reply text; raises on failure.
Caller = Callable[..., Awaitable[str]]


class _MLLMTool(Tool):
    def __init__(self, call: Caller) -> None:
        self.call = call


class PlanTool(_MLLMTool):
    """TASKPLAN(q) from the question alone (Alg. 1 line 2; prompt G.1)."""

    name, kind = "plan", ToolKind.PLAN

    async def _arun(
        self, question: str, granularity: str, method: str, rephrase: int = 0
    ) -> list[Observation]:
        text = rephrased(PLAN.substitute(question=question, granularity=granularity, method=method), rephrase)
        reply = await self.call("plan", text, [], None, None)
        return [Observation(reply.strip())] if reply.strip() else []


class ObserveTool(_MLLMTool):
    """SOBSERVE(q, I, π): up to N_max categorised observation claims (Alg. 1 line 3; G.2)."""

    name, kind = "observe", ToolKind.OBSERVE

    async def _arun(
        self,
        question: str,
        plan: str,
        categories: Sequence[str],
        images: Sequence[ContentPart],
        max_oc: int = 15,
        structured: bool = False,
        rephrase: int = 0,
    ) -> list[Observation]:
        """``rephrase``: the k-th re-ask of this request (RETRY, a repeated ACQUIRE) appends the k-th
        reformulation, so a greedy backbone gets a different request (App. E.2)."""
        text = OBSERVE.substitute(
            question=question, plan=plan or "(no plan)", max_oc=max_oc, categories="\n".join(categories)
        )
        text = rephrased(text, rephrase)
        schema = schemas.with_max_items(schemas.OBSERVATIONS, max_oc) if structured else None
        reply = await self.call("observe", text, images, None, schema)
        return [Observation(o.text, meta={"category": o.category}) for o in parse_oc_lines(reply, max_oc)]


class ReadTool(_MLLMTool):
    """One context-free reading of a zoomed crop (Dual-Read, App. D.5).

    ``attempt`` labels the reading (0, 1: Dual-Read; 2: the re-reading of Alg. 1 line 41). The
    pipeline makes the readings independent by giving each its own jittered crop (different
    pixels, greedy decoding: cacheable and replayable). A re-reading of the same pixels (RETRY)
    must still be a different request, since a greedy backbone would repeat its reply: it is
    ``rephrase``d (default), or — only where ``reinvoke_sampling`` allows it — a ``sampled`` draw
    (seed + attempt).
    """

    name, kind = "read", ToolKind.READ

    async def _arun(
        self,
        image: ContentPart,
        attempt: int = 0,
        structured: bool = False,
        located_at: Sequence[float] | None = None,
        sampled: bool = False,
        rephrase: int = 0,
    ) -> list[Observation]:
        """``located_at``: where the crop lies in the original image; the reading is located there
        (T3). It is metadata, not a box that selects pixels (the image is the crop already), so
        RETRY never perturbs it: a repeated reading is a sampled draw of the same pixels."""
        schema = schemas.READING if structured else None
        draw = max(1, attempt) if sampled else 0
        text = rephrased(DUAL_READ.substitute(), rephrase)
        reply = await self.call(f"dual_read_{attempt}", text, [image], None, schema, draw)
        nums = extract_numbers(_reading_text(reply))
        if not nums:
            return []  # no value read: an empty output is trigger T1
        box = BBox.from_list(list(located_at)) if located_at is not None else None
        return [Observation(f"reading {nums[0].text}", box, meta={"value": nums[0].value})]


def _reading_text(reply: str) -> str:
    try:
        data = reply_json(reply)
        if isinstance(data, dict) and "value" in data:
            return f"{data['value']} {data.get('unit', '')}".strip()
    except ValueError:  # json.JSONDecodeError included
        pass
    return reply


class VQATool(_MLLMTool):
    """A model answer recorded as DERIVATION (App. B.1): direct answers, re-examinations."""

    name, kind = "vqa", ToolKind.VQA

    async def _arun(
        self,
        stage: str,
        prompt: str,
        images: Sequence[ContentPart] = (),
        system: str | None = None,
        attempt: int = 0,
        sampled: bool = False,
        rephrase: int = 0,
    ) -> list[Observation]:
        """A RETRY re-asks with a ``rephrase``d instruction, or (where sampling is allowed) a
        ``sampled`` draw (seed + attempt): the identical greedy request would return the
        identical (failed) reply."""
        reply = await self.call(
            stage, rephrased(prompt, rephrase), images, system, None, max(1, attempt) if sampled else 0
        )
        if not reply.strip():
            raise ToolError("the model returned an empty reply")
        return [Observation(reply.strip())]
