"""Event-triggered verification and typed repair (paper §3.2–3.3, App. E)."""

from ledgermind.repair.operators import DEFAULT_COMPAT, OPERATORS, Operator, OperatorResult, RepairContext
from ledgermind.repair.policy import (
    HALLUCINATION_WARNING,
    AcquireSpec,
    Budget,
    FreeformRepair,
    RepairEngine,
    RepairOutcome,
    T5Ending,
)
from ledgermind.repair.triggers import TriggerHit
from ledgermind.repair.verifier import Verifier

__all__ = [
    "DEFAULT_COMPAT",
    "HALLUCINATION_WARNING",
    "OPERATORS",
    "AcquireSpec",
    "Budget",
    "FreeformRepair",
    "Operator",
    "OperatorResult",
    "RepairContext",
    "RepairEngine",
    "RepairOutcome",
    "T5Ending",
    "TriggerHit",
    "Verifier",
]
