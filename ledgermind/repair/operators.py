"""The seven typed repair operators (paper §3.2, App. E.2).

Operators act on the ledger and the tool registry only. The only way any of them adds an
entry is by invoking a tool and recording its ``ToolOutput`` (REFRESH, RETRY, ACQUIRE); DROP,
SWITCH, STOP_AND_ANSWER and ABSTAIN add none. That is Proposition 1, and
``tests/repair/test_provenance_property.py`` checks it on random ledgers and operator sequences.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ledgermind import paper
from ledgermind.errors import LedgerError
from ledgermind.ledger import EvidenceEntry, Ledger
from ledgermind.registry import Registry
from ledgermind.tools.base import BBox, Tool, ToolKind, ToolOutput
from ledgermind.trajectory import OperatorName, RepairLayer

# App. E.2: M_compat — OCR → {search, VQA}; local crop → {full-image VQA}.
DEFAULT_COMPAT: Mapping[ToolKind, tuple[ToolKind, ...]] = {
    ToolKind.OCR: (ToolKind.SEARCH, ToolKind.VQA),
    ToolKind.CROP: (ToolKind.VQA,),
    ToolKind.READ: (ToolKind.VQA,),
    ToolKind.OBSERVE: (ToolKind.OCR, ToolKind.VQA),
    ToolKind.SEARCH: (ToolKind.VQA,),
    ToolKind.DETECT: (ToolKind.VQA,),
}

Recorder = Callable[[ToolOutput], list[EvidenceEntry]]
InputsAdapter = Callable[[Tool, ToolOutput], dict[str, Any]]


@dataclass
class RepairContext:
    """What operators may touch: the ledger, the tools, and deterministic randomness."""

    ledger: Ledger
    tools: Mapping[str, Tool]
    record: Recorder | None = None  # applies the pipeline's σ policy; default: ledger.record
    compat: Mapping[ToolKind, tuple[ToolKind, ...]] = field(default_factory=lambda: dict(DEFAULT_COMPAT))
    switch_inputs: InputsAdapter | None = None  # inputs for the alternative tool after SWITCH
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    jitter_px: tuple[int, int] = paper.RETRY_JITTER_PX  # App. E.2
    expansion_terms: Sequence[str] = ()  # extra keywords for RETRY of a search (query expansion)
    image_size: tuple[int, int] | None = None  # clip perturbed boxes to the image
    allow_sampling: bool = (
        False  # a model re-ask may be a seeded sampled draw (else: a rephrased instruction)
    )

    def record_output(self, out: ToolOutput) -> list[EvidenceEntry]:
        return self.record(out) if self.record else self.ledger.record(out)

    def tool_for(self, out: ToolOutput) -> Tool:
        try:
            return self.tools[out.tool]
        except KeyError:
            raise LedgerError(
                f"tool {out.tool!r} that produced {out.call_id} is not available for repair"
            ) from None


@dataclass
class OperatorResult:
    operator: OperatorName
    layer: RepairLayer
    targets: list[str] = field(default_factory=list)
    new_entries: list[str] = field(default_factory=list)
    tool_output: ToolOutput | None = None
    tool_calls: int = 0
    answer: str | None = None  # STOP_AND_ANSWER
    abstain: bool = False  # ABSTAIN
    switched_to: str | None = None  # SWITCH
    note: str = ""
    variation: str | None = None  # how the re-invocation's request differs from the original (App. E.2)
    skipped_identical: bool = False  # the re-invocation would have repeated a request: not sent
    error: str | None = None  # the operator itself raised (a bug or an impossible request)


class Operator(ABC):
    name: OperatorName
    layer: RepairLayer

    @abstractmethod  # ``*_, **kwargs``: each operator declares its own keyword arguments
    async def apply(self, ctx: RepairContext, *_: Any, **kwargs: Any) -> OperatorResult: ...

    def _result(self, **kw: Any) -> OperatorResult:
        return OperatorResult(operator=self.name, layer=self.layer, **kw)


OPERATORS: Registry[Operator] = Registry("repair operator")


def _register(cls: type[Operator]) -> type[Operator]:
    OPERATORS.add(cls.name.value, cls())
    return cls


# ----------------------------------------------------------------------------- evidence layer
@_register
class Drop(Operator):
    """DROP(e): ω_e ← DROPPED; no new entry; invalidation propagates to D_e."""

    name, layer = OperatorName.DROP, RepairLayer.EVIDENCE

    async def apply(self, ctx: RepairContext, *, entry_id: str, **_: Any) -> OperatorResult:
        invalidated = ctx.ledger.drop(entry_id)
        return self._result(
            targets=[entry_id], note=f"invalidated claims: {invalidated}" if invalidated else ""
        )


@_register
class Refresh(Operator):
    """REFRESH(e, θ′): e → STALE, re-run its tool with θ′; the result enters via SUPERSEDE(e, e_new)."""

    name, layer = OperatorName.REFRESH, RepairLayer.EVIDENCE

    async def apply(
        self, ctx: RepairContext, *, entry_id: str, inputs: Mapping[str, Any] | None = None, **_: Any
    ) -> OperatorResult:
        entry = ctx.ledger.get(entry_id)
        origin = ctx.ledger.tool_output(entry.tool_call_id)
        if origin is None:
            raise LedgerError(f"entry {entry_id} has no recorded tool output to refresh")
        tool = ctx.tool_for(origin)
        new_inputs = dict(inputs) if inputs is not None else perturb_inputs(origin, tool, ctx)
        ctx.ledger.retire(entry_id, "refresh")
        out = await tool.ainvoke(**new_inputs)
        created = ctx.record_output(out)
        if created:
            ctx.ledger.supersede(entry_id, _closest(entry, created).id)
        return self._result(
            targets=[entry_id],
            new_entries=[e.id for e in created],
            tool_output=out,
            tool_calls=1,
            variation=describe_variation(origin.inputs, new_inputs),
        )


# ----------------------------------------------------------------------------- action layer
@_register
class Retry(Operator):
    """RETRY(a, θ′): re-invoke a failed action with modified arguments (bbox ±15–40 px / query expansion)."""

    name, layer = OperatorName.RETRY, RepairLayer.ACTION

    async def apply(
        self, ctx: RepairContext, *, call_id: str, inputs: Mapping[str, Any] | None = None, **_: Any
    ) -> OperatorResult:
        origin = ctx.ledger.tool_output(call_id)
        if origin is None:
            raise LedgerError(f"unknown tool call {call_id!r}")
        tool = ctx.tool_for(origin)
        new_inputs = dict(inputs) if inputs is not None else perturb_inputs(origin, tool, ctx)
        out = await tool.ainvoke(**new_inputs)
        created = ctx.record_output(out)
        return self._result(
            targets=[call_id],
            new_entries=[e.id for e in created],
            tool_output=out,
            tool_calls=1,
            variation=describe_variation(origin.inputs, new_inputs),
        )


@_register
class Switch(Operator):
    """SWITCH(a → a′): choose a compatible alternative tool (M_compat). Adds no entry by itself."""

    name, layer = OperatorName.SWITCH, RepairLayer.ACTION

    async def apply(self, ctx: RepairContext, *, call_id: str, **_: Any) -> OperatorResult:
        origin = ctx.ledger.tool_output(call_id)
        if origin is None:
            raise LedgerError(f"unknown tool call {call_id!r}")
        for kind in ctx.compat.get(origin.kind, ()):
            for name, tool in ctx.tools.items():
                if tool.kind is kind and name != origin.tool:
                    return self._result(targets=[call_id], switched_to=name, note=f"{origin.tool} → {name}")
        return self._result(targets=[call_id], note=f"no compatible alternative for {origin.tool}")


@_register
class Acquire(Operator):
    """ACQUIRE(q_spec): call a tool to close a specific grounding gap of a decision claim."""

    name, layer = OperatorName.ACQUIRE, RepairLayer.ACTION

    async def apply(
        self, ctx: RepairContext, *, tool: str, inputs: Mapping[str, Any], target: str = "", **_: Any
    ) -> OperatorResult:
        if tool not in ctx.tools:
            raise LedgerError(f"ACQUIRE: tool {tool!r} is not available")
        out = await ctx.tools[tool].ainvoke(**dict(inputs))
        created = ctx.record_output(out)
        rephrase = int(inputs.get("rephrase", 0) or 0)
        return self._result(
            targets=[target] if target else [],
            new_entries=[e.id for e in created],
            tool_output=out,
            tool_calls=1,
            variation=f"rephrase={rephrase}" if rephrase else None,
        )


# ----------------------------------------------------------------------------- trajectory layer
@_register
class StopAndAnswer(Operator):
    """STOP_AND_ANSWER(e*): terminate with ŷ = f_e*, e* = argmax_{e ∈ L^A} σ_e. No ledger change.

    In the registry for the paper's operator set (Eq. 24); Π (Eq. 25) selects it for no trigger,
    so the pipeline never applies it (docs/architecture.md)."""

    name, layer = OperatorName.STOP_AND_ANSWER, RepairLayer.TRAJECTORY

    async def apply(
        self, ctx: RepairContext, *, candidates: Sequence[str] | None = None, **_: Any
    ) -> OperatorResult:
        pool = [ctx.ledger.get(c) for c in candidates] if candidates else ctx.ledger.active()
        pool = [e for e in pool if e.active]
        if not pool:
            return self._result(abstain=True, note="no active evidence to answer from")
        best = max(pool, key=lambda e: (e.sigma, -e.t))
        return self._result(targets=[best.id], answer=best.fact)


@_register
class Abstain(Operator):
    """ABSTAIN: ŷ = ⊥ when evidence remains insufficient after the budget. No ledger change."""

    name, layer = OperatorName.ABSTAIN, RepairLayer.TRAJECTORY

    async def apply(self, ctx: RepairContext, **_: Any) -> OperatorResult:
        return self._result(abstain=True)


# ----------------------------------------------------------------------------- helpers
_BOX_KEYS = ("bbox", "region")


def perturb_inputs(origin: ToolOutput, tool: Tool, ctx: RepairContext) -> dict[str, Any]:
    """θ′ = θ + Δθ (App. E.2), touching only inputs the tool declares.

    A box input (``bbox``/``region``) is shifted edge-wise by ±[15, 40] px; a crop chosen by zone
    (no box in θ) is re-cut around the region it returned, shifted the same way; a search query is
    expanded with question keywords; a model-backed tool (observation, reading, VQA, plan) is
    re-asked with the next ``rephrase`` of its instruction — or, only where the backend may sample
    (``allow_sampling``), as the next ``attempt``'s seeded draw. Everything else is passed through
    unchanged: a tool with none of these inputs gets the same request, which the model door then
    refuses to repeat (the engine fails over to the next operator).
    """
    new = dict(origin.inputs)
    for key in _BOX_KEYS:
        if not tool.accepts(key):
            continue
        box = new.get(key)
        if box is None and key == "bbox" and origin.kind is ToolKind.CROP:
            box = next((o.bbox for o in origin.observations if o.bbox is not None), None)
        if box is not None:  # the perturbed box keeps the form the tool was given it in
            moved = perturb_bbox(box if isinstance(box, BBox) else BBox.from_list(box), ctx)
            new[key] = moved if isinstance(box, BBox) else moved.as_list()
    if tool.accepts("query") and isinstance(new.get("query"), str) and ctx.expansion_terms:
        extra = [t for t in ctx.expansion_terms if t.lower() not in new["query"].lower()]
        new["query"] = " ".join([new["query"], *extra[:3]])
    if tool.input_names() is None:
        return new
    if ctx.allow_sampling and tool.accepts("sampled") and tool.accepts("attempt"):
        new["attempt"] = int(new.get("attempt", 0)) + 1
        new["sampled"] = True
    elif tool.accepts("rephrase"):  # the same greedy request would return the same reply
        new["rephrase"] = int(new.get("rephrase", 0) or 0) + 1
    return new


def describe_variation(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """Δθ in words, for the repair event: which inputs changed and how (None: nothing changed)."""
    parts = []
    for key in _BOX_KEYS:
        if new.get(key) is not None and new.get(key) != old.get(key):
            box = new[key] if isinstance(new[key], BBox) else BBox.from_list(list(new[key]))
            parts.append(f"{key}→[{', '.join(f'{v:.0f}' for v in box.as_list())}]")
    if new.get("query") != old.get("query") and isinstance(new.get("query"), str):
        parts.append(f"query+={new['query'][len(str(old.get('query') or '')) :].strip()!r}")
    if (
        new.get("sampled")
        and not old.get("sampled")
        or new.get("attempt") != old.get("attempt")
        and new.get("sampled")
    ):
        parts.append(f"sampled draw attempt={new.get('attempt')}")
    if new.get("rephrase", 0) != old.get("rephrase", 0):
        parts.append(f"rephrase={new.get('rephrase')}")
    return "; ".join(parts) or None


def perturb_bbox(box: BBox, ctx: RepairContext) -> BBox:
    lo, hi = ctx.jitter_px

    def d() -> float:
        return ctx.rng.choice((-1, 1)) * ctx.rng.uniform(lo, hi)

    xs = sorted((box.x0 + d(), box.x1 + d()))
    ys = sorted((box.y0 + d(), box.y1 + d()))
    moved = BBox(xs[0], ys[0], xs[1], ys[1])
    if ctx.image_size:
        moved = moved.clip(*ctx.image_size)
    return moved


def _closest(old: EvidenceEntry, created: list[EvidenceEntry]) -> EvidenceEntry:
    if old.bbox is None:
        return created[0]
    return max(created, key=lambda e: e.bbox.iou(old.bbox) if e.bbox else -1.0)  # type: ignore[arg-type]
