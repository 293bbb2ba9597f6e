"""Table 3 (ablations): collect finished runs, check they are comparable, render the paper's layout
with the uncertainty a reader needs to tell a mechanism's effect from noise.

Numbers come from each run's ``results.jsonl`` (the source of truth); ``metrics.json`` supplies
the run identity, and the identity alone says which variant and which seed a run is (never its
directory name). Runs that differ in model, benchmark or item set are refused, because a Δ
between them would measure the data, not the ablated component.

With several seeds (``scripts/run.py -m seed=0,1,2 +ablation=...``) every variant must have run
every seed; a row then pools all (item, seed) scores. Intervals (``metrics/stats.py``) are item
bootstraps that resample each item with all its seeds; Δ vs ``full`` is paired per (item, seed).
Errored items are left out of their run's accuracy (as in ``metrics.json``); a pair enters Δ and
McNemar only when both runs scored that item in that seed.

Runs that differ in model, benchmark, item contents or protocol are refused, a variant twice or a
missing seed too. Rendering the rows (Markdown, CSV, LaTeX, chart, census) is ``table3_render.py``; the protocol note
under them is ``table3_protocol.py``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from ledgermind.errors import UserError
from ledgermind.experiment.artefact_label import ArtefactLabel, combined, label_for
from ledgermind.experiment.table3_protocol import protocol_identity
from ledgermind.experiment.variants import display_name, names
from ledgermind.metrics.stats import (
    BootstrapConfig,
    Estimate,
    bootstrap_p_value,
    cluster_mean,
    discordant_pairs,
    holm,
    mcnemar_exact,
    paired_delta,
    paired_differences,
)
from ledgermind.runs.files import METRICS_FILE, RESULTS_FILE
from ledgermind.runs.provenance import abbreviate, protocol_mismatch
from ledgermind.runs.reader import RunDir
from ledgermind.runs.summary import RunIdentity, items_hash

COLUMNS = ("Easy", "Medium", "Hard", "Overall")
MUST_MATCH = ("model", "benchmark", "items_sha256")


class Table3Error(UserError):
    """The given runs cannot form one table (missing, unfinished, or not comparable)."""


@dataclass(frozen=True)
class RunScores:
    """One finished run: its identity and, per item, its score (``None``: the item errored)."""

    run_dir: Path
    identity: RunIdentity
    mechanisms: dict[str, Any] = field(default_factory=dict)  # metrics.json["mechanisms"] (the census)
    item_scores: dict[str, float | None] = field(default_factory=dict)
    difficulty: dict[str, str | None] = field(default_factory=dict)

    @property
    def scores(self) -> dict[str, float | None]:
        """Column -> accuracy in percent over the scored items; None if none."""
        return column_scores([self])

    @property
    def variant(self) -> str:
        return self.identity.variant

    @property
    def seed(self) -> int:
        return self.identity.seed

    @property
    def errors(self) -> int:
        return sum(1 for v in self.item_scores.values() if v is None)


# ---------------------------------------------------------------------------------- collection
def load_run(run_dir: Path) -> RunScores:
    run = RunDir(run_dir)
    metrics = run.metrics()
    if metrics is None:
        raise Table3Error(
            f"{run_dir} has no {METRICS_FILE}: the run did not finish (start it again to resume)"
        )
    identity = run.run_identity(metrics)
    results = run.results()
    # the item set by content (by ids: older runs)
    if items_hash(r.item_sha256 or r.id for r in results) != identity.items_sha256:
        raise Table3Error(
            f"{run_dir}: {RESULTS_FILE} holds {len(results)} items but {METRICS_FILE} was written for "
            f"{identity.n_items}; finish or resume the run before building Table 3"
        )
    item_scores = {r.id: (None if r.error is not None else r.score) for r in results}
    difficulty = {r.id: r.difficulty for r in results}
    return RunScores(run.path, identity, dict(metrics.get("mechanisms") or {}), item_scores, difficulty)


def column_scores(runs: Sequence[RunScores]) -> dict[str, float | None]:
    """Accuracy (percent) per column, pooled over the given runs' scored items (errored ones left out)."""
    scores: dict[str, float | None] = {}
    for col in COLUMNS:
        sel = [
            s
            for r in runs
            for item_id, s in r.item_scores.items()
            if s is not None and (col == "Overall" or r.difficulty.get(item_id) == col)
        ]
        scores[col] = 100.0 * sum(sel) / len(sel) if sel else None
    return scores


def _check_protocol(runs: Sequence[RunScores]) -> None:
    for field_name in MUST_MATCH:
        values = {getattr(r.identity, field_name) for r in runs}
        if len(values) > 1:
            detail = "; ".join(f"{r.run_dir}: {abbreviate(getattr(r.identity, field_name))}" for r in runs)
            what = "item sets" if field_name == "items_sha256" else f"{field_name}s"
            raise Table3Error(f"refusing to mix runs with different {what}: {detail}")
    mismatch = protocol_mismatch([(str(r.run_dir), protocol_identity(r)) for r in runs])
    if mismatch:
        raise Table3Error(f"refusing to mix runs: {mismatch}")


def check_scored(runs: Sequence[RunScores]) -> None:
    """A table of dashes is not a result: refuse when no run scored a single item."""
    if any(s is not None for r in runs for s in r.item_scores.values()):
        return
    errored = sum(r.errors for r in runs)
    raise Table3Error(
        f"no item was scored in any of the {len(runs)} runs ({errored} errored results): nothing to tabulate; "
        "their errors are in each run's results.jsonl, and rerunning the same command retries them"
    )


def _check_grid(runs: Sequence[RunScores]) -> None:
    """Every variant ran every seed, once: a row pooled over other seeds than its reference is not paired."""
    seen: dict[tuple[str, int], Path] = {}
    for r in runs:
        if (r.variant, r.seed) in seen:
            raise Table3Error(
                f"variant {r.variant!r} appears twice (seed {r.seed}): {seen[r.variant, r.seed]} and {r.run_dir}"
            )
        seen[r.variant, r.seed] = r.run_dir
    every = seeds_of(runs)
    for variant, per_seed in group_by_variant(runs).items():
        if tuple(sorted(per_seed)) != every:
            missing = ", ".join(str(s) for s in every if s not in per_seed)
            raise Table3Error(
                f"variant {variant!r} has no run for seed {missing} (the runs cover seeds "
                f"{', '.join(map(str, every))}); run the missing seeds or leave the extra ones out"
            )


def seeds_of(runs: Sequence[RunScores]) -> tuple[int, ...]:
    return tuple(sorted({r.seed for r in runs}))


def group_by_variant(runs: Sequence[RunScores]) -> dict[str, dict[int, RunScores]]:
    """``variant -> seed -> run`` in Table 3's row order (identity fields only)."""
    out: dict[str, dict[int, RunScores]] = {}
    for r in in_variant_order(runs):
        out.setdefault(r.variant, {})[r.seed] = r
    return out


def in_variant_order(runs: Sequence[RunScores]) -> list[RunScores]:
    """Table 3's row order (``conf/ablation``: full, the ablations as in the paper, baseline); unknown
    variants last."""
    order = {name: i for i, name in enumerate(names())}
    return sorted(runs, key=lambda r: (order.get(r.variant, len(order)), r.variant, r.seed))


NOT_DISTINGUISHABLE = "not distinguishable"  # Holm-adjusted p ≥ α over the "variant vs full" family
BELOW_FULL, ABOVE_FULL = "below full", "above full"


@dataclass(frozen=True)
class Row:
    variant: str
    display: str
    scores: dict[str, float | None]  # pooled over items and seeds, percent
    delta: float | None  # paired Δ vs full (Overall), in points
    paper: dict[str, float | None] | None = None
    overall: Estimate | None = None  # Overall with its 95 % interval (percent)
    delta_ci: Estimate | None = None  # paired bootstrap of Δ vs full (points)
    mcnemar_p: tuple[float | None, ...] = ()  # exact McNemar vs full, one per seed (None: no pair)
    seeds: tuple[int, ...] = (0,)
    overall_by_seed: tuple[float | None, ...] = ()
    delta_by_seed: tuple[float | None, ...] = ()
    errors: int = 0  # errored (item, seed) results of this variant
    p_value: float | None = None  # two-sided paired-bootstrap p of Δ = 0 (the test behind Δ's interval)
    p_holm: float | None = None  # the same, Holm-adjusted over every "variant vs full" row of the table
    alpha: float = 0.05  # family-wise level (1 − the interval level)

    @property
    def verdict(self) -> str | None:
        """Whether Δ differs from 0 after Holm's family-wise adjustment over the table's "vs full" rows
        (the raw interval alone would call one of six null ablations distinguishable ~21 % of the time);
        ``None`` for ``full`` itself (or without ``full``), and before ``with_holm`` adjusted the row."""
        if self.delta_ci is None or self.p_holm is None:
            return None
        if self.p_holm >= self.alpha:
            return NOT_DISTINGUISHABLE
        return BELOW_FULL if self.delta_ci.mean < 0 else ABOVE_FULL


@dataclass(frozen=True)
class Table3Context:
    """What a rendering needs beside the rows: each column's n (distinct items of that split) and
    whether the runs are simulated — their intervals then measure simulation error (the simulator's
    draws and the item sample), not uncertainty about any real model, and are named so."""

    n: dict[str, int] = field(default_factory=dict)
    simulated: bool = False

    @property
    def interval(self) -> str:
        return "95% sim. error" if self.simulated else "95% CI"


def context_of(runs: Sequence[RunScores]) -> Table3Context:
    ids: dict[str, set[str]] = {c: set() for c in COLUMNS}
    for r in runs:
        for item_id, difficulty in r.difficulty.items():
            ids["Overall"].add(item_id)
            if difficulty in ids:
                ids[difficulty].add(item_id)
    return Table3Context({c: len(v) for c, v in ids.items()}, "SIMULATED" in label_of(runs).kind)


# ---------------------------------------------------------------------------------- building
def load_paper_table3() -> dict[str, Any]:
    return json.loads(resources.files("ledgermind.experiment").joinpath("paper_table3.json").read_text())


def item_matrix(per_seed: dict[int, RunScores], seeds: Sequence[int]) -> dict[str, list[float | None]]:
    """``item -> [score in seed s for s in seeds]`` (``None``: errored in that seed)."""
    ids = sorted({i for r in per_seed.values() for i in r.item_scores})
    return {i: [per_seed[s].item_scores.get(i) for s in seeds] for i in ids}


def build_rows(
    runs: Sequence[RunScores],
    *,
    with_paper: bool = False,
    allow_mixed: bool = False,
    bootstrap: BootstrapConfig = BootstrapConfig(),
) -> list[Row]:
    if not allow_mixed:
        _check_protocol(runs)
    _check_grid(runs)
    check_scored(runs)
    seeds = seeds_of(runs)
    by_variant = group_by_variant(runs)
    paper = load_paper_table3()["rows"] if with_paper else {}
    rows = []
    for variant, per_seed in by_variant.items():
        row = _row(variant, per_seed, by_variant.get("full"), seeds, bootstrap)
        p = paper.get(variant)
        rows.append(replace(row, paper=({c: p[c] for c in COLUMNS} | {"delta": p["delta"]}) if p else None))
    return with_holm(rows, alpha=1.0 - bootstrap.level)


def with_holm(rows: Sequence[Row], alpha: float = 0.05) -> list[Row]:
    """Holm-adjust the raw p-values of every row compared with ``full`` (one family per table)."""
    family = [i for i, r in enumerate(rows) if r.p_value is not None]
    adjusted = dict(zip(family, holm([rows[i].p_value for i in family]), strict=True))  # type: ignore[misc]
    return [replace(r, p_holm=adjusted.get(i), alpha=alpha) for i, r in enumerate(rows)]


def _row(
    variant: str,
    per_seed: dict[int, RunScores],
    full: dict[int, RunScores] | None,
    seeds: tuple[int, ...],
    bootstrap: BootstrapConfig,
) -> Row:
    """One variant's row: pooled accuracies, their interval, and (vs ``full``) Δ, its interval, McNemar."""
    matrix = item_matrix(per_seed, seeds)
    clusters = [[v for v in vals if v is not None] for vals in matrix.values()]
    row = Row(
        variant,
        display_name(variant),
        column_scores([per_seed[s] for s in seeds]),
        None,
        overall=cluster_mean(clusters, bootstrap).scaled(100.0) if any(clusters) else None,
        seeds=seeds,
        overall_by_seed=tuple(per_seed[s].scores["Overall"] for s in seeds),
        errors=sum(per_seed[s].errors for s in seeds),
    )
    if full is None or variant == "full":
        return row
    full_items = item_matrix(full, seeds)
    delta_ci = p_value = None
    if any(differences := paired_differences(matrix, full_items)):  # some (item, seed) scored by both
        delta_ci = paired_delta(matrix, full_items, bootstrap).scaled(100.0)
        p_value = bootstrap_p_value(differences, bootstrap)
    return replace(
        row,
        delta=delta_ci.mean if delta_ci else None,
        delta_ci=delta_ci,
        p_value=p_value,
        mcnemar_p=tuple(_mcnemar(per_seed[s], full[s]) for s in seeds),
        delta_by_seed=tuple(_seed_delta(per_seed[s], full[s]) for s in seeds),
    )


def _mcnemar(run: RunScores, full: RunScores) -> float | None:
    """Exact McNemar p within one seed; None when no item was scored by both runs: nothing was
    compared, and p = 1 there would read as a test that found no difference."""
    if not any(s is not None and full.item_scores.get(i) is not None for i, s in run.item_scores.items()):
        return None
    b, c = discordant_pairs(full.item_scores, run.item_scores)  # only full right, only the variant right
    return mcnemar_exact(b, c)


def _seed_delta(run: RunScores, full: RunScores) -> float | None:
    """Paired Δ (points) within one seed, over the items both runs scored."""
    pairs = [
        (s, f)
        for i, s in run.item_scores.items()
        if s is not None and (f := full.item_scores.get(i)) is not None
    ]
    return 100.0 * sum(a - b for a, b in pairs) / len(pairs) if pairs else None


def label_of(runs: Sequence[RunScores]) -> ArtefactLabel:
    """What answered the runs (SIMULATED / REPLAYED / TINY MODEL, or nothing for a real model)."""
    return combined(label_for(r.identity.to_dict()) for r in runs)


def heading_for(runs: Sequence[RunScores]) -> str:
    """What a Table 3 is of: benchmark, items, seeds and model (a chart's title, a caption's start)."""
    ident = runs[0].identity
    seeds = seeds_of(runs)
    over = f", {len(seeds)} seeds" if len(seeds) > 1 else ""
    # the distinct items of every run, as the Overall column's n: runs of other item sets
    # (--allow-mixed) would otherwise be counted by whichever run was named first
    n_items = context_of(runs).n["Overall"]
    return f"Table 3 — {ident.benchmark} ({n_items} items{over}), {ident.model}"


def caption_for(runs: Sequence[RunScores]) -> str:
    line = label_of(runs).line
    label = f"{line}. " if line else ""
    return label + f"{heading_for(runs)}. Δ is relative to the full framework on Overall."


def logger_fields(runs: Sequence[RunScores], given: Sequence[Path]) -> dict[str, Any]:
    """Name, group and tags of the logged ``table3`` run: beside its runs (a multirun's group is its
    sweep directory, as each job logs it), tagged with what answered (``simulated`` ...), model and benchmark."""
    ident = runs[0].identity
    group = (
        str(given[0])
        if len(given) == 1 and Path(given[0]) not in {r.run_dir for r in runs}
        else ident.benchmark
    )
    label = label_of(runs)
    prefix = f"{label.kind.lower().replace(' ', '-')}-" if label else ""
    return {
        "name": f"{prefix}table3-{ident.model}",
        "group": group,
        "job_type": "table3",
        "tags": ["table3", f"model:{ident.model}", f"benchmark:{ident.benchmark}", *label.tags],
    }
