#!/usr/bin/env python
"""Measure the perception tools on real images (also ``ledgermind eval-perception``): ``ledgermind/cli/eval_perception.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.cli.eval_perception import main

if __name__ == "__main__":
    sys.exit(main())
