"""The trajectory τ of one question: answer, ledger, claims, calls, triggers, repairs, timing.

Everything a user needs to audit a run lives here and serialises to JSON that loads back
identically (``Trajectory.from_dict(t.to_dict()).to_dict() == t.to_dict()``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

from ledgermind.claims import Claim, ClaimType
from ledgermind.ledger import Ledger


class PathKind(str, Enum):
    DIRECT = "DIRECT"
    FULLPIPE = "FULLPIPE"
    BASELINE = "BASELINE"  # native chain-of-thought under the same tool budget
    NO_LEDGER = "NO_LEDGER"  # ablation: free-form transcript


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


class RepairLayer(str, Enum):
    EVIDENCE = "EVIDENCE"
    ACTION = "ACTION"
    TRAJECTORY = "TRAJECTORY"


@dataclass
class ModelCall:
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
    meta: dict[str, Any] = field(default_factory=dict)  # the backend's reply metadata (e.g. injected faults)


@dataclass
class RepairEvent:
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

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["trigger"] = self.trigger.value
        d["operator"] = self.operator.value if self.operator else None
        d["layer"] = self.layer.value if self.layer else None
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RepairEvent:
        return cls(
            trigger=Trigger(d["trigger"]),
            operator=OperatorName(d["operator"]) if d.get("operator") else None,
            layer=RepairLayer(d["layer"]) if d.get("layer") else None,
            targets=list(d.get("targets", [])),
            new_entries=list(d.get("new_entries", [])),
            cost=float(d.get("cost", 0.0)),
            grounded_after=d.get("grounded_after"),
            note=d.get("note", ""),
            step=int(d.get("step", 0)),
        )


@dataclass
class Trajectory:
    item_id: str
    question: str
    path: PathKind
    ledger: Ledger = field(default_factory=Ledger)
    answer: str | None = None  # ŷ after normalisation; None means ⊥ (abstained or failed)
    raw_answer: str = ""  # the decision text as the model produced it
    abstained: bool = False
    model_calls: list[ModelCall] = field(default_factory=list)
    events: list[RepairEvent] = field(default_factory=list)
    transcript: list[dict[str, str]] = field(default_factory=list)  # no_ledger / baseline text trace
    profile: dict[str, Any] = field(default_factory=dict)  # dispatcher decision and question types
    flags: dict[str, Any] = field(default_factory=dict)  # ablation flags in effect
    timings: dict[str, float] = field(default_factory=dict)  # total_s, model_s, tool_s, own_s
    error: str | None = None  # an item-level failure (recorded, the run goes on)
    notes: list[str] = field(default_factory=list)  # defense lines applied, warnings injected

    # ------------------------------------------------------------------ views
    @property
    def claims(self) -> list[Claim]:
        return self.ledger.claims()

    @property
    def decision_claims(self) -> list[Claim]:
        return self.ledger.claims(ClaimType.DC)

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

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "question": self.question,
            "path": self.path.value,
            "answer": self.answer,
            "raw_answer": self.raw_answer,
            "abstained": self.abstained,
            "ledger": self.ledger.to_dict(),
            "model_calls": [asdict(c) for c in self.model_calls],
            "events": [e.to_dict() for e in self.events],
            "transcript": self.transcript,
            "profile": self.profile,
            "flags": self.flags,
            "timings": self.timings,
            "error": self.error,
            "notes": self.notes,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Trajectory:
        return cls(
            item_id=d["item_id"],
            question=d["question"],
            path=PathKind(d["path"]),
            ledger=Ledger.from_dict(d["ledger"]),
            answer=d.get("answer"),
            raw_answer=d.get("raw_answer", ""),
            abstained=bool(d.get("abstained", False)),
            model_calls=[ModelCall(**c) for c in d.get("model_calls", [])],
            events=[RepairEvent.from_dict(e) for e in d.get("events", [])],
            transcript=list(d.get("transcript", [])),
            profile=dict(d.get("profile") or {}),
            flags=dict(d.get("flags") or {}),
            timings=dict(d.get("timings") or {}),
            error=d.get("error"),
            notes=list(d.get("notes", [])),
        )
