#!/usr/bin/env python
"""Mutation testing of the paper-critical modules (``make mutation``): ``ledgermind/devtools/mutation.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.devtools.mutation import main

if __name__ == "__main__":
    sys.exit(main())
