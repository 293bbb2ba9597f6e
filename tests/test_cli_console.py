"""The ``ledgermind`` console command dispatches to the same entry points as ``scripts/*.py``, which are
thin wrappers around ``ledgermind/cli/`` (no script holds logic, no file is loaded by path)."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ledgermind import cli
from tests.experiment.conftest import REPO, subprocess_env

EXPECTED = {
    "run",
    "table3",
    "report",
    "rescore",
    "audit",
    "srfa",
    "compare",
    "serve",
    "plan",
    "ls",
    "eval-grounding",
    "eval-perception",
}


def test_every_workflow_step_is_a_subcommand() -> None:
    assert set(cli.COMMANDS) == EXPECTED
    for name in EXPECTED:
        assert callable(cli.resolve(name))


def test_audit_means_the_claim_auditor_and_srfa_the_run_audit(capsys: pytest.CaptureFixture[str]) -> None:
    from ledgermind.claim_audit import main as claims_main

    assert cli.resolve("audit") is claims_main
    assert cli.main(["srfa", "--help"]) == 0
    assert "usage: ledgermind srfa" in (out := capsys.readouterr().out) and "srfa.jsonl" in out


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
    assert "unknown key 'pipeline.beta': did you mean pipeline.grounding.beta?" in capsys.readouterr().err


def test_python_dash_m_runs_the_console_command() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ledgermind.cli", "run", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and "+ablation=" in proc.stdout


# Scripts that are entry points of the package: each only imports its ``main`` from ``ledgermind``.
WRAPPERS = {
    "run": "ledgermind.cli.run",
    "table3": "ledgermind.cli.table3",
    "report": "ledgermind.cli.report",
    "rescore": "ledgermind.cli.rescore",
    "serve": "ledgermind.cli.serve",
    "srfa": "ledgermind.cli.srfa",
    "compare": "ledgermind.cli.compare",
    "plan": "ledgermind.cli.plan",
    "srfa_check": "ledgermind.cli.srfa_check",
    "wire_check": "ledgermind.devtools.wire_check",
    "gen_unit_table": "ledgermind.devtools.unit_table",
    "mutation": "ledgermind.devtools.mutation",
    "output_digest": "ledgermind.devtools.output_digest",
    "make_sample_set": "ledgermind.devtools.sample_set",
    "make_tiny_model": "ledgermind.devtools.tiny_model",
    "sim_null": "ledgermind.simulator.commands.null",
    "sim_report": "ledgermind.simulator.commands.report",
    "sim_sweep": "ledgermind.simulator.commands.sweep",
    "eval_grounding": "ledgermind.cli.eval_grounding",
    "eval_perception": "ledgermind.cli.eval_perception",
}
# Scripts that are not entry points of the package: benchmarks (speed and memory targets live in
# ``scripts/bench_*.py`` by the project's rule) and the set-up step that patches the venv before
# the package's own dependencies import.
NOT_WRAPPERS = re.compile(r"bench_\w+|cpu_torchvision_fix")


def test_every_script_is_a_wrapper_a_benchmark_or_the_set_up_step() -> None:
    scripts = {p.stem for p in (REPO / "scripts").glob("*.py")}
    assert not {s for s in scripts - set(WRAPPERS) if not NOT_WRAPPERS.fullmatch(s)}, "a script holds logic"


# Loading a file by path: a module that only runs as a script, which tests then cannot import.
BY_PATH = re.compile(r"spec_from_file_location|\brunpy\b|SourceFileLoader|\bexec\(")


@pytest.mark.parametrize("script", sorted(WRAPPERS))
def test_each_entry_point_script_is_a_thin_wrapper(script: str) -> None:
    text = (REPO / "scripts" / f"{script}.py").read_text(encoding="utf-8")
    code = [
        ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith(("#", '"""', "(also"))
    ]
    assert f"from {WRAPPERS[script]} import main" in text and len(code) <= 8, code
    assert not re.search(r"^\s*(def|class) ", text, re.MULTILINE), f"scripts/{script}.py holds logic"
    assert callable(importlib.import_module(WRAPPERS[script]).main)


def test_no_module_or_test_loads_a_file_by_path() -> None:
    found = {
        p.relative_to(REPO).as_posix()
        for d in ("ledgermind", "tests")
        for p in (REPO / d).rglob("*.py")
        if p.name != Path(__file__).name and BY_PATH.search(p.read_text(encoding="utf-8"))
    }
    assert not found, f"load modules by import, not by path: {sorted(found)}"


def test_the_run_command_reads_conf_wherever_it_is_started_from(tmp_path: Path) -> None:
    """The Hydra app lives in the package: started from another directory, ``--cfg job`` still
    composes ``conf/config.yaml`` (its config path is absolute, not relative to a script)."""
    proc = subprocess.run(
        [sys.executable, "-m", "ledgermind", "run", "--cfg", "job", "benchmark=gauges"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=subprocess_env(),
    )
    assert proc.returncode == 0, proc.stderr
    assert "name: gauges" in proc.stdout and "concurrency:" in proc.stdout


def test_two_runs_in_one_process_each_report_their_own_exit_code(tmp_path: Path, monkeypatch, capsys) -> None:
    """The run command is an imported module now (no fresh copy per call): a run with a failed
    item exits 3, and the next run in the same process, with none, exits 0."""
    from tests.experiment.conftest import FAKE_OVERRIDES

    monkeypatch.setenv("FAKE_AGENT_FAIL", "q1")
    assert cli.main(["run", *FAKE_OVERRIDES, "logger=none", f"hydra.run.dir={tmp_path / 'a'}"]) == 3
    assert "1 of 6 items failed" in capsys.readouterr().err
    monkeypatch.delenv("FAKE_AGENT_FAIL")
    assert cli.main(["run", *FAKE_OVERRIDES, "logger=none", f"hydra.run.dir={tmp_path / 'b'}"]) == 0
    assert "items failed" not in capsys.readouterr().err
