"""The ``ledgermind`` console command: ``ledgermind <command> [args]`` (``[project.scripts]``), and
the logic of every entry point (``scripts/*.py`` are thin wrappers around these modules).

One command, the subcommands of the whole workflow::

    ledgermind run [group=option ...] [+ablation=NAME]   # cli/run.py (scripts/run.py)
    ledgermind table3 MULTIRUN_DIR                        # cli/table3.py (scripts/table3.py)
    ledgermind report RUN_DIR                             # cli/report.py (scripts/report.py)
    ledgermind rescore RUN_DIR                            # cli/rescore.py (scripts/rescore.py)
    ledgermind audit CLAIMS.jsonl                         # the claim auditor: coverage / ECC / NCC on JSONL claims
    ledgermind srfa RUN_DIR [srfa.mode=…]                 # S-RFA over a finished run (cli/srfa.py; scripts/srfa.py)
    ledgermind compare RUN_A RUN_B …                      # Figure 5 side by side (cli/compare.py; scripts/compare.py)
    ledgermind serve model=NAME [--launch]                # cli/serve.py (scripts/serve.py)
    ledgermind plan PILOT [--items N] [--seeds K]         # cli/plan.py: cost and items a Table 3 needs
    ledgermind ls [DIR] | ls components [KIND]            # cli/ls.py: the runs; what a run can name

"audit" means one thing: checking claims against their evidence (``ledgermind.claim_audit``,
also ``python -m ledgermind.claim_audit``). The trace audit of a run is S-RFA, ``srfa``
(``ledgermind/srfa/``, ``conf/srfa.yaml``, ``srfa.jsonl``). Also ``python -m ledgermind`` and
``python -m ledgermind.cli``. Developer tools (wire check, unit table, mutation, output digest)
are in ``ledgermind/devtools/``, the simulator's own commands in ``ledgermind/simulator/commands.py``.
"""

from __future__ import annotations

from ledgermind.cli.commands import COMMANDS, main, resolve, usage

__all__ = ["COMMANDS", "main", "resolve", "usage"]
