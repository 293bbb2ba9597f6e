"""Table 3 rendered: Markdown, CSV, LaTeX, the chart, the census, and plain rows for W&B.

Why apart from ``table3.py``: that module decides which runs form a table and computes its rows
(accuracies, intervals, Δ, McNemar); this one only formats finished ``Row``s, so a change of
layout never touches the statistics. matplotlib is imported only when the chart is drawn. The
chart is the one artefact that travels alone (pasted into a slide), so it names its benchmark,
model and what answered in its own title and PNG metadata.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledgermind.experiment.plan import paired_discordance
from ledgermind.experiment.table3 import (
    ABOVE_FULL,
    BELOW_FULL,
    COLUMNS,
    NOT_DISTINGUISHABLE,
    Row,
    RunScores,
    Table3Context,
    caption_for,
    context_of,
    heading_for,
    in_variant_order,
    label_of,
    seeds_of,
)
from ledgermind.markdown import md_table
from ledgermind.metrics.census import census_table
from ledgermind.metrics.plan import ALPHA, POWER, smallest_detectable_delta
from ledgermind.metrics.stats import BootstrapConfig, Estimate
from ledgermind.runs.atomic import atomic_write, inside


def _fmt(v: float | None, col: str) -> str:
    if v is None:
        return "–"
    return f"{v:.2f}" if col == "Overall" else f"{v:.1f}"


def _fmt_delta(v: float | None) -> str:
    return "–" if v is None else f"{v:+.2f}".replace("-", "−")


def _fmt_ci(e: Estimate | None) -> str:
    return "–" if e is None else f"[{e.low:.2f}, {e.high:.2f}]".replace("-", "−")


def _fmt_p(ps: Sequence[float | None]) -> str:
    """One p per seed joined by " / "; "–" for a seed (or a row) where nothing was compared."""
    if all(p is None for p in ps):
        return "–"
    return " / ".join("–" if p is None else f"{p:.3g}" for p in ps)


def header(with_paper: bool, ctx: Table3Context = Table3Context()) -> list[str]:
    """Column names; each split carries its n (distinct items) and the interval says what it measures."""
    splits = [f"{c} (n={ctx.n[c]})" if c in ctx.n else c for c in COLUMNS]
    cols = [
        "Variant",
        *splits,
        ctx.interval,
        "Δ vs full",
        f"Δ {ctx.interval} (paired)",
        "p",
        "p Holm",
        "McNemar p",
        "Δ vs 0 (Holm)",
    ]
    return cols + [f"Paper {c}" for c in COLUMNS] + ["Paper Δ"] if with_paper else cols


def cells(row: Row, with_paper: bool) -> list[str]:
    out = [
        row.display,
        *(_fmt(row.scores[c], c) for c in COLUMNS),
        _fmt_ci(row.overall),
        _fmt_delta(row.delta),
        _fmt_ci(row.delta_ci),
        _fmt_p(() if row.p_value is None else (row.p_value,)),
        _fmt_p(() if row.p_holm is None else (row.p_holm,)),
        _fmt_p(row.mcnemar_p),
        row.verdict or "–",
    ]
    if with_paper:
        p = row.paper or {}
        out += [_fmt(p.get(c), c) for c in COLUMNS] + [_fmt_delta(p.get("delta"))]
    return out


def method_note(
    rows: Sequence[Row], bootstrap: BootstrapConfig = BootstrapConfig(), ctx: Table3Context = Table3Context()
) -> str:
    """How to read the intervals and how errored items were treated (printed under every rendering)."""
    seeds = rows[0].seeds if rows else (0,)
    several = len(seeds) > 1
    level = f"{100 * bootstrap.level:g} %"
    over = "items"
    if several:
        over = f"items × {len(seeds)} seeds {', '.join(map(str, seeds))} (each item resampled with all its seeds)"
    errs = ", ".join(f"{r.variant} {r.errors}" for r in rows)
    family = sum(1 for r in rows if r.p_value is not None)
    sim = (
        " SIMULATED runs: every interval is simulation error (the spread of the simulator's draws and of the item "
        "sample), not uncertainty about any real model; more seeds shrink it whether or not an effect is real."
        if ctx.simulated
        else ""
    )
    return (
        f"Accuracy and Δ are pooled over {over}; n in a column header counts its distinct items. "
        f"Intervals ({ctx.interval}): {level} percentile bootstrap over items, the only interval method in this "
        f"table and its chart ({bootstrap.resamples} resamples, seed {bootstrap.seed}); Δ = variant − full, paired "
        f"per item{' and seed' if several else ''}. p: two-sided paired-bootstrap p of Δ = 0 (same resamples); "
        f"p Holm: Holm-adjusted over the {family} 'variant vs full' comparisons. Δ vs 0 (Holm): "
        f"'{NOT_DISTINGUISHABLE}' when p Holm ≥ {1 - bootstrap.level:.2g}, else below/above full (family-wise "
        f"error ≤ {1 - bootstrap.level:.2g}). McNemar p: exact two-sided binomial test on the items where exactly "
        f"one of the variant and full is correct{', one p per seed' if several else ''} (unadjusted, for reference). "
        f"Errored items (per variant: {errs}) are left out of their run's accuracy, and an (item, seed) pair enters "
        f"Δ and McNemar only when both runs scored it.{sim}"
    )


def to_markdown(rows: Sequence[Row], with_paper: bool = False, ctx: Table3Context = Table3Context()) -> str:
    return "\n".join(md_table(header(with_paper, ctx), [cells(r, with_paper) for r in rows])) + "\n"


def csv_values(r: Row) -> dict[str, Any]:
    """One row's raw numbers, no formatting (per-seed values joined by ';'), by CSV column."""
    return {
        "variant": r.variant,
        "display": r.display,
        **{c: r.scores[c] for c in COLUMNS},
        **_bounds("overall_ci", r.overall),
        **_bounds("delta_ci", r.delta_ci),
        "verdict": r.verdict,
        "p_value": r.p_value,
        "p_holm": r.p_holm,
        "mcnemar_p": _joined(r.mcnemar_p),
        "seeds": _joined(r.seeds),
        "overall_by_seed": _joined(r.overall_by_seed),
        "delta_by_seed": _joined(r.delta_by_seed),
        "n_items": r.overall.n if r.overall else 0,
        "errors": r.errors,
        "delta_vs_full": r.delta,
    }


def to_csv(rows: Sequence[Row]) -> str:
    """Machine-readable: one ``csv_values`` line per row under its column names."""
    buf = io.StringIO()
    values = [csv_values(r) for r in rows]
    # a table has a row: full's at least
    csv.writer(buf).writerows([list(values[0]), *(v.values() for v in values)])
    return buf.getvalue()


def _bounds(name: str, e: Estimate | None) -> dict[str, float | None]:
    return {f"{name}_low": e.low if e else None, f"{name}_high": e.high if e else None}


def _joined(values: Sequence[Any]) -> str:
    return ";".join("" if v is None else str(v) for v in values)


# LaTeX's special characters and the table's Unicode signs, replaced in one pass
TEX = str.maketrans(
    {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "_": r"\_", "#": r"\#"}
    | {"−": "$-$", "Δ": r"$\Delta$", "–": "--", "×": r"$\times$"}
)


def to_latex(rows: Sequence[Row], caption: str, ctx: Table3Context = Table3Context()) -> str:
    head = header(False, ctx)
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{caption.translate(TEX)}}}",
        r"\resizebox{\linewidth}{!}{%",
        r"\begin{tabular}{l" + "c" * (len(head) - 2) + "l}",
        r"\toprule",
        " & ".join(h.translate(TEX) for h in head) + r" \\",
        r"\midrule",
    ]
    for i, r in enumerate(rows):
        lines.append(" & ".join(c.translate(TEX) for c in cells(r, False)) + r" \\")
        if i == 0 and r.variant == "full":
            lines.append(r"\midrule")
    lines += [r"\bottomrule", r"\end{tabular}}", r"\end{table}"]
    return "\n".join(lines) + "\n"


@dataclass
class Table3Outputs:
    markdown: Path
    csv: Path
    latex: Path
    chart: Path
    census: Path


def write_outputs(
    rows: Sequence[Row],
    runs: Sequence[RunScores],
    out_dir: Path,
    with_paper: bool,
    bootstrap: BootstrapConfig = BootstrapConfig(),
) -> Table3Outputs:
    outs = Table3Outputs(
        *(out_dir / n for n in ("table3.md", "table3.csv", "table3.tex", "table3.png", "census.md"))
    )
    ctx = context_of(runs)
    note = method_note(rows, bootstrap, ctx)
    line = label_of(runs).line  # SIMULATED / REPLAYED / TINY MODEL: the first line of every file
    head = f"**{line}**\n\n" if line else ""
    texts: dict[Path, str | bytes] = {
        outs.markdown: head + to_markdown(rows, with_paper, ctx) + "\n" + note + "\n",
        # a '#' comment line (read with pandas.read_csv(..., comment="#")); the header row follows it
        outs.csv: (f"# {line}\n" if line else "") + to_csv(rows),
        outs.latex: to_latex(rows, caption_for(runs) + " " + note, ctx),
        outs.chart: plot(rows, heading_for(runs), line, ctx),
        outs.census: head + census_markdown(runs) + "\n",
    }
    for path in texts:  # every link refused before any file is written
        inside(out_dir, path)
    for path, data in texts.items():
        atomic_write(out_dir, path, data)
    return outs


def census_markdown(runs: Sequence[RunScores]) -> str:
    """The mechanism census of every run side by side (same order as the table's rows; one row per seed)."""
    several = len(seeds_of(runs)) > 1
    # the census (metrics.json) sums the scored items' trajectories: its rows count those items, and
    # calls per item divide by them, never by errored items whose calls it does not hold
    return census_table(
        (
            f"{r.variant} (seed {r.seed})" if several else r.variant,
            sum(1 for s in r.item_scores.values() if s is not None),
            r.mechanisms,
        )
        for r in in_variant_order(runs)
    )


NOT_DISTINGUISHABLE_MEANS = (
    f"{NOT_DISTINGUISHABLE}: the Holm-adjusted p of Δ vs full is ≥ 0.05, so these items cannot tell the variant "
    "from full; that is no evidence that the two are equal"
)


def detectable_line(runs: Sequence[RunScores]) -> str:
    """The smallest Δ a table of these items can detect (exact McNemar vs full, α 0.05, power 80 %), at
    the discordance its own variant/full pairs show: what "not distinguishable" can and cannot rule out."""
    full = {r.seed: r for r in runs if r.variant == "full"}
    d = paired_discordance(
        (full[r.seed].item_scores, r.item_scores) for r in runs if r.seed in full and r is not full[r.seed]
    )
    n = context_of(runs).n.get("Overall", 0)
    if not d.pairs or not n:
        return "smallest detectable Δ: no variant/full pairs to estimate it from"
    sdd = smallest_detectable_delta(n, d.psi)
    what = "more than 100 pts (none)" if sdd is None else f"{100 * sdd:.1f} pts"
    return (
        f"smallest Δ these {n} items can detect: {what} (exact McNemar vs full, α = {ALPHA}, power {POWER:.0%}, "
        f"at the discordance seen here, ψ = {d.psi:.2f}); ledgermind plan sizes a table for a smaller Δ"
    )


# ---------------------------------------------------------------------------------- the chart
VERDICT_COLOURS = {NOT_DISTINGUISHABLE: "tab:gray", BELOW_FULL: "tab:red", ABOVE_FULL: "tab:green"}


def plot(rows: Sequence[Row], heading: str, label: str = "", ctx: Table3Context = Table3Context()) -> bytes:
    """The chart as PNG bytes whose Title/Description text chunks carry ``heading`` and ``label``."""
    import matplotlib.pyplot as plt

    fig = figure(rows, heading, label, ctx)
    title = f"{label}. {heading}" if label else heading
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=120, metadata={"Title": title, "Description": title})
    plt.close(fig)
    return png.getvalue()


def figure(rows: Sequence[Row], heading: str, label: str = "", ctx: Table3Context = Table3Context()) -> Any:
    """Left: grouped bars per variant (difficulty splits that have items + Overall with its interval).
    Right: Δ vs full with its paired interval, coloured and labelled by its Holm verdict.
    ``heading`` names the benchmark and model; ``label`` (what answered, e.g. SIMULATED) is drawn under it.
    A figure pasted into a slide travels without the terminal that printed it, so it names what it shows."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    columns = [c for c in COLUMNS if ctx.n.get(c, 1) > 0]  # a split with no items has no bar
    fig, (ax, axd) = plt.subplots(1, 2, figsize=(max(9, 2.2 * len(rows)), 4.8), width_ratios=(2, 1))
    width = 0.8 / len(columns)
    for j, col in enumerate(columns):
        xs = [i + (j - (len(columns) - 1) / 2) * width for i in range(len(rows))]
        heights = [r.scores[col] or 0.0 for r in rows]
        err = _overall_err(rows, heights) if col == "Overall" else None
        name = f"{col} (n={ctx.n[col]})" if col in ctx.n else col
        ax.bar(
            xs,
            heights,
            width,
            label=name + (f", {ctx.interval}" if err else ""),
            yerr=err,
            capsize=3 if err else 0,
        )
    ax.set_xticks(range(len(rows)), [r.display for r in rows], rotation=20, ha="right")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.legend(ncols=min(len(columns), 2), fontsize="small")
    ablations = [r for r in rows if r.delta_ci is not None]
    for k, r in enumerate(ablations):
        d = r.delta_ci
        assert d is not None
        colour = VERDICT_COLOURS.get(r.verdict or "", "tab:gray")
        axd.errorbar(d.mean, k, xerr=[[d.mean - d.low], [d.high - d.mean]], fmt="o", color=colour, capsize=3)
    axd.axvline(0.0, color="black", linewidth=0.8)
    axd.set_yticks(range(len(ablations)), [r.display for r in ablations])
    axd.invert_yaxis()
    axd.set_xlabel(f"Δ vs full (points, paired {ctx.interval})")
    verdicts = list(dict.fromkeys(r.verdict for r in ablations if r.verdict))
    axd.legend(
        [Line2D([], [], marker="o", linestyle="", color=VERDICT_COLOURS[v]) for v in verdicts],
        [v + (" (p Holm ≥ 0.05)" if v == NOT_DISTINGUISHABLE else "") for v in verdicts],
        fontsize="small",
        loc="lower right",
    )
    fig.suptitle(
        heading + (f"\n{textwrap.fill(label, 140)}" if label else ""),
        fontsize="small",
        color="tab:red" if label else "black",
        fontweight="bold",
    )
    fig.tight_layout()
    return fig


def _overall_err(rows: Sequence[Row], heights: Sequence[float]) -> list[list[float]]:
    """Error-bar lengths below/above each Overall bar from its interval (0 where there is none)."""
    low = [max(0.0, h - r.overall.low) if r.overall else 0.0 for h, r in zip(heights, rows, strict=True)]
    high = [max(0.0, r.overall.high - h) if r.overall else 0.0 for h, r in zip(heights, rows, strict=True)]
    return [low, high]
