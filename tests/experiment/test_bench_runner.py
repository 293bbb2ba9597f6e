"""scripts/bench_runner.py --servers as a user runs it: a tiny sweep on fake GPU-cost servers."""

from __future__ import annotations

import re

from tests.experiment.conftest import run_process


def _rows(stdout: str, first_cells: tuple[str, ...]) -> list[list[str]]:
    return [
        [c.strip() for c in ln.strip("|").split("|")]
        for ln in stdout.splitlines()
        if ln.startswith("|") and ln.split("|")[1].strip() in first_cells
    ]


def test_concurrent_sweep_accounts_the_servers_work_and_bounds_it() -> None:
    """Jobs run all at once: no item fails, the per-item work read back from the trajectories is
    what the server charged (the bound simulation's input), and the busiest server over the whole
    sweep never bounds tighter than the sum of each job's busiest server."""
    proc = run_process(
        "bench_runner.py",
        "--servers",
        "2",
        "--servers-only",
        "--jobs",
        "concurrent",
        "--server-items",
        "3",
        "--server-variants",
        "full,no_ecc",
        "--routings",
        "rendezvous",
        "--bound-items",
        "6",
        "--bound-draws",
        "20",
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "its jobs all at once" in proc.stdout
    sweeps = _rows(proc.stdout, ("1", "2"))
    assert [r[:2] for r in sweeps] == [["1", "-"], ["2", "rendezvous"]]
    assert [r[-1] for r in sweeps] == ["0", "0"]  # errors
    work = re.search(
        r"trajectories: ([\d.]+) s over 3 items \(its server's busy_s: ([\d.]+) s\)", proc.stdout
    )
    assert work is not None, proc.stdout
    assert abs(float(work[1]) - float(work[2])) <= 0.01 * float(work[2]) + 0.1
    bounds = _rows(proc.stdout, ("6",))
    assert [r[1] for r in bounds] == ["0.1", "0.0"]
    for row in bounds:
        one_by_one, at_once = (float(cell.split()[0]) for cell in row[2:])
        assert 0 < one_by_one <= at_once <= 1
