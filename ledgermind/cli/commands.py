"""The subcommands of ``ledgermind`` and the dispatcher that picks one.

Commands are a registry of lazy ``module:attr`` entries (``ledgermind.registry``): nothing heavy is
imported until a command is chosen. Each ``scripts/NAME.py`` is a thin wrapper around the same
``main``, so the script and the subcommand can never drift apart.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ledgermind.registry import Registry, import_attr

EXIT_USAGE = 2

Main = Callable[[list[str]], int]


@dataclass(frozen=True)
class Command:
    """``target``: ``"module:attr"``, a ``main(argv) -> int | None``.

    ``as_script``: the command runs as its ``scripts/NAME.py`` does — ``sys.argv[0]`` is
    ``ledgermind NAME`` (what argparse prints in its usage, what Hydra reads) and a ``SystemExit``
    becomes the return code. The claim auditor and S-RFA were module entry points from the start
    and keep their own argv handling.
    """

    target: str
    help: str
    as_script: bool = True


COMMANDS: Registry[Command] = Registry("command")
for _name, _target, _help, _as_script in (
    (
        "run",
        "ledgermind.cli.run:main",
        "run LedgerMind (or a baseline / ablation) on a benchmark (Hydra overrides)",
        True,
    ),
    ("table3", "ledgermind.cli.table3:main", "build Table 3 from finished runs, with 95 % intervals", True),
    ("report", "ledgermind.cli.report:main", "build the static HTML report of a run or multirun", True),
    ("rescore", "ledgermind.cli.rescore:main", "re-score finished runs from their stored replies", True),
    (
        "audit",
        "ledgermind.claim_audit:main",
        "check claims against evidence (coverage, ECC, NCC) from JSONL",
        False,
    ),
    ("srfa", "ledgermind.cli.srfa:main", "S-RFA over a finished run: srfa.jsonl, srfa_metrics.json", False),
    (
        "compare",
        "ledgermind.cli.compare:main",
        "Figure 5 axes of several runs side by side, and the radar chart",
        True,
    ),
    (
        "serve",
        "ledgermind.cli.serve:main",
        "print (or start) the vLLM server command for a model config",
        True,
    ),
    (
        "plan",
        "ledgermind.cli.plan:main",
        "from a pilot sweep: requests, tokens, GPU-hours and items a Table 3 needs",
        True,
    ),
    (
        "ls",
        "ledgermind.cli.ls:main",
        "list the runs (newest first), or with `components` what a run can name",
        True,
    ),
    (
        "eval-grounding",
        "ledgermind.cli.eval_grounding:main",
        "the claim auditor's agreement with human annotations on real claims (and its cross-validation)",
        True,
    ),
    (
        "eval-perception",
        "ledgermind.cli.eval_perception:main",
        "OCR and crop-zoom on real gauge and MMMU-Pro images (and the zone choice's cross-validation)",
        True,
    ),
):
    COMMANDS.add(_name, Command(_target, _help, _as_script))


def resolve(name: str) -> Main:
    """The ``main(argv)`` of command ``name`` (imported now, not before)."""
    command = COMMANDS.get(name)
    target = import_attr(command.target)
    return as_script(name, target) if command.as_script else target


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


def usage() -> str:
    width = max(map(len, COMMANDS))
    listing = "\n".join(f"  {n:<{width}}  {COMMANDS.get(n).help}" for n in COMMANDS)
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
