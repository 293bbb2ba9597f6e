#!/usr/bin/env python
"""Check an S-RFA audit against the outcome and a person: ``python scripts/audit_check.py RUN_DIR
[--hand-labels FILE --setting NAME]``.

Prints, for the ledger-mode ``audit.jsonl`` of RUN_DIR: n right/wrong, mean GDR of each, the
AUROC of per-item GDR for correctness with a 95 % bootstrap interval, how the decision claims
were supported (grounded / computed / derived / ungrounded), the markup "entities" count from
``audit_metrics.json``, and, with ``--hand-labels``, the agreement with the hand labels of that
setting (docs/audit_handlabels.jsonl) — over all matched claims and over the claims the text-only
audit could check. ``--mode judge`` reads the judge's labels instead (audit a run with
``audit.mode=both`` so the judge labels the same claims the hand labels index). Exit 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.audit.diagnostics import (  # noqa: E402
    checkable_decisions,
    correctness_table,
    hand_label_agreement,
    read_hand_labels,
)
from ledgermind.audit.run import AUDIT_FILE, METRICS_FILE, read_audits  # noqa: E402
from ledgermind.audit.srfa import support_counts, text_label_counts  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", type=Path)
    p.add_argument("--hand-labels", type=Path)
    p.add_argument("--setting", help="which hand labels apply to this run (their 'setting' field)")
    p.add_argument("--mode", default="ledger", choices=["ledger", "judge"], help="which audit's labels to check")
    args = p.parse_args(argv)
    audit_file = args.run_dir / AUDIT_FILE
    if not audit_file.is_file():
        print(f"error: no {AUDIT_FILE} in {args.run_dir} (run scripts/audit.py first)", file=sys.stderr)
        return 2
    latest = {a.item_id: a for a in read_audits(audit_file) if a.mode == args.mode and a.error is None}
    out = {"correctness": correctness_table(latest.values()),
           "correctness_checkable": correctness_table(checkable_decisions(latest.values())),
           "support": support_counts(latest.values()),
           "text_labels": text_label_counts(latest.values())}
    metrics_file = args.run_dir / METRICS_FILE
    if metrics_file.is_file():
        stored = json.loads(metrics_file.read_text()).get(args.mode, {})
        out["markup_entities"] = stored.get("markup_entities")
        out["coverage"] = stored.get("coverage")
    if args.hand_labels:
        labels = [h for h in read_hand_labels(args.hand_labels) if args.setting in (None, h.setting)]
        out["hand_labels"] = hand_label_agreement(latest, labels)
    print(json.dumps(out, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
