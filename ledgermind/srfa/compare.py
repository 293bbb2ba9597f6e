"""Figure 5 side by side: the five S-RFA axes of several runs and their radar chart.

Every axis is oriented so that larger is better: Acc, GDR, R4R, 1 − UCR_reason, 1 − WDG. A
comparison only means something over the same items, so runs are matched by item id and runs
over different item sets are refused (``UserError``: one line, exit 2 from the CLI).

Each input is a run directory: its ``srfa_metrics.json`` is used when present (``mode`` picks ledger or judge), else the run's own
``metrics.json`` (LedgerMind's claim-level metrics). The two are different protocols (the audit
labels claims against tool text or the image; the run's ledger grounds its own claims), so their
axes carry different names (``srfa.GDR`` vs ``GDR``) and one comparison never mixes them. A
ledger-mode audit's axes are over the claims it could check; the table prints that coverage
beside them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledgermind.errors import UserError
from ledgermind.runs.files import METRICS_FILE as RUN_METRICS_FILE
from ledgermind.runs.reader import RunDir
from ledgermind.srfa.protocol import PREFIX
from ledgermind.srfa.run import SRFA_METRICS_FILE, load_run

AXES = ("Acc", "GDR", "R4R", "1-UCR", "1-WDG")


@dataclass(frozen=True)
class Axes:
    label: str
    values: dict[str, float | None]  # keyed by AXES
    source: str  # "srfa:<mode>" or "run"
    coverage: float | None = None  # ledger-mode audit: share of claims it could check

    @property
    def protocol(self) -> str:
        return "run" if self.source == "run" else "srfa"


def axis_names(protocol: str) -> list[str]:
    """The names the axes carry under a protocol: ``srfa.GDR`` for an audit, ``GDR`` for a run."""
    return [a if protocol == "run" or a == "Acc" else PREFIX + a for a in AXES]


def axes_of(run_dir: Path, mode: str = "ledger") -> Axes:
    run = RunDir(Path(run_dir))
    run_dir = run.path
    data = run.json_object(SRFA_METRICS_FILE)  # the folder's one JSON error policy
    if data is not None:
        if mode not in data:
            raise UserError(
                f"{run_dir / SRFA_METRICS_FILE} has no '{mode}' audit (it has: {', '.join(k for k in ('ledger', 'judge') if k in data)})"
            )
        m = data[mode]
        axes = _orient(m["Acc"], m, PREFIX)
        return Axes(_label(run_dir), axes, f"srfa:{mode}", (m.get("coverage") or {}).get("claims"))
    m = run.metrics()
    if m is None:
        raise UserError(f"{run_dir} has neither {SRFA_METRICS_FILE} nor {RUN_METRICS_FILE}")
    return Axes(_label(run_dir), _orient(m.get("accuracy"), m.get("trajectory_metrics") or {}), "run")


def _orient(acc: Any, metrics: Mapping[str, Any], prefix: str = "") -> dict[str, float | None]:
    """Acc and the ``prefix``-named GDR, R4R, UCR_reason, WDG of ``metrics`` as the axes, the last
    two flipped so that larger is better."""
    names = ("GDR", "R4R", "UCR_reason", "WDG")
    acc, gdr, r4r, ucr, wdg = (
        None if x is None else float(x) for x in (acc, *(metrics.get(prefix + n) for n in names))
    )
    flipped = [None if x is None else 1.0 - x for x in (ucr, wdg)]
    return dict(zip(AXES, [acc, gdr, r4r, *flipped], strict=True))


def _label(run_dir: Path) -> str:
    """``variant (folder)``: the variant the run recorded (``RunDir.variant``), or the folder alone."""
    from omegaconf.errors import OmegaConfBaseException

    try:
        variant = RunDir(run_dir).variant()  # inert: a foreign folder's interpolations cannot act
    except (UserError, OmegaConfBaseException):
        variant = None
    return f"{variant} ({run_dir.name})" if variant else run_dir.name


def compare(run_dirs: Sequence[Path], mode: str = "ledger") -> list[Axes]:
    if not run_dirs:
        raise UserError("give at least one run directory")
    first = set(load_run(run_dirs[0]).results)  # every run must cover the first one's items
    for d in run_dirs[1:]:
        ids = set(load_run(d).results)
        if ids != first:
            only_a, only_b = sorted(first - ids)[:3], sorted(ids - first)[:3]
            raise UserError(
                f"runs cover different items: {run_dirs[0]} vs {d} "
                f"(only in the first: {only_a or '-'}; only in the second: {only_b or '-'}); compare runs over the same items"
            )
    rows = [axes_of(d, mode) for d in run_dirs]
    if len({r.protocol for r in rows}) > 1:
        audited = [str(d) for d, r in zip(run_dirs, rows, strict=True) if r.protocol == "srfa"]
        raise UserError(
            "refusing to compare an S-RFA audit with a run's own trajectory metrics (two protocols: srfa.GDR is not GDR); "
            f"audit every run with scripts/srfa.py (audited: {', '.join(audited)})"
        )
    return rows


def format_table(rows: Sequence[Axes]) -> str:
    names = axis_names(rows[0].protocol if rows else "run")
    width = max([len("run")] + [len(r.label) for r in rows])
    w = max(len(n) for n in names)
    head = f"{'run':<{width}}  " + "  ".join(f"{n:>{w}}" for n in names) + "  coverage  source"
    lines = [head, "-" * len(head)]
    for r in rows:
        vals = "  ".join(f"{'—':>{w}}" if r.values[a] is None else f"{r.values[a]:{w}.3f}" for a in AXES)
        cov = "—" if r.coverage is None else f"{r.coverage:.3f}"
        lines.append(f"{r.label:<{width}}  {vals}  {cov:>8}  {r.source}")
    if rows and rows[0].protocol == "srfa":
        lines.append(
            "srfa.* are the audit's axes (claims it could check; coverage = their share), not the run's GDR/R4R"
        )
    return "\n".join(lines)


def radar_figure(rows: Sequence[Axes], title: str = "S-RFA (Figure 5)") -> Any:
    """Radar chart of the five axes (undefined values drawn at 0 and named in the legend)."""
    import math

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    angles = [2 * math.pi * i / len(AXES) for i in range(len(AXES))]
    fig = plt.figure(figsize=(5, 5), dpi=100)
    ax = fig.add_subplot(111, polar=True)
    for r in rows:
        vals = [0.0 if (v := r.values[a]) is None else v for a in AXES]
        undefined = [a for a in AXES if r.values[a] is None]
        label = r.label + (f" (undefined: {', '.join(undefined)})" if undefined else "")
        label += f" [coverage {r.coverage:.2f}]" if r.coverage is not None else ""
        ax.plot(angles + angles[:1], vals + vals[:1], linewidth=1.5, label=label)
        ax.fill(angles + angles[:1], vals + vals[:1], alpha=0.15)
    ax.set_xticks(angles)
    ax.set_xticklabels(axis_names(rows[0].protocol if rows else "run"))
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, -0.25), fontsize=7)
    fig.tight_layout()
    return fig


def radar_png(rows: Sequence[Axes], path: Path, title: str = "S-RFA (Figure 5)") -> Path:
    import matplotlib.pyplot as plt

    fig = radar_figure(rows, title)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
