#!/usr/bin/env python
"""S-RFA over a finished run (also ``ledgermind srfa``): ``ledgermind/cli/srfa.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.cli.srfa import main

if __name__ == "__main__":
    sys.exit(main())
