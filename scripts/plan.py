#!/usr/bin/env python
"""Plan a Table 3 from a pilot sweep (also ``ledgermind plan``): ``ledgermind/cli/plan.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.cli.plan import main

if __name__ == "__main__":
    sys.exit(main())
