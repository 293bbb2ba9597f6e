#!/usr/bin/env python
"""Response curve of one simulator fault rate (a TEST INSTRUMENT): ``ledgermind/simulator/commands/sweep.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.simulator.commands.sweep import main

if __name__ == "__main__":
    sys.exit(main())
