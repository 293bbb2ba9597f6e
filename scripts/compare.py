#!/usr/bin/env python
"""Figure 5 side by side: ``python scripts/compare.py RUN_A RUN_B … [--mode ledger|judge] [--out radar.png]``.

Prints Acc, GDR, R4R, 1−UCR, 1−WDG per run and draws the radar chart; refuses runs over
different item sets (exit 2).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.audit.cli import compare_main  # noqa: E402

if __name__ == "__main__":
    sys.exit(compare_main())
