#!/usr/bin/env python
"""The static HTML report of a run or multirun (also ``ledgermind report``): ``ledgermind/cli/report.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.cli.report import main

if __name__ == "__main__":
    sys.exit(main())
