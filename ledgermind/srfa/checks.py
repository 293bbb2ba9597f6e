"""Extra run-level S-RFA checks that a backend registers (the simulator: the audit's catch rate
against its injected faults).

Why a registry: the S-RFA audit must not know any backend by name, and the simulator, which
measures the audit, imports the audit — so the simulator registers its check here from its plugin
(``BackendDescription.plugin``), and ``srfa/run.py`` and ``cli/srfa.py`` iterate what is
registered. Each check's summary is written under its name in ``srfa_metrics.json``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ledgermind.registry import Registry
from ledgermind.srfa.protocol import SrfaRecord
from ledgermind.trajectory import Trajectory

SrfaPair = tuple[SrfaRecord, Trajectory]  # a ledger-mode audit and the trajectory it audited


@dataclass(frozen=True)
class SrfaCheck:
    """``summarize`` a run's audited items (None: the check does not apply); ``format`` it in one line."""

    summarize: Callable[[Sequence[SrfaPair]], dict[str, Any] | None]
    format: Callable[[Mapping[str, Any]], str]


SRFA_CHECKS: Registry[SrfaCheck] = Registry("S-RFA check")


def run_checks(pairs: Iterable[SrfaPair]) -> dict[str, dict[str, Any]]:
    """``{check name: summary}`` for every registered check that applies to the run."""
    items = list(pairs)
    summaries = {name: SRFA_CHECKS.get(name).summarize(items) for name in SRFA_CHECKS}
    return {name: s for name, s in summaries.items() if s}


def format_checks(metrics: Mapping[str, Any]) -> list[str]:
    """The one-line report of each registered check whose summary ``metrics`` holds."""
    return [SRFA_CHECKS.get(name).format(metrics[name]) for name in SRFA_CHECKS if metrics.get(name)]
