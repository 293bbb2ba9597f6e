"""Build Table 3 (ablations) from finished runs, with 95 % intervals.

    python scripts/run.py -m +experiment=table3 [seed=0]          # the variants of conf/ablation × seeds 0,1,2
    python scripts/table3.py outputs/multirun/<date>/<time> [--paper] [--out DIR] [--logger auto|none|offline|online]
        [--resamples 10000] [--bootstrap-seed 0]

Arguments are run dirs or multirun dirs (their sub-dirs are scanned); each run's variant and seed
come from its metrics.json identity. Every variant must have run every seed. Each row shows the
accuracy pooled over items (and seeds) with a 95 % item-bootstrap interval (named "sim. error" on
simulated runs), Δ vs full with a paired bootstrap interval, its bootstrap p and the Holm-adjusted p
over the table's "variant vs full" comparisons, the exact McNemar p-value (one per seed) and whether
the Δ is distinguishable from 0 after Holm. Column headers carry each split's n. A sweep whose
items all errored is refused (exit 2). Writes table3.md/.csv/.tex/.png into --out (default: the first argument). Exit code 2 with one line when runs are missing,
unfinished or not comparable (different model, benchmark or item set, or a different protocol:
model revision, prompt hashes, decoding, image budget) unless --allow-mixed. The shared protocol
is printed under the table.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ledgermind.cli.commands import one_line_errors
from ledgermind.experiment import table3, table3_protocol, table3_render
from ledgermind.experiment.wandb_logger import ExperimentLogger, WandbLogger
from ledgermind.metrics.stats import DEFAULT_RESAMPLES, BootstrapConfig
from ledgermind.runs.reader import find_runs


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


@one_line_errors
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path, help="run dirs or multirun dirs")
    p.add_argument("--out", type=Path, default=None, help="where to write table3.* (default: first argument)")
    p.add_argument("--paper", action="store_true", help="print the paper's Table 3 values side by side")
    p.add_argument(
        "--census", action="store_true", help="print every run's mechanism census (always in census.md)"
    )
    p.add_argument(
        "--allow-mixed",
        action="store_true",
        help="tabulate runs whose protocol differs (items, model/revision, prompts, decoding, image budget)",
    )
    p.add_argument(
        "--resamples",
        type=_positive,
        default=DEFAULT_RESAMPLES,
        help="bootstrap resamples (default %(default)s)",
    )
    p.add_argument(
        "--bootstrap-seed", type=int, default=0, help="RNG seed of the bootstrap (default %(default)s)"
    )
    p.add_argument(
        "--logger",
        choices=["auto", "none", "offline", "online"],
        default="auto",
        help="W&B logging of the table; auto (default): none, since a run folder's logger settings are never "
        "followed; ask for offline or online explicitly",
    )
    args = p.parse_args(argv)
    run_dirs = find_runs(args.runs)
    runs = [table3.load_run(d) for d in run_dirs]
    boot = BootstrapConfig(resamples=args.resamples, seed=args.bootstrap_seed)
    rows = table3.build_rows(runs, with_paper=args.paper, allow_mixed=args.allow_mixed, bootstrap=boot)
    # reads each run's recorded config: a damaged one is refused here, in one line
    footer = table3_protocol.protocol_footer(runs)
    out_dir = args.out or args.runs[0]
    # a table file that is a link is refused before anything is written
    outs = table3_render.write_outputs(rows, runs, out_dir, with_paper=args.paper, bootstrap=boot)
    ctx = table3.context_of(runs)
    label = table3.label_of(runs).line  # what answered: the first line, as on every file
    print((f"{label}\n" if label else "") + footer + "\n")
    if args.census:
        print('Mechanism census (metrics.json["mechanisms"], summed over items; calls per item):')
        print(table3_render.census_markdown(runs) + "\n")
    print(table3_render.method_note(rows, boot, ctx) + "\n")
    print(f"{table3.heading_for(runs)}. Δ is relative to the full framework on Overall.")
    if args.paper:
        ref = table3.load_paper_table3()
        print(f"Paper columns: {ref['benchmark']} with {ref['model']} (the paper's Table 3).")
    print(table3_render.to_markdown(rows, with_paper=args.paper, ctx=ctx))
    print(table3_render.NOT_DISTINGUISHABLE_MEANS)
    print(table3_render.detectable_line(runs))
    print(
        f"wrote {outs.markdown}, {outs.csv.name}, {outs.latex.name}, {outs.chart.name}, "
        f"{outs.census.name} (the mechanism census of every run{'' if args.census else '; --census prints it'})"
    )

    # auto: a run folder is data, its logger node is never followed (its online mode, entity or
    # project would send the reader's W&B key where the folder's maker chose); log only when asked
    logger = WandbLogger(mode=args.logger) if args.logger in ("offline", "online") else ExperimentLogger()
    logger.start(
        out_dir=out_dir, config={"runs": [str(d) for d in run_dirs]}, **table3.logger_fields(runs, args.runs)
    )
    try:
        logger.log_table3([table3_render.csv_values(r) for r in rows], outs.chart)
    finally:
        logger.finish()
    return 0
