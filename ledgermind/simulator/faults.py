"""The simulator's fault model: configured rates, seeded draws, and the record of what was injected.

Why a separate module: the rates are the experiment's independent variable. Keeping them in one
validated record (every rate a ``backend.`` config value) and drawing them from one seeded source
is what lets a run say "this many phantom entities were injected, this many were caught".
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import asdict, dataclass, fields, replace
from enum import Enum
from typing import Any

from ledgermind.errors import ConfigError


class Fault(str, Enum):
    """The injected failure modes (paper §1 F2-F4, T1 parsing failures)."""

    PHANTOM = "phantom"  # F2: an entity in none of the cited entries, then a distractor
    RELATION = "relation"  # F2 that NER cannot see: an entity that IS in the evidence, in a wrong relation
    MISREAD = "misread"  # a numeric reading off by misread_min..misread_max (crop, observation, decision)
    MISPERCEIVE = "misperceive"  # a focused look reports the opposite of what the image shows
    FLIP = "flip"  # F3: a chain (or a short answer) talks itself out of a correct answer
    AMPLIFY = "amplify"  # F4: free-form reflection adds a claim supported by nothing
    REFLECT_BREAK = "reflect_break"  # F4: free-form reflection changes a correct answer to a wrong one
    REFLECT_FIX = "reflect_fix"  # not a fault: reflection changes a wrong answer to the right one (counted)
    FORMAT = "format"  # the reply breaks the requested format (T1)
    EMPTY = "empty"  # the reply is empty (T1)


# Rates that only subtract from a perfect model (``off`` zeroes them). ``reflection_fix_rate`` is
# among them: a perfect model's reflection has nothing to fix, and it never changes its answer.
FAULT_RATES = (
    "phantom_rate", "short_phantom_rate", "relation_rate", "short_relation_rate", "misread_rate",
    "observe_misread_rate", "decide_misread_rate", "misperceive_rate", "overthink_flip_rate", "short_flip_rate",
    "reflection_amplify_rate", "reflection_break_rate", "reflection_fix_rate", "format_error_rate", "empty_rate",
)  # fmt: skip
UNBOUNDED = ("warning_effect", "follow_sharpness")  # not probabilities: any value >= 0


@dataclass(frozen=True)
class FaultRates:
    """Behaviour of the simulated model; defaults are ours (documented in README, simulator section)."""

    p_correct: float = 0.7  # a final answer is gold with this probability ...
    grounding_bonus: float = 0.15  # ... raised by this when the prompt's evidence holds the gold
    phantom_rate: float = 0.2  # reasoning/decision reply names an entity in none of its citations
    short_phantom_rate: float = 0.1  # the same in a one-line answer (DIRECT, concise, fallback)
    relation_rate: float = 0.1  # reasoning/decision reply ties an in-evidence entity to a wrong answer
    short_relation_rate: float = 0.05  # the same in a one-line answer
    warning_effect: float = 1.0  # phantom-rate multiplier under a warning / P_oc restriction (1: none)
    misread_rate: float = 0.25  # a context-free reading of a crop is off by misread_min..misread_max
    observe_misread_rate: float = 0.1  # each number an observation of the full image transcribes
    decide_misread_rate: float = 0.1  # a numeric final answer re-read from the image in the decision
    misperceive_rate: float = 0.2  # a look focused on a named answer reports the opposite of the truth
    misread_min: float = 0.2
    misread_max: float = 0.6
    overthink_flip_rate: float = 0.15  # long chain flips a correct answer on a knowledge question
    short_flip_rate: float = 0.05  # a one-line answer (DIRECT, concise) flips a correct knowledge answer
    reflection_amplify_rate: float = 0.5  # free-form reflection adds an unsupported claim
    reflection_break_rate: float = 0.1  # free-form reflection turns a correct answer wrong
    reflection_fix_rate: float = 0.1  # free-form reflection turns a wrong answer right
    follow_sharpness: float = 2.0  # a decision echoes a shown judgment with probability confidence**this
    format_error_rate: float = 0.03
    empty_rate: float = 0.02

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ConfigError(f"backend.{f.name} must be a number, got {v!r}")
            if f.name not in UNBOUNDED and not 0.0 <= float(v) <= 1.0:
                raise ConfigError(f"backend.{f.name} must be in [0, 1], got {v}")
        for name in UNBOUNDED:
            if getattr(self, name) < 0:
                raise ConfigError(f"backend.{name} must be >= 0, got {getattr(self, name)}")
        if self.misread_min > self.misread_max:
            raise ConfigError("backend.misread_min must not exceed backend.misread_max")

    def off(self) -> FaultRates:
        """A perfect model: every fault rate 0 and ``p_correct`` 1 (``backend.faults=off``)."""
        return replace(self, p_correct=1.0, **{name: 0.0 for name in FAULT_RATES})

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


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


def draw_rng(seed: int, item_key: str, request_key: str) -> random.Random:
    """One RNG per request, seeded from the run seed (which instance of the simulated model this
    is), the item and the request key. A byte-identical request gets the byte-identical reply, as
    from a real model at temperature 0 (or sampling with the same seed): re-asking the same thing
    gives no second opinion. The key holds the sampling parameters, so only a changed request,
    temperature or sampling seed draws anew."""
    h = hashlib.sha256(f"{seed}\x1f{item_key}\x1f{request_key}".encode()).hexdigest()
    return random.Random(int(h[:16], 16))


@dataclass
class Injected:
    """One injected fault and what identifies it later in the trajectory (entity, value, claim text)."""

    kind: Fault
    detail: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.value, **self.detail}
