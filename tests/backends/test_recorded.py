"""A backend describes itself, and a recorded run's backend name finds that description
(``backends/recorded.py``) — so production readers never recognise the simulator by name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from ledgermind.backends.base import BACKENDS, Backend, BackendDescription, GenerationRequest, Reply
from ledgermind.backends.recorded import backend_class, configured_targets, describe_backend
from ledgermind.backends.scripted import ScriptedBackend

ROOT = Path(__file__).resolve().parents[2]


@BACKENDS.register("labelled_for_test")
class LabelledBackend(Backend):
    """A backend of no particular name that has something to say about its runs."""

    name = "labelled_for_test"
    description = BackendDescription(label="LABELLED (test)", disclaimer="numbers from a test double")

    def __init__(self, model: Any = None) -> None:
        pass

    async def generate(self, request: GenerationRequest) -> Reply:
        return Reply("A")


def test_a_registered_name_and_a_configured_class_name_both_resolve() -> None:
    assert backend_class("scripted") is ScriptedBackend  # a ``name:`` config records the registered name
    assert backend_class("ScriptedBackend") is ScriptedBackend  # a ``_target_`` config records the class name
    assert backend_class("NoSuchBackend") is None


def test_real_and_unknown_backends_say_nothing() -> None:
    assert describe_backend("VLLMServerBackend") == BackendDescription()
    assert describe_backend("NoSuchBackend") == BackendDescription()
    assert describe_backend("") == BackendDescription()


def test_the_simulator_describes_itself_as_a_test_instrument() -> None:
    d = describe_backend("SimulatedBackend")  # what metrics.json["identity"]["backend"] records
    assert d.disclaimer.startswith("SIMULATED BACKBONE") and d.label and d.tags == ("simulated",)
    assert d.plugin == "ledgermind.simulator.plugin"


def test_readers_use_the_description_not_a_class_name() -> None:
    """Any backend with a description gets it in metrics.json and the report title."""
    from ledgermind.report.run_view import backend_label
    from ledgermind.runs.summary import RunIdentity, build_metrics

    ident = RunIdentity("m", "labelled_for_test", "gauges", "full", "x", 0)
    metrics = build_metrics([], [], ident, wall_time_s=0.0, gamma=0.5, summarize=None)
    assert metrics["test_instrument"] == "numbers from a test double"
    assert backend_label({"backend": "labelled_for_test", "model": "m"}) == "LABELLED (test)"
    assert backend_label({"backend": "ScriptedBackend", "model": "m"}) == "m (ScriptedBackend)"


def test_configured_targets_read_the_backend_configs(tmp_path: Path) -> None:
    (tmp_path / "backend").mkdir()
    (tmp_path / "backend" / "a.yaml").write_text("_target_: pkg.mod.ABackend\nx: 1\n", encoding="utf-8")
    (tmp_path / "backend" / "b.yaml").write_text("name: scripted\n", encoding="utf-8")
    assert configured_targets(tmp_path) == {"ABackend": "pkg.mod.ABackend"}
    assert configured_targets()["SimulatedBackend"] == "ledgermind.simulator.backend.SimulatedBackend"


def test_a_process_that_only_reads_a_simulated_run_registers_the_simulator_hooks() -> None:
    """Fresh interpreter: the census and audit registries start without the simulator's section;
    describing the recorded backend (what every reader does) registers both."""
    code = (
        "from ledgermind.metrics.census import CENSUS_SECTIONS\n"
        "from ledgermind.srfa.checks import SRFA_CHECKS\n"
        "from ledgermind.backends.recorded import describe_backend\n"
        "import sys\n"
        "before = ('simulator' in CENSUS_SECTIONS, 'simulator' in SRFA_CHECKS,\n"
        "          'ledgermind.simulator' in sys.modules)\n"
        "describe_backend('SimulatedBackend')\n"
        "print(before, ('simulator' in CENSUS_SECTIONS, 'simulator' in SRFA_CHECKS))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "(False, False, False) (True, True)"


def test_registering_the_simulator_section_twice_is_an_error() -> None:
    import pytest

    from ledgermind.metrics.census import CENSUS_SECTIONS
    from ledgermind.registry import RegistryError

    describe_backend("SimulatedBackend")
    with pytest.raises(RegistryError, match="duplicate census section name 'simulator'"):
        CENSUS_SECTIONS.add("simulator", CENSUS_SECTIONS.get("simulator"))


def test_audit_checks_format_only_what_the_metrics_hold() -> None:
    from ledgermind.simulator.srfa_catch import format_catch
    from ledgermind.srfa.checks import format_checks

    describe_backend("SimulatedBackend")
    s = {
        "phantom_claims": 2,
        "phantom_injected": 3,
        "phantom_not_in_trace": 1,
        "phantom_ungrounded": 1,
        "phantom_catch_rate": 0.5,
        "amplified_ungrounded": 0,
        "amplified_claims": 0,
        "fault_free_grounded": 4,
        "fault_free_claims": 5,
        "fault_free_grounded_rate": 0.8,
        "fault_free_sc_grounded_rate": None,
        "fault_free_dc_grounded_rate": 1.0,
    }
    assert format_checks({"simulator": s, "ledger": {}}) == [format_catch(s)]
    assert format_checks({"ledger": {}}) == []
