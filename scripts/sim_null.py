#!/usr/bin/env python
"""The simulator's null test (a TEST INSTRUMENT check): ``ledgermind/simulator/commands/null.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.simulator.commands.null import main

if __name__ == "__main__":
    sys.exit(main())
