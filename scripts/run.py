#!/usr/bin/env python
"""Run LedgerMind on a benchmark: ``python scripts/run.py [group=option ...] [+ablation=NAME]``
(also ``ledgermind run``). The command, its help, exit codes and resume line: ``ledgermind/cli/run.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.cli.run import main

if __name__ == "__main__":
    main()
