#!/usr/bin/env python
"""The claim auditor against human annotations (also ``ledgermind eval-grounding``): ``ledgermind/cli/eval_grounding.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.cli.eval_grounding import main

if __name__ == "__main__":
    sys.exit(main())
