"""Table 3 (ablations): collect finished runs, check they are comparable, render the paper's layout.

Numbers come from each run's ``results.jsonl`` (the source of truth); ``metrics.json`` supplies
the run identity. Runs that differ in model, benchmark or item set are refused, because a Δ
between them would measure the data, not the ablated component.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ledgermind.errors import UserError
from ledgermind.metrics.census import census_table
from ledgermind.experiment.provenance import PROTOCOL_FIELDS, protocol_mismatch, sha256_json, shared_protocol_lines
from ledgermind.experiment.results import METRICS_FILE, RESULTS_FILE, read_results
from ledgermind.experiment.summary import DIFFICULTIES, RunIdentity, items_hash
from ledgermind.simulator.label import NOTE, is_simulated

# (config name, display name) in the paper's row order; `baseline` is ours (native CoT).
VARIANTS: tuple[tuple[str, str], ...] = (
    ("full", "LedgerMind (full)"),
    ("no_ledger", "w/o Ledger"),
    ("free_form_repair", "w/o Typed Repair"),
    ("no_ecc", "w/o ECC/NCC"),
    ("no_dual_read", "w/o Dual-Read"),
    ("no_dispatcher", "w/o Dispatcher"),
    ("baseline", "Native CoT"),
)
DISPLAY = dict(VARIANTS)
COLUMNS = ("Easy", "Medium", "Hard", "Overall")
MUST_MATCH = ("model", "benchmark", "items_sha256")


class Table3Error(UserError):
    """The given runs cannot form one table (missing, unfinished, or not comparable)."""


@dataclass(frozen=True)
class RunScores:
    run_dir: Path
    identity: RunIdentity
    scores: dict[str, float | None]  # column -> accuracy in percent; None if the split is empty
    n: dict[str, int]
    mechanisms: dict[str, Any] = field(default_factory=dict)  # metrics.json["mechanisms"] (the census)

    @property
    def variant(self) -> str:
        return self.identity.variant


@dataclass(frozen=True)
class Row:
    variant: str
    display: str
    scores: dict[str, float | None]
    delta: float | None  # Overall minus full's Overall, in points
    paper: dict[str, float | None] | None = None


# ---------------------------------------------------------------------------------- collection
def find_run_dirs(paths: Iterable[Path]) -> list[Path]:
    """Each path is a run dir or a (multirun) dir whose sub-dirs hold runs."""
    found: list[Path] = []
    for p in map(Path, paths):
        if not p.is_dir():
            raise Table3Error(f"not a directory: {p}")
        if (p / RESULTS_FILE).exists() or (p / METRICS_FILE).exists():
            found.append(p)
            continue
        subs = sorted({f.parent for f in p.rglob(RESULTS_FILE)} | {f.parent for f in p.rglob(METRICS_FILE)})
        if not subs:
            raise Table3Error(f"no runs under {p} (no {RESULTS_FILE} / {METRICS_FILE} found)")
        found.extend(subs)
    return found


def load_run(run_dir: Path) -> RunScores:
    metrics_path = run_dir / METRICS_FILE
    if not metrics_path.exists():
        raise Table3Error(f"{run_dir} has no {METRICS_FILE}: the run did not finish (start it again to resume)")
    metrics = json.loads(metrics_path.read_text())
    identity = RunIdentity.from_dict(metrics["identity"])
    results = read_results(run_dir)
    if items_hash(r.id for r in results) != identity.items_sha256:
        raise Table3Error(
            f"{run_dir}: {RESULTS_FILE} holds {len(results)} items but {METRICS_FILE} was written for "
            f"{identity.n_items}; finish or resume the run before building Table 3"
        )
    scores: dict[str, float | None] = {}
    n: dict[str, int] = {}
    for col in COLUMNS:
        sel = [r.score for r in results if col == "Overall" or r.difficulty == col]
        n[col] = len(sel)
        scores[col] = 100.0 * sum(sel) / len(sel) if sel else None
    return RunScores(run_dir, identity, scores, n, dict(metrics.get("mechanisms") or {}))


def check_comparable(runs: Sequence[RunScores], *, allow_mixed: bool = False) -> None:
    if not allow_mixed:
        _check_protocol(runs)
    _check_variants(runs)


def _check_protocol(runs: Sequence[RunScores]) -> None:
    for field in MUST_MATCH:
        values = {getattr(r.identity, field) for r in runs}
        if len(values) > 1:
            detail = "; ".join(f"{r.run_dir}: {_short(getattr(r.identity, field))}" for r in runs)
            what = "item sets" if field == "items_sha256" else f"{field}s"
            raise Table3Error(f"refusing to mix runs with different {what}: {detail}")
    mismatch = protocol_mismatch([(str(r.run_dir), r.identity.to_dict()) for r in runs])
    if mismatch:
        raise Table3Error(f"refusing to mix runs: {mismatch}")


def protocol_footer(runs: Sequence[RunScores]) -> str:
    """The shared protocol printed under the table (or which fields differ, with --allow-mixed)."""
    idents = [(str(r.run_dir), r.identity.to_dict()) for r in runs]
    mixed = [f for f in PROTOCOL_FIELDS if len({sha256_json(i.get(f)) for _, i in idents}) > 1]
    if mixed:
        return f"Protocol: MIXED (--allow-mixed); differing fields: {', '.join(mixed)}\n"
    return "\n".join(shared_protocol_lines(idents[0][1])) + "\n"


def _check_variants(runs: Sequence[RunScores]) -> None:
    seen: dict[str, Path] = {}
    for r in runs:
        if r.variant in seen:
            raise Table3Error(f"variant {r.variant!r} appears twice: {seen[r.variant]} and {r.run_dir}")
        seen[r.variant] = r.run_dir


def _short(v: Any) -> str:
    s = str(v)
    return s[:12] if len(s) == 64 else s  # abbreviate hashes


# ---------------------------------------------------------------------------------- building
def load_paper_table3() -> dict[str, Any]:
    return json.loads(resources.files("ledgermind.experiment").joinpath("paper_table3.json").read_text())


def in_variant_order(runs: Sequence[RunScores]) -> list[RunScores]:
    """Table 3's row order: full, the ablations as in the paper, baseline; unknown variants last."""
    order = {name: i for i, (name, _) in enumerate(VARIANTS)}
    return sorted(runs, key=lambda r: (order.get(r.variant, len(order)), r.variant))


def build_rows(runs: Sequence[RunScores], *, with_paper: bool = False, allow_mixed: bool = False) -> list[Row]:
    check_comparable(runs, allow_mixed=allow_mixed)
    runs = in_variant_order(runs)
    full = next((r for r in runs if r.variant == "full"), None)
    paper = load_paper_table3()["rows"] if with_paper else {}
    rows = []
    for r in runs:
        delta = None
        if full is not None and r is not full and r.scores["Overall"] is not None:
            delta = r.scores["Overall"] - full.scores["Overall"]
        p = paper.get(r.variant)
        rows.append(
            Row(
                r.variant,
                DISPLAY.get(r.variant, r.variant),
                r.scores,
                delta,
                ({c: p[c] for c in COLUMNS} | {"delta": p["delta"]}) if p else None,
            )
        )
    return rows


# ---------------------------------------------------------------------------------- rendering
def _fmt(v: float | None, col: str) -> str:
    if v is None:
        return "–"
    return f"{v:.2f}" if col == "Overall" else f"{v:.1f}"


def _fmt_delta(v: float | None) -> str:
    return "–" if v is None else f"{v:+.2f}".replace("-", "−")


def header(with_paper: bool) -> list[str]:
    cols = ["Variant", *COLUMNS, "Δ vs full"]
    return cols + [f"Paper {c}" for c in COLUMNS] + ["Paper Δ"] if with_paper else cols


def cells(row: Row, with_paper: bool) -> list[str]:
    out = [row.display, *(_fmt(row.scores[c], c) for c in COLUMNS), _fmt_delta(row.delta)]
    if with_paper:
        p = row.paper or {}
        out += [_fmt(p.get(c), c) for c in COLUMNS] + [_fmt_delta(p.get("delta"))]
    return out


def to_markdown(rows: Sequence[Row], with_paper: bool = False) -> str:
    head = header(with_paper)
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    lines += ["| " + " | ".join(cells(r, with_paper)) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def to_csv(rows: Sequence[Row]) -> str:
    """Machine-readable: raw numbers, no formatting."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["variant", "display", *COLUMNS, "delta_vs_full"])
    for r in rows:
        w.writerow([r.variant, r.display, *(r.scores[c] for c in COLUMNS), r.delta])
    return buf.getvalue()


def to_latex(rows: Sequence[Row], caption: str) -> str:
    def tex(s: str) -> str:
        for raw, escaped in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#")):
            s = s.replace(raw, escaped)
        return s.replace("−", "$-$").replace("Δ", r"$\Delta$").replace("–", "--")

    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{tex(caption)}}}",
        r"\begin{tabular}{lccccc}",
        r"\toprule",
        " & ".join(tex(h) for h in header(False)) + r" \\",
        r"\midrule",
    ]
    for i, r in enumerate(rows):
        lines.append(" & ".join(tex(c) for c in cells(r, False)) + r" \\")
        if i == 0 and r.variant == "full":
            lines.append(r"\midrule")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def plot(rows: Sequence[Row], path: Path) -> Path:
    """Grouped bars: one group per variant, one bar per difficulty split + Overall."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(rows)), 4))
    width = 0.8 / len(COLUMNS)
    for j, col in enumerate(COLUMNS):
        xs = [i + (j - (len(COLUMNS) - 1) / 2) * width for i in range(len(rows))]
        ax.bar(xs, [r.scores[col] or 0.0 for r in rows], width, label=col)
    ax.set_xticks(range(len(rows)), [r.display for r in rows], rotation=20, ha="right")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.legend(ncols=len(COLUMNS), fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def caption_for(runs: Sequence[RunScores]) -> str:
    ident = runs[0].identity
    label = f"{NOTE}. " if is_simulated(ident.backend) else ""
    return label + (
        f"Ablation on {ident.benchmark} ({ident.n_items} items) with {ident.model}. "
        "Δ is relative to the full framework on Overall."
    )


@dataclass
class Table3Outputs:
    markdown: Path
    csv: Path
    latex: Path
    chart: Path
    census: Path


def write_outputs(rows: Sequence[Row], runs: Sequence[RunScores], out_dir: Path, with_paper: bool) -> Table3Outputs:
    out_dir.mkdir(parents=True, exist_ok=True)
    outs = Table3Outputs(out_dir / "table3.md", out_dir / "table3.csv", out_dir / "table3.tex", out_dir / "table3.png",
                         out_dir / "census.md")
    outs.markdown.write_text(to_markdown(rows, with_paper), encoding="utf-8")
    outs.csv.write_text(to_csv(rows), encoding="utf-8")
    outs.latex.write_text(to_latex(rows, caption_for(runs)), encoding="utf-8")
    plot(rows, outs.chart)
    outs.census.write_text(census_markdown(runs) + "\n", encoding="utf-8")
    return outs


def census_markdown(runs: Sequence[RunScores]) -> str:
    """The mechanism census of every run side by side (same order as the table's rows)."""
    return census_table((r.variant, r.n["Overall"], r.mechanisms) for r in in_variant_order(runs))


def rows_for_logging(rows: Sequence[Row]) -> list[dict[str, Any]]:
    return [
        {"variant": r.display, **{c: r.scores[c] for c in COLUMNS}, "delta_vs_full": r.delta} for r in rows
    ]
