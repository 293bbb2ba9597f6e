"""How the two studies on real data (``eval-grounding``, ``eval-perception``) end: the report on
stdout, or one ``error:`` line and exit 2 for a user mistake (a missing file, a K the items cannot
split). One home, so the two commands cannot drift apart in what a mistake looks like."""

from __future__ import annotations

import sys
from collections.abc import Callable

from ledgermind.cli.commands import EXIT_USAGE
from ledgermind.errors import UserError
from ledgermind.studies.kfold import FoldCountError, check_fold_count


def run_study(report: Callable[[], str], folds: int) -> int:
    """Print ``report()``; a :class:`UserError` is one line (naming ``--folds`` when K was the mistake).

    ``folds`` 0 means no cross-validation; any other K below 2 is refused before the study reads its
    data, so a bad option is reported the same with or without the data at hand."""
    try:
        if folds:
            check_fold_count(folds)
        text = report()
    except UserError as exc:
        where = f"--folds {folds}: " if isinstance(exc, FoldCountError) else ""
        print(f"error: {where}{exc}", file=sys.stderr)
        return EXIT_USAGE
    print(text)
    return 0
