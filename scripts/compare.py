#!/usr/bin/env python
"""Figure 5 side by side (also ``ledgermind compare``): ``ledgermind/cli/compare.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.cli.compare import main

if __name__ == "__main__":
    sys.exit(main())
