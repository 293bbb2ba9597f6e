"""What a finished run prints: what ran, how it scored (with its interval), what fired, where the
files are and what to do next.

Why one function: the last lines of a run are what a researcher reads first; they must name model,
benchmark and variant (a terminal with three runs in it otherwise says "accuracy 14.29 %" three
times), give the mechanism census with a legend (its keys are the paper's symbols, not words),
and end on the next command — the report, the run list, the W&B sync — instead of a path alone.
In a sweep each job prints one line, its headline and folder: the censuses are in each job's
``metrics.json`` (``print_census=true`` prints them too), and the sweep's table comes after.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ledgermind.metrics.stats import wilson_interval
from ledgermind.trajectory import Trigger

CENSUS_LEGEND = (
    "paths: which pipeline answered; triggers: the verifier's events ("
    + ", ".join(f"{t.name} {t.value.split('_', 1)[1].lower().replace('_', ' ')}" for t in Trigger)
    + "); operators: the typed repairs they called; defense: Alg. 2's answer checks; "
    't5: why a decision lacked support; every counter, zeros included, is in metrics.json "mechanisms"'
)


def headline(metrics: Mapping[str, Any]) -> str:
    """``full on sample with tiny_qwen2_vl, seed 0: accuracy 14.3 % [2.6, 51.3] on 7 scored of 7 items (…)``."""
    ident = metrics.get("identity") or {}
    n, acc = int(metrics.get("n_scored") or 0), float(metrics.get("accuracy") or 0.0)
    ci = wilson_interval(acc * n, n)
    interval = f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}] (95% Wilson CI)" if ci else ""
    accuracy = f"{100 * acc:.1f}%{interval}" if n else "-"  # nothing scored: no number, as `ledgermind ls`
    return (
        f"{ident.get('variant', 'full')} on {ident.get('benchmark', '?')} with {ident.get('model', '?')}, "
        f"seed {ident.get('seed', 0)}: accuracy {accuracy} on {n} scored of "
        f"{metrics.get('n_items', n)} items ({metrics.get('unparsed', 0)} unparsed, {metrics.get('errors', 0)} errors)"
    )


def fired(census: Mapping[str, Any]) -> str:
    """The census's non-zero counters, one group after another (zeros stay in metrics.json)."""
    groups = []
    for key, value in census.items():
        if isinstance(value, Mapping):
            parts = [f"{k} {v}" for k, v in value.items() if isinstance(v, int | float) and v]
            if parts:
                groups.append(f"{key} {', '.join(parts)}")
        elif isinstance(value, int | float) and value:
            groups.append(f"{key} {value}")
    return " · ".join(groups) or "nothing fired"


def next_steps(out_dir: Path) -> str:
    steps = [f"ledgermind report {out_dir}", "ledgermind ls"]
    if any((out_dir / "wandb").glob("offline-run-*")):
        steps.append(f"wandb sync {out_dir}/wandb/offline-run-*")
    return "next: " + "  ·  ".join(steps)


def run_summary(metrics: Mapping[str, Any], out_dir: Path, *, census: bool) -> str:
    """The lines a finished run prints: with ``census``, the mechanism census and its legend, the
    folder and the next commands; without (a sweep's job), one line."""
    if not census:
        return f"{headline(metrics)} -> {out_dir}"
    mechanisms = {k: v for k, v in (metrics.get("mechanisms") or {}).items() if k != "simulator"}
    lines = [headline(metrics), f"census: {fired(mechanisms)}", f"  ({CENSUS_LEGEND})"]
    return "\n".join([*lines, f"output: {out_dir}", next_steps(out_dir)])
