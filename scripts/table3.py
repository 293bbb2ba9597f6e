#!/usr/bin/env python
"""Build Table 3 (ablations) from finished runs (also ``ledgermind table3``): ``ledgermind/cli/table3.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.cli.table3 import main

if __name__ == "__main__":
    sys.exit(main())
