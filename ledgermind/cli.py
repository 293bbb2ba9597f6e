"""The ``ledgermind`` console script: ``ledgermind <command> [args]``.

Each command is a module whose ``main(argv) -> int`` owns its own argument parsing, so this file
only dispatches.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

COMMANDS = {
    "audit": ("ledgermind.audit", "check claims against evidence (coverage, ECC, NCC) from JSONL"),
}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in {"-h", "--help"} or args[0] not in COMMANDS:
        width = max(map(len, COMMANDS))
        listing = "\n".join(f"  {name:<{width}}  {help_}" for name, (_, help_) in COMMANDS.items())
        print(f"usage: ledgermind <command> [args]\n\ncommands:\n{listing}", file=sys.stderr)
        unknown = bool(args) and args[0] not in {"-h", "--help"}
        if unknown:
            print(f"ledgermind: error: unknown command {args[0]!r}", file=sys.stderr)
        return 2 if unknown or not args else 0
    module = importlib.import_module(COMMANDS[args[0]][0])
    return int(module.main(args[1:]))


if __name__ == "__main__":
    sys.exit(main())
