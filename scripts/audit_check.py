#!/usr/bin/env python
"""Deprecated name of ``scripts/srfa_check.py`` (S-RFA against the outcome and a person), kept for one release."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.cli.srfa_check import main

if __name__ == "__main__":
    print(
        "note: scripts/audit_check.py is now scripts/srfa_check.py; this alias goes after one release",
        file=sys.stderr,
    )
    sys.exit(main())
