#!/usr/bin/env python
"""Print (or start) the vLLM server for a model config (also ``ledgermind serve``): ``ledgermind/cli/serve.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.cli.serve import main

if __name__ == "__main__":
    sys.exit(main())
