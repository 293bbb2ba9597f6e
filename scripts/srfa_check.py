#!/usr/bin/env python
"""Check an S-RFA result against the outcome and a person: ``ledgermind/cli/srfa_check.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.cli.srfa_check import main

if __name__ == "__main__":
    sys.exit(main())
