#!/usr/bin/env python
"""Plan a Table 3 from a pilot sweep: ``python scripts/plan.py PILOT_DIR --items N [--seeds K] [--variants …]
[--tokens-per-s R]`` (also ``ledgermind plan``).

Prints, per variant and in total, the requests, prompt tokens (cached / uncached) and generated
tokens of the planned experiment with the sweep-shared response cache, its GPU-hours at rate R
(or at the pilot's measured rate), and for each variant vs ``full`` the items needed to detect
Δ = 1, 2, 5 points at 80 % power with the table's McNemar test, and the smallest Δ detectable with
N items (``ledgermind/experiment/plan.py``; method in docs/statistics.md).

Exit codes: 0 printed; 2 bad arguments or no finished runs in the pilot (one line on stderr).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.experiment.plan import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
