#!/usr/bin/env python
"""One canonical text of a run tree's outputs (refactor check): ``ledgermind/devtools/output_digest.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.devtools.output_digest import main

if __name__ == "__main__":
    sys.exit(main())
