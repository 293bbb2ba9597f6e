"""Table 3's chart: accuracy bars per variant and the forest plot of Δ vs full.

Why apart from ``table3_render.py``: the text renderings never import matplotlib, and the chart is
the one artefact that travels alone (pasted into a slide), so it names its benchmark, model and what
answered in its own title and PNG metadata.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from ledgermind.experiment.table3 import (
    ABOVE_FULL,
    BELOW_FULL,
    COLUMNS,
    NOT_DISTINGUISHABLE,
    Row,
    Table3Context,
)

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
