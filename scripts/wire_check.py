#!/usr/bin/env python
"""Requests on the wire against a greedy server: ``ledgermind/devtools/wire_check.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.devtools.wire_check import main

if __name__ == "__main__":
    sys.exit(main())
