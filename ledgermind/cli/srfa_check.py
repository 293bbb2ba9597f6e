"""Check an S-RFA result against the outcome and a person: ``python scripts/srfa_check.py RUN_DIR
[--hand-labels FILE --setting NAME]``.

Prints, for the ledger-mode ``srfa.jsonl`` of RUN_DIR: n right/wrong, mean GDR of each, the
AUROC of per-item GDR for correctness with a 95 % bootstrap interval, how the decision claims
were supported (grounded / computed / derived / ungrounded), the markup "entities" count from
``srfa_metrics.json``, and, with ``--hand-labels``, the agreement with the hand labels of that
setting (docs/srfa_handlabels.jsonl) — over all matched claims and over the claims the text-only
audit could check. ``--mode judge`` reads the judge's labels instead (audit a run with
``srfa.mode=both`` so the judge labels the same claims the hand labels index). Exit 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ledgermind.cli.commands import one_line_errors
from ledgermind.errors import UserError
from ledgermind.runs.reader import RunDir
from ledgermind.srfa.diagnostics import correctness_table, hand_label_agreement, read_hand_labels
from ledgermind.srfa.protocol import checkable_decisions, support_counts, text_label_counts
from ledgermind.srfa.run import SRFA_FILE, read_run_records, srfa_metrics_file


@one_line_errors
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", type=Path)
    p.add_argument("--hand-labels", type=Path)
    p.add_argument("--setting", help="which hand labels apply to this run (their 'setting' field)")
    p.add_argument(
        "--mode", default="ledger", choices=["ledger", "judge"], help="which audit's labels to check"
    )
    args = p.parse_args(argv)
    if not (args.run_dir / SRFA_FILE).is_file():
        raise UserError(f"no {SRFA_FILE} in {args.run_dir} (run scripts/srfa.py first)")
    latest = {a.item_id: a for a in read_run_records(args.run_dir) if a.mode == args.mode and a.error is None}
    out = {
        "correctness": correctness_table(latest.values()),
        "correctness_checkable": correctness_table(checkable_decisions(latest.values())),
        "support": support_counts(latest.values()),
        "text_labels": text_label_counts(latest.values()),
    }
    metrics_file = srfa_metrics_file(args.run_dir)
    # the run folder's one JSON policy: a damaged file is one line (RunFileError), not a traceback
    if metrics_file is not None:
        stored = (RunDir(args.run_dir).json_object(metrics_file.name) or {}).get(args.mode, {})
        out["markup_entities"] = stored.get("markup_entities")
        out["coverage"] = stored.get("coverage")
    if args.hand_labels:
        labels = [h for h in read_hand_labels(args.hand_labels) if args.setting in (None, h.setting)]
        out["hand_labels"] = hand_label_agreement(latest, labels)
    print(json.dumps(out, indent=1, ensure_ascii=False))
    return 0
