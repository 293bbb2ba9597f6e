"""The ``ledgermind`` console command: ``ledgermind <command> [args]`` (``[project.scripts]``).

One command, the subcommands of the whole workflow::

    ledgermind run [group=option ...] [+ablation=NAME]   # scripts/run.py
    ledgermind table3 MULTIRUN_DIR                        # scripts/table3.py
    ledgermind report RUN_DIR                             # scripts/report.py
    ledgermind rescore RUN_DIR                            # scripts/rescore.py
    ledgermind audit CLAIMS.jsonl                         # the claim auditor: coverage / ECC / NCC on JSONL claims
    ledgermind srfa RUN_DIR [audit.mode=…]                # S-RFA over a finished run (scripts/audit.py)
    ledgermind serve model=NAME [--launch]                # scripts/serve.py
    ledgermind plan PILOT --items N [--seeds K]           # scripts/plan.py: cost and items a Table 3 needs

"audit" means one thing: checking claims against their evidence (``ledgermind.audit.claims``,
also ``python -m ledgermind.audit``). The trace audit of a run is S-RFA, ``srfa``; its old
entry point ``scripts/audit.py`` stays as an alias. Each ``scripts/NAME.py`` keeps working and is
what the subcommand runs, so the two can never drift apart. Commands are a registry of lazy
entries (``ledgermind.registry``): nothing heavy is imported until a command is chosen.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ledgermind.registry import Registry

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
EXIT_USAGE = 2

Main = Callable[[list[str]], int]


@dataclass(frozen=True)
class Command:
    """``target``: ``"module:attr"`` (a ``main(argv) -> int``) or ``"scripts/NAME.py"`` (its ``main``)."""

    target: str
    help: str


COMMANDS: Registry[Command] = Registry("command")
for _name, _target, _help in (
    ("run", "scripts/run.py", "run LedgerMind (or a baseline / ablation) on a benchmark (Hydra overrides)"),
    ("table3", "scripts/table3.py", "build Table 3 from finished runs, with 95 % intervals"),
    ("report", "scripts/report.py", "build the static HTML audit report of a run or multirun"),
    ("rescore", "scripts/rescore.py", "re-score finished runs from their stored replies"),
    ("audit", "ledgermind.audit.claims:main", "check claims against evidence (coverage, ECC, NCC) from JSONL"),
    ("srfa", "ledgermind.audit.cli:audit_main", "S-RFA over a finished run (alias: scripts/audit.py)"),
    ("serve", "scripts/serve.py", "print (or start) the vLLM server command for a model config"),
    ("plan", "scripts/plan.py", "from a pilot sweep: requests, tokens, GPU-hours and items a Table 3 needs"),
):
    COMMANDS.add(_name, Command(_target, _help))


def resolve(name: str) -> Main:
    """The ``main(argv)`` of command ``name`` (imported now, not before)."""
    target = COMMANDS.get(name).target
    if target.startswith("scripts/"):
        return _script_main(name, SCRIPTS / target.removeprefix("scripts/"))
    module, attr = target.split(":")
    return getattr(importlib.import_module(module), attr)


def _script_main(name: str, path: Path) -> Main:
    if not path.is_file():
        raise SystemExit(f"ledgermind: error: {name} needs {path} (run from a source checkout)")
    spec = importlib.util.spec_from_file_location(f"ledgermind_script_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def main(argv: list[str]) -> int:
        # scripts/run.py is a Hydra app: it reads sys.argv itself
        sys.argv = [f"ledgermind {name}", *argv]
        try:
            code = module.main() if name == "run" else module.main(argv)
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
    return int(resolve(args[0])(args[1:]))


if __name__ == "__main__":
    sys.exit(main())
