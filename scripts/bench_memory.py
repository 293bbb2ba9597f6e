#!/usr/bin/env python
"""Peak memory of a run, children included (the default `make run` must stay under 3 GB).

    python scripts/bench_memory.py                       # scripts/run.py with the default config
    python scripts/bench_memory.py -- limit=2 +ablation=no_ecc

Samples the resident set of the run and of every process it starts (e.g. the W&B service, a vLLM
engine core) every 0.1 s and prints the peak of the sum, the peak of the largest single process
and the kernel's own max-RSS of the children (``ru_maxrss``, the largest one). The sum is the
number that matters on a shared box: children are not free. Sampling can miss a spike shorter
than the interval; ``ru_maxrss`` cannot, which is why both are printed.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]


def tree_rss(proc: psutil.Process) -> tuple[int, int]:
    """(sum, max) of RSS bytes over ``proc`` and its descendants; vanished processes count as 0."""
    total = largest = 0
    try:
        members = [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0, 0
    for p in members:
        try:
            rss = p.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        total += rss
        largest = max(largest, rss)
    return total, largest


def measure(cmd: list[str], interval_s: float = 0.1) -> dict[str, float]:
    t0 = time.perf_counter()
    child = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    proc = psutil.Process(child.pid)
    peak_sum = peak_one = 0
    while child.poll() is None:
        s, m = tree_rss(proc)
        peak_sum, peak_one = max(peak_sum, s), max(peak_one, m)
        time.sleep(interval_s)
    err = child.stderr.read().decode(errors="replace") if child.stderr else ""
    return {
        "rc": child.returncode,
        "wall_s": time.perf_counter() - t0,
        "peak_tree_gb": peak_sum / 1e9,
        "peak_process_gb": peak_one / 1e9,
        "ru_maxrss_gb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024 / 1e9,
        "stderr_tail": err.strip().splitlines()[-1] if err.strip() else "",
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--limit-gb", type=float, default=3.0, help="the target (peak of the tree)")
    p.add_argument("overrides", nargs="*", help="Hydra overrides for scripts/run.py (after --)")
    args = p.parse_args(argv)
    r = measure([sys.executable, str(REPO / "scripts" / "run.py"), *args.overrides])
    print(
        f"scripts/run.py {' '.join(args.overrides) or '(default config)'}: exit {r['rc']}, {r['wall_s']:.1f} s\n"
    )
    print(
        "| peak RSS, run + children (sum) | peak RSS, largest process | ru_maxrss (largest child) | target |"
    )
    print("|---|---|---|---|")
    print(
        f"| {r['peak_tree_gb']:.2f} GB | {r['peak_process_gb']:.2f} GB | {r['ru_maxrss_gb']:.2f} GB | < {args.limit_gb:.1f} GB |"
    )
    if r["rc"] != 0:
        print(f"run failed: {r['stderr_tail']}", file=sys.stderr)
        return 1
    return 0 if r["peak_tree_gb"] < args.limit_gb else 3


if __name__ == "__main__":
    sys.exit(main())
