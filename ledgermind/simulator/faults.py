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
    MISREAD = "misread"  # a numeric reading off by 20-60 %
    FLIP = "flip"  # F3: a long chain flips a correct answer on a knowledge question
    AMPLIFY = "amplify"  # F4: free-form reflection adds a claim supported by nothing
    FORMAT = "format"  # the reply breaks the requested format (T1)
    EMPTY = "empty"  # the reply is empty (T1)


@dataclass(frozen=True)
class FaultRates:
    """Behaviour of the simulated model; defaults are ours (documented in README, simulator section)."""

    p_correct: float = 0.7  # a final answer is gold with this probability ...
    grounding_bonus: float = 0.15  # ... raised by this when the prompt's evidence holds the gold
    phantom_rate: float = 0.2  # reasoning/decision reply names an entity in none of its citations
    warning_effect: float = 0.3  # multiplier on phantom_rate under a hallucination warning / P_oc restriction
    misread_rate: float = 0.25  # a reading of a number is off by misread_min..misread_max
    misread_min: float = 0.2
    misread_max: float = 0.6
    overthink_flip_rate: float = 0.15  # long chain flips a correct answer on a knowledge question
    reflection_amplify_rate: float = 0.5  # free-form reflection adds an unsupported claim
    format_error_rate: float = 0.03
    empty_rate: float = 0.02

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ConfigError(f"backend.{f.name} must be a number, got {v!r}")
            if f.name != "warning_effect" and not 0.0 <= float(v) <= 1.0:
                raise ConfigError(f"backend.{f.name} must be in [0, 1], got {v}")
        if self.warning_effect < 0:
            raise ConfigError(f"backend.warning_effect must be >= 0, got {self.warning_effect}")
        if self.misread_min > self.misread_max:
            raise ConfigError("backend.misread_min must not exceed backend.misread_max")

    def off(self) -> FaultRates:
        """A perfect model: every fault rate 0 and ``p_correct`` 1 (``backend.faults=off``)."""
        return replace(
            self, p_correct=1.0, phantom_rate=0.0, misread_rate=0.0, overthink_flip_rate=0.0,
            reflection_amplify_rate=0.0, format_error_rate=0.0, empty_rate=0.0,
        )  # fmt: skip

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


def draw_rng(seed: int, item_key: str, request_key: str, occurrence: int) -> random.Random:
    """One RNG per request: seeded from the run seed, the item, the request and how often that exact
    request was seen (a repeated request is an independent sample, so two readings can disagree)."""
    h = hashlib.sha256(f"{seed}\x1f{item_key}\x1f{request_key}\x1f{occurrence}".encode()).hexdigest()
    return random.Random(int(h[:16], 16))


@dataclass
class Injected:
    """One injected fault and what identifies it later in the trajectory (entity, value, claim text)."""

    kind: Fault
    detail: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.value, **self.detail}
