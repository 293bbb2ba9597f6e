#!/usr/bin/env python
"""Re-score finished runs from their stored replies (also ``ledgermind rescore``): ``ledgermind/cli/rescore.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.cli.rescore import main

if __name__ == "__main__":
    sys.exit(main())
