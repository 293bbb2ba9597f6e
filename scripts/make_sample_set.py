#!/usr/bin/env python
"""Regenerate the bundled sample set: ``ledgermind/devtools/sample_set.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.devtools.sample_set import main

if __name__ == "__main__":
    sys.exit(main())
