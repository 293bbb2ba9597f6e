"""Build the static HTML report of a run or a multirun and print the path of its index.

    python scripts/report.py outputs/2025-01-01/12-00-00          # one run
    python scripts/report.py outputs/multirun/2025-01-01/12-00-00 # Table 3 + one report per run + side by side
    python scripts/report.py RUN_DIR --out /tmp/report

Writes RUN_DIR/report/ by default (self-contained: open index.html in a browser, no server).
Exit code 2 with one line when the directory holds no run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ledgermind.cli.commands import one_line_errors
from ledgermind.report import build_report


@one_line_errors
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", type=Path, help="a run dir (results.jsonl, trajectories/) or a multirun dir")
    p.add_argument("--out", type=Path, default=None, help="report directory (default: RUN/report)")
    args = p.parse_args(argv)
    print(build_report(args.run, args.out))
    return 0
