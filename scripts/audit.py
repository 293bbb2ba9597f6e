#!/usr/bin/env python
"""S-RFA over a finished run: ``python scripts/audit.py RUN_DIR [audit.mode=ledger|judge|both] [model=… backend=…]``.

``--trust-config`` reloads a benchmark the run names by import path (only for runs you made yourself).
Writes ``RUN_DIR/audit.jsonl`` (per item: ≤ 10 atomic claims with type, text, label and reason)
and ``RUN_DIR/audit_metrics.json`` (Acc, UCR_reason, GDR, R4R, WDG, by difficulty; Cohen's κ in
``both`` mode). Exit codes: 0 done (items the run itself failed are counted as run errors, not
retried), 1 some item audits failed (rerun to retry), 2 usage error.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.audit.cli import audit_main  # noqa: E402

if __name__ == "__main__":
    sys.exit(audit_main())
