"""scripts/bench_runner.py --servers as a user runs it: a tiny sweep on fake GPU-cost servers.

The script's ``main`` runs in the test process (``run_module``; its fake servers are still processes
of their own) and the servers' modelled costs are a fifth of the defaults: what is checked (the
work read back against the server's account, every job run, the bounds' order) holds at any price,
and the sweeps' wall time is those modelled seconds, slept."""

from __future__ import annotations

import re

from tests.experiment.conftest import run_module

# a fifth of bench_runner's default server costs (0.15 s + 0.75 ms/prompt token + 7.5 ms/generated token)
CHEAP = ["--server-latency", "0.03", "--server-prefill-ms", "0.15", "--server-decode-ms", "1.5"]


def _rows(stdout: str, first_cells: tuple[str, ...]) -> list[list[str]]:
    return [
        [c.strip() for c in ln.strip("|").split("|")]
        for ln in stdout.splitlines()
        if ln.startswith("|") and ln.split("|")[1].strip() in first_cells
    ]


def _bench(*args: str) -> str:
    proc = run_module(
        "scripts.bench_runner", "--servers", "2", "--servers-only", "--routings", "rendezvous", *CHEAP, *args
    )
    assert proc.returncode == 0, proc.stderr
    sweeps = _rows(proc.stdout, ("1", "2"))
    assert [r[:2] for r in sweeps] == [["1", "-"], ["2", "rendezvous"]]
    assert [r[-1] for r in sweeps] == ["0", "0"]  # errors
    return proc.stdout


def test_sequential_sweep_work_read_back_is_what_the_server_charged() -> None:
    """The bound simulation's input: each item's modelled seconds from its trajectory's calls equal
    the server's own account (one job after the other: every call that reached it is recorded)."""
    out = _bench("--server-items", "2", "--server-variants", "full")
    work = re.search(r"trajectories: ([\d.]+) s over 2 items \(its server's busy_s: ([\d.]+) s\)", out)
    assert work is not None, out
    assert work[1] == work[2]


def test_concurrent_sweep_runs_every_job_and_bounds_it() -> None:
    """Jobs all at once: none fails, and the busiest server over the whole sweep never bounds
    tighter than the sum of each job's busiest server (a max of sums is at most the sum of maxes)."""
    out = _bench(
        "--jobs",
        "concurrent",
        "--server-items",
        "2",
        "--server-variants",
        "full,no_ecc",
        "--bound-items",
        "6",
        "--bound-draws",
        "20",
    )
    assert "its jobs all at once" in out
    bounds = _rows(out, ("6",))
    assert [r[1] for r in bounds] == ["0.1", "0.0"]
    for row in bounds:
        one_by_one, at_once = (float(cell.split()[0]) for cell in row[2:])
        assert 0 < one_by_one <= at_once <= 1
