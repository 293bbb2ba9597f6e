"""Helpers for the experiment-harness tests: run scripts/run.py in a subprocess with fakes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TEST_CONF = Path(__file__).resolve().parent / "conf"

# scripts/run.py with the fake agent/scorer/benchmark and the scripted backend: no model, no data.
FAKE_OVERRIDES = [
    f"hydra.searchpath=[file://{TEST_CONF}]",
    "benchmark=fake",
    "backend=scripted",
    "backend.allow_scripted=true",
    "agent_factory=tests.experiment.fakes.build_fake_agent",
    "scorer=tests.experiment.fakes.fake_score",
    "progress=false",
]


def subprocess_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_AGENT_")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env["WANDB_SILENT"] = "true"
    env.update(extra)
    return env


def run_script(script: str, *args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / script), *args],
        cwd=REPO,
        env=subprocess_env(**env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def run_py():
    return lambda *args, **kw: run_script("run.py", *args, **kw)
