#!/usr/bin/env python
"""Deprecated name of ``scripts/srfa.py`` (S-RFA over a finished run), kept for one release."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.cli.srfa import main

if __name__ == "__main__":
    print(
        "note: scripts/audit.py is now scripts/srfa.py (ledgermind srfa); this alias goes after one release",
        file=sys.stderr,
    )
    sys.exit(main())
