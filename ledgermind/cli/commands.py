"""The subcommands of ``ledgermind`` and the dispatcher that picks one.

Commands are ``module:attr`` targets imported only once a command is chosen: nothing heavy is
imported before. Each ``scripts/NAME.py`` is a thin wrapper around the same ``main``, so the script
and the subcommand can never drift apart.
"""

from __future__ import annotations

import functools
import os
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import ParamSpec

from ledgermind.errors import UserError, first_line
from ledgermind.registry import import_attr

P = ParamSpec("P")

EXIT_USAGE = 2

Main = Callable[[list[str]], int]

# name -> what ``ledgermind --help`` says it does; its main is ``ledgermind.cli.<name>:main``
COMMANDS = {
    "run": "run LedgerMind (or a baseline / ablation) on a benchmark (Hydra overrides)",
    "table3": "build Table 3 from finished runs, with 95 % intervals",
    "report": "build the static HTML report of a run or multirun",
    "rescore": "re-score finished runs from their stored replies",
    "audit": "check claims against evidence (coverage, ECC, NCC) from JSONL",
    "srfa": "S-RFA over a finished run: srfa.jsonl, srfa_metrics.json",
    "compare": "Figure 5 axes of several runs side by side, and the radar chart",
    "serve": "print (or start) the vLLM server command for a model config",
    "plan": "from a pilot sweep: requests, tokens, GPU-hours and items a Table 3 needs",
    "ls": "list the runs (newest first), or with `components` what a run can name",
    "eval-grounding": "the claim auditor's agreement with human annotations on real claims (and its cross-validation)",
    "eval-perception": "OCR and crop-zoom on real gauge and MMMU-Pro images (and the zone choice's cross-validation)",
}
# The claim auditor is a module entry point of its own (``python -m ledgermind.claim_audit``); every
# other command runs as its ``scripts/NAME.py`` does (``as_script``).
OWN_ARGV = {"audit": "ledgermind.claim_audit:main"}


def resolve(name: str) -> Main:
    """The ``main(argv)`` of command ``name`` (imported now, not before)."""
    if name in OWN_ARGV:
        return import_attr(OWN_ARGV[name])
    return as_script(name, import_attr(f"ledgermind.cli.{name.replace('-', '_')}:main"))


def one_line_errors(main: Callable[P, int]) -> Callable[P, int]:
    """A command's user mistake (a missing run, runs that cannot be pooled, a bad option value) ends it
    with one ``error:`` line and exit 2, never a traceback; one home, so no command says it otherwise."""

    @functools.wraps(main)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> int:
        try:
            return main(*args, **kwargs)
        except UserError as e:
            print(f"error: {first_line(e)}", file=sys.stderr)
            return EXIT_USAGE

    return wrapped


@one_line_errors
def run_study(report: Callable[[], str], folds: int) -> int:
    """How the two studies on real data (``eval-grounding``, ``eval-perception``) end: ``report()`` on
    stdout. ``folds`` 0 means no cross-validation; any other K below 2 is refused before the study
    reads its data, so a bad option is reported the same with or without the data at hand, and a
    mistake in K names ``--folds``."""
    from ledgermind.studies.kfold import FoldCountError, check_fold_count

    try:
        if folds:
            check_fold_count(folds)
        text = report()
    except FoldCountError as exc:
        raise UserError(f"--folds {folds}: {exc}") from None
    print(text)
    return 0


def as_script(name: str, target: Callable[[list[str]], int | None]) -> Main:
    """``target`` called as ``python scripts/NAME.py argv…`` calls it, its exit status returned."""

    def main(argv: list[str]) -> int:
        sys.argv = [f"ledgermind {name}", *argv]  # argparse's prog; a Hydra app reads sys.argv itself
        code: int | str | None
        try:
            code = target(argv)
        except SystemExit as e:
            code = e.code
        return code if isinstance(code, int) else (0 if code is None else 1)

    return main


def aligned(table: Sequence[Sequence[str]]) -> str:
    """The rows as text columns, each as wide as its widest cell, two spaces apart: one layout for
    the command listing, the runs and every component listing (``ledgermind ls``)."""
    widths = [max(map(len, column)) for column in zip(*table)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table)


def usage() -> str:
    listing = textwrap.indent(aligned(list(COMMANDS.items())), "  ")
    return f"usage: ledgermind <command> [args]\n\ncommands:\n{listing}"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in {"-h", "--help"}:
        print(usage(), file=sys.stderr)
        return 0 if args else EXIT_USAGE
    if args[0] not in COMMANDS:
        print(f"{usage()}\nledgermind: error: unknown command {args[0]!r}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return int(resolve(args[0])(args[1:]))
    except BrokenPipeError:  # the reader closed the pipe (``| head``): what it wanted was printed
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
