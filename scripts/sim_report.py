#!/usr/bin/env python
"""Report on simulated-backbone runs (a TEST INSTRUMENT): ``ledgermind/simulator/commands/report.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.simulator.commands.report import main

if __name__ == "__main__":
    sys.exit(main())
