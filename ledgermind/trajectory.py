"""The trajectory τ of one question: answer, ledger, claims, calls, triggers, repairs, timing.

Everything a user needs to audit a run lives here and serialises to JSON that loads back
identically (``Trajectory.from_dict(t.to_dict()).to_dict() == t.to_dict()``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ledgermind.claims import Claim
from ledgermind.ledger import Ledger
from ledgermind.records import Record


class PathKind(str, Enum):
    DIRECT = "DIRECT"
    FULLPIPE = "FULLPIPE"
    BASELINE = "BASELINE"  # native chain-of-thought under the same tool budget
    NO_LEDGER = "NO_LEDGER"  # ablation: free-form transcript
    OFFICIAL = "OFFICIAL"  # the benchmark's own protocol (pipeline/official.py): one call, no tools


class Trigger(str, Enum):
    """Verifier events T1–T6 (App. E.1, Eqs. 16–21)."""

    T1 = "T1_TOOL_ANOMALY"
    T2 = "T2_STALE_REFERENCE"
    T3 = "T3_CONFLICT"
    T4 = "T4_CONFIDENCE_DROP"
    T5 = "T5_UNSUPPORTED_DECISION"
    T6 = "T6_PHANTOM_GROUNDING"


class OperatorName(str, Enum):
    """The seven typed repair operators (App. E.2) plus the ablation's free-form reflection."""

    DROP = "DROP"
    REFRESH = "REFRESH"
    RETRY = "RETRY"
    SWITCH = "SWITCH"
    ACQUIRE = "ACQUIRE"
    STOP_AND_ANSWER = "STOP_AND_ANSWER"
    ABSTAIN = "ABSTAIN"
    FREEFORM_REFLECTION = "FREEFORM_REFLECTION"

    @property
    def short(self) -> str:
        """Its column label in census tables (the name itself unless abbreviated below)."""
        return _SHORT_OPERATOR.get(self.value, self.value)


_SHORT_OPERATOR = {"REFRESH": "REFR", "ACQUIRE": "ACQ", "STOP_AND_ANSWER": "S&A", "ABSTAIN": "ABST"}


class MarkKind(str, Enum):
    """Mechanisms that leave no model call, tool call or claim of their own (typed, for the census)."""

    DUAL_READ_AGREE = "DUAL_READ_AGREE"  # Δv ≤ 0.15 (App. D.5)
    DUAL_READ_DISAGREE = "DUAL_READ_DISAGREE"  # Δv > 0.15 or a reading missing
    # a disagreement got a third reading, closest to Num(P_oc) adopted
    DUAL_READ_ESCALATED = "DUAL_READ_ESCALATED"
    T5_NO_SUPPORT = "T5_NO_SUPPORT"  # T5 fired and no ACTIVE entry states any option / the answer
    T5_PERCEPTION_SUPPORT = "T5_PERCEPTION_SUPPORT"  # T5 fired; only PERCEPTION entries could state one
    T5_RETRIEVAL_SUPPORT = "T5_RETRIEVAL_SUPPORT"  # T5 fired; a RETRIEVAL entry could state one
    SEARCH_SKIPPED_NO_PROVIDER = "SEARCH_SKIPPED_NO_PROVIDER"  # knowledge question, no search tool
    HYPOTHESIS_VERIFICATION = "HYPOTHESIS_VERIFICATION"  # Alg. 1 lines 35–44 ran
    ENTITY_RECHECK = "ENTITY_RECHECK"  # Alg. 2 lines 2–3
    NUMERIC_SNAP = "NUMERIC_SNAP"  # Alg. 2 lines 5–6
    VISUAL_FALLBACK = "VISUAL_FALLBACK"  # Alg. 2 lines 8–9
    WARNING_INJECTED = "WARNING_INJECTED"  # T6 warning reached a later prompt


@dataclass
class Mark(Record):
    """One typed record that a mechanism ran (the census counts these; ``detail`` is for humans)."""

    kind: MarkKind
    detail: str = ""


class RepairLayer(str, Enum):
    EVIDENCE = "EVIDENCE"
    ACTION = "ACTION"
    TRAJECTORY = "TRAJECTORY"


@dataclass
class ModelCall(Record):
    stage: str
    latency_s: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    backend: str = ""
    model: str = ""
    cached: bool = False
    reply: str = ""
    error: str | None = None
    step: int = 0
    # hash of the full request (the response-cache key): equal keys = identical requests
    request_key: str = ""
    meta: dict[str, Any] = field(default_factory=dict)  # the backend's Reply.meta
    # Provenance of the request and the reply: never parsed, grounded or re-sent.
    reasoning: str = ""  # a reasoning model's thinking, split from ``reply`` (backends/reasoning.py)
    finish_reason: str = "stop"
    truncated: bool = False  # stopped at the token limit or inside a think block
    image_pixels: list[int] = field(default_factory=list)  # width*height of each image as sent
    # The logged sample: the messages sent, text verbatim, images as {sha256, width, height}
    # (backends/sample_log.py). Empty in trajectories written before it existed.
    messages: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class RepairEvent(Record):
    """A fired trigger and what the policy did about it."""

    trigger: Trigger
    operator: OperatorName | None  # None: trigger logged but budget exhausted / no-op
    layer: RepairLayer | None
    targets: list[str] = field(default_factory=list)  # entry / claim / tool-call ids
    new_entries: list[str] = field(default_factory=list)
    cost: float = 0.0
    grounded_after: bool | None = None  # GroundedAfter(r) for the recovery rate RR (Eq. 29)
    note: str = ""
    step: int = 0
    hit: int = 0  # which trigger firing this event answers (1, 2, …; 0 = not recorded)
    error: str | None = None  # the operator itself failed (a bug, not a tool anomaly)
    # call id of the tool invocation the operator made (RETRY/REFRESH/SWITCH/ACQUIRE)
    tool_call: str | None = None
    variation: str | None = None  # how a re-invocation's request differed from the original (App. E.2)
    skipped_identical: bool = False  # the re-invocation would have repeated an earlier request: not sent


@dataclass
class Trajectory(Record):
    item_id: str
    question: str
    path: PathKind
    answer: str | None = None  # ŷ after normalisation; None means ⊥ (abstained or failed)
    raw_answer: str = ""  # the decision text as the model produced it
    abstained: bool = False
    ledger: Ledger = field(default_factory=Ledger)
    model_calls: list[ModelCall] = field(default_factory=list)
    events: list[RepairEvent] = field(default_factory=list)
    transcript: list[dict[str, str]] = field(default_factory=list)  # no_ledger / baseline text trace
    profile: dict[str, Any] = field(default_factory=dict)  # dispatcher decision and question types
    flags: dict[str, Any] = field(default_factory=dict)  # ablation flags in effect
    timings: dict[str, float] = field(default_factory=dict)  # total_s, model_s, tool_s, own_s
    error: str | None = None  # an item-level failure (recorded, the run goes on)
    notes: list[str] = field(default_factory=list)  # defense lines applied, warnings injected
    marks: list[Mark] = field(default_factory=list)  # typed mechanism records (census source)

    def mark(self, kind: MarkKind, detail: str = "") -> None:
        """Record that a mechanism ran, with a human-readable note beside it."""
        self.marks.append(Mark(kind, detail))
        self.notes.append(f"{kind.value.lower()}: {detail}" if detail else kind.value.lower())

    # ------------------------------------------------------------------ views
    @property
    def claims(self) -> list[Claim]:
        return self.ledger.claims()

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        return [o.to_dict() for o in self.ledger.tool_outputs()]

    @property
    def n_model_calls(self) -> int:
        return len(self.model_calls)

    @property
    def n_tool_calls(self) -> int:
        return len(self.ledger.tool_outputs())

    @property
    def tokens(self) -> int:
        return sum(c.prompt_tokens + c.completion_tokens for c in self.model_calls)

    @property
    def steps(self) -> int:
        """|τ|: model calls plus tool calls (used by Step Efficiency, Eq. 31)."""
        return self.n_model_calls + self.n_tool_calls
