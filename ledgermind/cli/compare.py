"""Figure 5 side by side: ``ledgermind compare RUN_A RUN_B … [--mode ledger|judge] [--out radar.png]``
(also ``scripts/compare.py``). Prints Acc, GDR, R4R, 1−UCR, 1−WDG per run and draws the radar chart;
refuses runs over different item sets (exit 2)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ledgermind.cli.commands import one_line_errors


@one_line_errors
def main(argv: Sequence[str] | None = None) -> int:
    from ledgermind.srfa.compare import compare, format_table, radar_png

    p = argparse.ArgumentParser(
        description="Figure 5 axes of several runs side by side, and the radar chart."
    )
    p.add_argument("runs", nargs="+", type=Path, help="run directories (audited or not), over the same items")
    p.add_argument(
        "--mode", default="ledger", choices=["ledger", "judge"], help="which audit to read when present"
    )
    p.add_argument(
        "--out", type=Path, default=Path("srfa_radar.png"), help="radar chart PNG (default %(default)s)"
    )
    args = p.parse_args(argv)
    rows = compare(args.runs, args.mode)
    print(format_table(rows))
    print(f"radar chart -> {radar_png(rows, args.out)}")
    return 0
