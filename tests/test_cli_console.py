"""The ``ledgermind`` console command dispatches to the same entry points as ``scripts/*.py``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ledgermind import cli
from tests.experiment.conftest import REPO

EXPECTED = {"run", "table3", "report", "rescore", "audit", "srfa", "serve", "plan"}


def test_every_workflow_step_is_a_subcommand() -> None:
    assert set(cli.COMMANDS) == EXPECTED
    for name in EXPECTED:
        assert callable(cli.resolve(name))


def test_audit_means_the_claim_auditor_and_srfa_the_run_audit() -> None:
    from ledgermind.audit.claims import main as claims_main
    from ledgermind.audit.cli import audit_main

    assert cli.resolve("audit") is claims_main and cli.resolve("srfa") is audit_main


def test_usage_and_unknown_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    assert cli.main(["--help"]) == 0
    assert cli.main(["tabel3"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'tabel3'" in err and all(f"  {n} " in err for n in EXPECTED)


def test_a_script_subcommand_keeps_its_exit_code_and_one_line_error(tmp_path, capsys) -> None:
    assert cli.main(["table3", str(tmp_path / "missing")]) == 2
    assert cli.main(["srfa"]) == 2  # S-RFA without a run folder: its usage, exit 2
    assert cli.main(["run", "pipeline.beta=0.2"]) == 2
    assert "pipeline.beta is now pipeline.grounding.beta" in capsys.readouterr().err


def test_python_dash_m_runs_the_console_command() -> None:
    proc = subprocess.run([sys.executable, "-m", "ledgermind.cli", "run", "--help"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "+ablation=" in proc.stdout
