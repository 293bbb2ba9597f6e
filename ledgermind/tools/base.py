"""Tools and their outputs: the only door through which content enters the ledger.

DESIGN.md §3 / paper invariant I1: every evidence entry is the image of a tool return under the
deterministic mapping M. We make that structural: a ``ToolOutput`` can only be built by
``Tool.ainvoke`` (it carries a private seal that ``__post_init__`` checks), and
``Ledger.record`` accepts nothing but sealed ``ToolOutput`` objects. Tools never raise on
failure; they return an output with ``error`` set, which the verifier sees as trigger T1, and
``failure`` saying why: a disk, engine or input failure makes the whole item an error (the
harness decides, experiment/failures.py), only an evidence gap is the method's to repair.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import math
import time
import weakref
from abc import ABC
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

from ledgermind.errors import FailureKind, ProvenanceError, classify_failure
from ledgermind.records import OMIT_NONE, SKIP, Record, codec


class ToolKind(str, Enum):
    """What a tool does; selects the template mapping M (paper App. B.1)."""

    OCR = "ocr"  # recognised text + detection bbox → PERCEPTION
    CROP = "crop"  # crop metadata + crop region → PERCEPTION
    DETECT = "detect"  # detected object label + bbox → PERCEPTION
    OBSERVE = "observe"  # MLLM observation-claim extraction (Alg. 1 line 3) → PERCEPTION
    READ = "read"  # MLLM reading of a crop (Dual-Read, App. D.5) → PERCEPTION
    SEARCH = "search"  # snippet + URL → RETRIEVAL
    VQA = "vqa"  # MLLM answer → DERIVATION
    PLAN = "plan"  # MLLM task plan from the question alone (Alg. 1 line 2) → DERIVATION


@dataclass(frozen=True)
class BBox:
    """Axis-aligned box in original-image pixel coordinates (x0, y0) top-left, (x1, y1) bottom-right."""

    x0: float
    y0: float
    x1: float
    y1: float

    def __post_init__(self) -> None:
        vals = (self.x0, self.y0, self.x1, self.y1)
        if not all(math.isfinite(v) for v in vals):
            raise ValueError(f"non-finite bbox {vals}")
        if self.x1 < self.x0 or self.y1 < self.y0:
            raise ValueError(f"inverted bbox {vals}")

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def area(self) -> float:
        return self.width * self.height

    @property
    def center(self) -> tuple[float, float]:
        return ((self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2)

    def iou(self, other: BBox) -> float:
        ix = max(0.0, min(self.x1, other.x1) - max(self.x0, other.x0))
        iy = max(0.0, min(self.y1, other.y1) - max(self.y0, other.y0))
        inter = ix * iy
        union = self.area + other.area - inter
        return inter / union if union > 0 else 0.0

    def clip(self, width: float, height: float) -> BBox:
        x0, x1 = sorted((min(max(self.x0, 0.0), width), min(max(self.x1, 0.0), width)))
        y0, y1 = sorted((min(max(self.y0, 0.0), height), min(max(self.y1, 0.0), height)))
        return BBox(x0, y0, x1, y1)

    def as_list(self) -> list[float]:
        return [self.x0, self.y0, self.x1, self.y1]

    @classmethod
    def from_list(cls, v: list[float] | tuple[float, ...]) -> BBox:
        return cls(*map(float, v))


BBOX = codec(lambda b: b.as_list() if b else None, lambda v: BBox.from_list(v) if v else None)
"""Field metadata: a box is written as ``[x0, y0, x1, y1]``."""


@dataclass(frozen=True)
class Observation(Record):
    """One atomic unit of a tool return (an OCR line, a search hit, a crop, a model answer)."""

    text: str
    bbox: BBox | None = field(default=None, metadata=BBOX)
    url: str | None = None
    score: float | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


# Errors that mean "the code is wrong", not "the tool could not do it on this input" (T1).
PROGRAMMING_ERRORS = (TypeError, AttributeError, NameError, AssertionError, NotImplementedError)

_SEAL = object()  # private: only Tool.ainvoke and ToolOutput.from_dict (audit replay) hold it
_call_ids = itertools.count(1)  # next() on a count is atomic under the GIL: ids are unique across threads

# Outputs issued by ``Tool.ainvoke`` in this process, by object identity. Being constructible is
# not enough to enter a ledger: a reloaded output (``from_dict``), a copy or a
# ``dataclasses.replace`` of a live one carries the same fields but is not in this registry, so
# text that did not come out of a tool call in this run cannot become evidence (Proposition 1).
_LIVE: weakref.WeakValueDictionary[int, ToolOutput] = weakref.WeakValueDictionary()


def _failure_of(value: Any) -> FailureKind | None:
    """A recorded failure class; an unknown or absent one (older records) is None."""
    try:
        return FailureKind(value) if value is not None else None
    except ValueError:
        return None


def _jsonable(v: Any) -> Any:
    """Best-effort JSON view of tool inputs (images become a short description)."""
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, BBox):
        return v.as_list()
    if isinstance(v, Enum):
        return v.value
    size = getattr(v, "size", None)
    if hasattr(v, "mode") and size is not None:  # PIL image
        return f"<image {size[0]}x{size[1]} {v.mode}>"
    return repr(v)[:200]


@dataclass(frozen=True)
class ToolOutput(Record):
    """A sealed tool return. Construct it only through ``Tool.ainvoke``/``Tool.invoke``.

    ``artifacts`` holds non-serialisable by-products (e.g. the zoomed crop image) that later
    tools may consume; they are not part of the audit trail.
    """

    call_id: str
    tool: str
    kind: ToolKind
    inputs: Mapping[str, Any] = field(metadata=codec(_jsonable, dict))
    observations: tuple[Observation, ...]
    error: str | None
    latency_s: float
    created_at: float
    artifacts: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False, metadata=SKIP)
    # why ``error`` happened (``errors.classify_failure``): only EVIDENCE is a tool anomaly the
    # method repairs; the harness turns the others into an item error (experiment/failures.py)
    failure: FailureKind | None = field(
        default=None, metadata=OMIT_NONE | codec(lambda kind: kind, _failure_of)
    )
    _seal: object = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self._seal is not _SEAL:
            raise ProvenanceError(
                "ToolOutput objects can only be created by invoking a Tool (invariant I1: no free-text evidence)"
            )

    @property
    def live(self) -> bool:
        """True only for the very object a tool invocation of this process returned.

        Outputs reloaded from an audit trail are for reading and auditing; ``Ledger.record``
        refuses them, whatever their fields say.
        """
        return _LIVE.get(id(self)) is self

    @property
    def ok(self) -> bool:
        """T1 (Eq. 16) is the negation: an empty observation set or an error."""
        return self.error is None and len(self.observations) > 0

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], **extra: Any) -> ToolOutput:
        """Reload a recorded output from an audit trail, for reading only.

        The result is not ``live``: it can sit in a reloaded ledger's audit view but can never be
        recorded as new evidence.
        """
        return super().from_dict(data, _seal=_SEAL, **extra)


class Tool(ABC):
    """Base class of every tool. Subclasses implement ``_run`` (sync) or ``_arun`` (async).

    ``ainvoke`` is the single constructor of ``ToolOutput``: it times the call, catches every
    exception (a failing tool must not crash the trajectory: it becomes trigger T1) and seals
    the result.
    """

    name: ClassVar[str]
    kind: ClassVar[ToolKind]

    @classmethod
    def input_names(cls) -> frozenset[str] | None:
        """The inputs this tool declares (its ``_arun``/``_run`` parameters); None = it takes any (**kwargs).

        Repair operators may change only inputs a tool declares (App. E.2: the box, the query), so
        a RETRY never sends an argument the real tool would reject.
        """
        fn = cls._arun if cls._arun is not Tool._arun else cls._run
        params = list(inspect.signature(fn).parameters.values())[1:]
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            return None
        return frozenset(p.name for p in params)

    def accepts(self, name: str) -> bool:
        names = self.input_names()
        return names is None or name in names

    # ``*_: Any, **inputs: Any``: each tool declares its own named inputs (``input_names``); a
    # type checker reads this signature as "any override", which is what a subclass gives.
    def _run(self, *_: Any, **inputs: Any) -> list[Observation] | tuple[list[Observation], dict[str, Any]]:
        raise NotImplementedError

    async def _arun(
        self, *_: Any, **inputs: Any
    ) -> list[Observation] | tuple[list[Observation], dict[str, Any]]:
        return await asyncio.to_thread(self._run, **inputs)

    async def ainvoke(self, **inputs: Any) -> ToolOutput:
        t0 = time.perf_counter()
        error: str | None = None
        failure: FailureKind | None = None
        observations: list[Observation] = []
        artifacts: dict[str, Any] = {}
        try:
            result = await self._arun(**inputs)
            observations, artifacts = result if isinstance(result, tuple) else (result, {})
            observations, artifacts = list(observations), dict(artifacts)  # a generator fails here, as T1
        except PROGRAMMING_ERRORS:
            raise  # a bug in the tool or its caller is not a tool anomaly: it must surface
        except Exception as exc:
            error = f"error: {type(exc).__name__}: {exc}"
            failure = classify_failure(exc)
        output = ToolOutput(
            call_id=f"{self.name}#{next(_call_ids)}",
            tool=self.name,
            kind=self.kind,
            inputs=dict(inputs),
            observations=tuple(observations),
            error=error,
            latency_s=time.perf_counter() - t0,
            created_at=time.time(),
            artifacts=artifacts,
            failure=failure,
            _seal=_SEAL,
        )
        _LIVE[id(output)] = output
        return output

    def invoke(self, **inputs: Any) -> ToolOutput:
        """Synchronous convenience wrapper for scripts and tests (not for use inside a loop)."""
        return asyncio.run(self.ainvoke(**inputs))
