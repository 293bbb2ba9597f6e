"""Report on simulated-backbone runs (a TEST INSTRUMENT): accuracy, injected vs caught faults per
variant, and every item that lost its answer with the mechanism that took it.

    python scripts/sim_report.py outputs/multirun/<date>/<time> [more run or multirun dirs]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ledgermind.simulator.label import NOTE
from ledgermind.simulator.sanity import find_runs, format_report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=f"{NOTE}.")
    parser.add_argument("runs", nargs="+", help="run directories or multirun (sweep) directories")
    argv = parser.parse_args(argv).runs  # --help prints the usage; no argument is a usage error (exit 2)
    runs = find_runs([Path(a) for a in argv])
    if not runs:
        print(f"error: no finished runs (metrics.json) under {' '.join(argv)}", file=sys.stderr)
        return 2
    print(f"{NOTE}.")
    print(format_report(runs))
    return 0
