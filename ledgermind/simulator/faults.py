"""The simulator's behaviour parameters, seeded draws, and the record of what was injected.

Why a separate module: the parameters are the experiment's independent variables. Keeping them in
one validated record (every one a ``backend.`` config value, recorded in the run config and so in
the run identity) and drawing from seeded sources is what lets a run say "this many phantom
entities were injected, this many were neutralised".

Two rules shape the parameters, so that the instrument cannot build in the effect it measures:
* **Nothing knows the answer.** Beliefs come from a real model's recorded answers (``beliefs.py``);
  a fault is drawn independently of whether the belief is right, and changes the answer only
  through one explicit coupling parameter (``fault_coupling``, default 0: how often a real
  hallucination comes with a changed answer has not been measured, so the instrument treats it as
  unknown and ``scripts/sim_sweep.py`` draws Δ against it).
* **Format, not wording, and no rates per path or ablation.** One phantom rate, one relation rate,
  one follow rate for every reply that states an answer, whichever template or variant asked.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import Any

from ledgermind.errors import ConfigError
from ledgermind.records import REST, Record


class Fault(str, Enum):
    """The injected failure modes (paper §1 F2-F4, T1 parsing failures)."""

    PHANTOM = "phantom"  # F2: an entity in none of the cited entries (free-form reflection's too)
    RELATION = "relation"  # F2 that NER cannot see: an entity that IS in the evidence, in a wrong relation
    MISREAD = "misread"  # a perceived number off by more than one graduation (continuous noise) / a mistranscribed digit
    SUGGESTED = "suggested"  # a focused look reports seeing the option the request names, against the belief
    FORMAT = "format"  # the reply breaks the requested format (T1)
    EMPTY = "empty"  # the reply is empty (T1)


# Probabilities that only subtract from a perfect model (``off`` zeroes them).
FAULT_RATES = (
    "phantom_rate",
    "relation_rate",
    "observe_misread_rate",
    "look_agree",
    "gross_error_rate",
    "format_error_rate",
    "empty_rate",
)
PROBABILITIES = FAULT_RATES + (
    "p_correct",
    "rephrase_sensitivity",
    "evidence_pull",
    "follow_rate",
    "fault_coupling",
)
BELIEF_SOURCES = ("recorded", "key")


@dataclass(frozen=True)
class FaultRates:
    """Behaviour of the simulated model; defaults are ours (README, "Simulated backbone", says
    where each comes from)."""

    # beliefs (beliefs.py)
    belief_smoothing: float = 0.5  # pseudo-count spread over all options on top of the recorded answers
    rephrase_sensitivity: float = 0.25  # a changed request re-draws the whole reply with this probability
    evidence_pull: float = 0.15  # evidence stating an option pulls the answer to it (whichever option)
    follow_rate: float = 0.8  # a reply echoes the latest judgment shown in its prompt (never reads σ)
    p_correct: float = 0.7  # only for the key-based fallback (belief_source=key)
    # faults, independent of correctness
    phantom_rate: float = 0.15  # an answer-stating reply names an entity in none of its evidence
    relation_rate: float = 0.08  # ... ties a name that IS in the evidence to its answer ("as X described")
    fault_coupling: float = 0.0  # P(a phantom/relation fault comes with a changed answer): unknown, default 0
    observe_misread_rate: float = 0.1  # each number an observation transcribes is mistranscribed
    observe_misread_scale: float = 0.3  # relative size of a mistranscription (Laplace scale, both signs)
    look_agree: float = 0.2  # a focused look reports the named option although the belief is another
    # perception of measurable scenes (gauges), continuous on both sides of any tolerance
    read_noise: float = 0.6  # reading error scale in graduations when scale labels are visible
    unanchored_noise: float = 0.15  # ... as a share of the dial's span when no scale label is visible
    zoom_precision: float = (
        1.0  # a zoomed crop is read this many times more precisely (1: no built-in benefit)
    )
    gross_error_rate: float = 0.05  # a reading is a guess anywhere on the dial
    # T1
    format_error_rate: float = 0.03
    empty_rate: float = 0.02

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ConfigError(f"backend.{f.name} must be a number, got {v!r}")
            if f.name in PROBABILITIES and not 0.0 <= float(v) <= 1.0:
                raise ConfigError(f"backend.{f.name} must be in [0, 1], got {v}")
            if float(v) < 0:
                raise ConfigError(f"backend.{f.name} must be >= 0, got {v}")
        if self.zoom_precision <= 0:
            raise ConfigError("backend.zoom_precision must be > 0")

    def off(self) -> FaultRates:
        """A perfect model: every fault rate 0, no perception noise, ``p_correct`` 1 (``backend.faults=off``)."""
        return replace(
            self,
            p_correct=1.0,
            read_noise=0.0,
            unanchored_noise=0.0,
            observe_misread_scale=0.0,
            **{name: 0.0 for name in FAULT_RATES},
        )


def rates_from_config(faults: str | bool, **rates: Any) -> FaultRates:
    """``faults``: ``on`` (the configured rates) or ``off`` (a perfect model). YAML may turn off into False."""
    key = {True: "on", False: "off"}.get(faults, faults) if isinstance(faults, bool) else str(faults).lower()
    if key not in {"on", "off"}:
        raise ConfigError(f"backend.faults must be 'on' or 'off', got {faults!r}")
    known = {f.name for f in fields(FaultRates)}
    if unknown := sorted(set(rates) - known):
        raise ConfigError(f"unknown simulator rate(s) {unknown}; known: {sorted(known)}")
    base = FaultRates(**{k: float(v) for k, v in rates.items()})
    return base.off() if key == "off" else base


def seeded(*parts: object) -> random.Random:
    """One RNG from the run seed (which instance of the simulated model this is) and the given parts."""
    h = hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()
    return random.Random(int(h[:16], 16))


@dataclass
class Injected(Record):
    """One injected fault and what identifies it later in the trajectory (entity, value, claim text)."""

    kind: Fault
    detail: dict[str, Any] = field(metadata=REST)
