"""Event-triggered verification and typed repair (paper §3.2–3.3, App. E)."""

from ledgermind.repair.policy import (
    HALLUCINATION_WARNING,
    OPERATORS,
    AcquireSpec,
    Action,
    Budget,
    T5Ending,
    View,
    plan,
)
from ledgermind.repair.triggers import TriggerHit
from ledgermind.repair.verifier import Verifier

__all__ = [
    "HALLUCINATION_WARNING",
    "OPERATORS",
    "AcquireSpec",
    "Action",
    "Budget",
    "T5Ending",
    "TriggerHit",
    "Verifier",
    "View",
    "plan",
]
