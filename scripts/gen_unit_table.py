#!/usr/bin/env python
"""Generate NCC's unit table from pint's registry (``--check``: is it current?): ``ledgermind/devtools/unit_table.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.devtools.unit_table import main

if __name__ == "__main__":
    sys.exit(main())
