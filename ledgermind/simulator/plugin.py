"""What the simulator adds to the production readers of its runs, registered on import.

Why a plugin: production modules never import the simulator (a test instrument), yet a simulated
run's census carries a ``simulator`` section (injected vs caught faults) and its audit a catch
rate. ``SimulatedBackend.description.plugin`` names this module: building the backend imports it
(``simulator/backend.py``), and a process that only reads a simulated run imports it through
``backends/recorded.describe_backend``, which every run reader calls with the recorded backend
name. Registering twice is impossible (a module runs once; a duplicate name is a ``RegistryError``).
"""

from __future__ import annotations

from typing import Any

from ledgermind.metrics.census import CENSUS_SECTIONS, CensusSection
from ledgermind.simulator.census import catch_rates, fault_census, has_simulator_meta
from ledgermind.simulator.srfa_catch import catch_summary, format_catch
from ledgermind.srfa.checks import SRFA_CHECKS, SrfaCheck
from ledgermind.trajectory import Trajectory

SECTION = "simulator"  # the key of both additions: ``mechanisms.simulator``, audit ``metrics.simulator``


def _applies(t: Trajectory) -> bool:
    return has_simulator_meta(t.model_calls)


def _totals(section: Any) -> dict[str, Any]:
    return {"catch_rate": catch_rates(section)}


CENSUS_SECTIONS.add(SECTION, CensusSection(applies=_applies, count=fault_census, totals=_totals))
SRFA_CHECKS.add(SECTION, SrfaCheck(summarize=catch_summary, format=format_catch))
