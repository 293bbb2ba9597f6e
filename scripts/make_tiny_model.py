#!/usr/bin/env python
"""Build the tiny random-weight Qwen2-VL test checkpoint: ``ledgermind/devtools/tiny_model.py``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.devtools.tiny_model import main

if __name__ == "__main__":
    sys.exit(main())
