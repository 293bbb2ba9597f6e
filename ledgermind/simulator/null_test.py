"""The null test of the instrument: replicated simulated Table 3s in a world with no built-in benefit.

Why: an instrument is trusted only when it has been shown to say "no effect" where none was built
in. This runs R replicated Table 3s (one run seed per replicate: another instance of
the simulated model) at a given ``fault_coupling`` through the normal run path, builds each
replicate's Table 3 with the statistics the real table uses (paired bootstrap interval and its
p-value, Holm over the six "variant vs full" rows), and reports per variant the mean Δ over
replicates and the family-wise rate: the share of replicate tables in which at least one variant
is called distinguishable from ``full`` — raw (interval excludes 0) and after Holm. At coupling 0
nothing in the simulator rewards any mechanism, so a calibrated table is wrong at most α of the
time; at coupling 1 a phantom comes with a changed answer, which ECC exists to catch, and the
detection rate of Δ(``no_ecc``) says whether the instrument can still see an effect that exists.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean
from typing import Any

from ledgermind.experiment import table3
from ledgermind.experiment.variants import names
from ledgermind.markdown import md_table
from ledgermind.metrics.stats import BootstrapConfig, bootstrap_p_value, paired_differences
from ledgermind.runs.files import METRICS_FILE
from ledgermind.runs.reader import RunDir
from ledgermind.simulator.census import CATCHABLE, HARMS, VERBS, fault_census
from ledgermind.simulator.sim_sweep import run_point

VARIANTS = tuple(names())  # conf/ablation: every Table 3 variant, in row order
# The null world: no coupling, no suggestible looks, no evidence pull, no zoom benefit.
NULL_WORLD = (
    "backend.fault_coupling={coupling}",
    "backend.look_agree=0",
    "backend.evidence_pull=0",
    "backend.zoom_precision=1",
)


@dataclass
class NullReport:
    coupling: float
    replicates: int
    benchmarks: dict[str, int]  # name -> items
    deltas: dict[str, list[float]] = field(default_factory=dict)  # variant -> Δ (points) per table
    any_raw: int = 0  # tables with ≥ 1 variant distinguishable (raw interval)
    any_holm: int = 0  # ... after Holm
    detected: Counter[str] = field(default_factory=Counter)  # variant -> tables distinguishable (Holm)
    tables: int = 0
    # variant -> census counter ("phantom flagged", ...) -> summed over every table: the report says *why*
    census: dict[str, Counter[str]] = field(default_factory=dict)
    # the planted-effect control, per variant: the variant at this coupling vs itself at coupling 0
    # (same seed, same items) — what coupled faults cost it, and whether the paired test sees that
    control_deltas: dict[str, list[float]] = field(default_factory=dict)
    control_detected: Counter[str] = field(default_factory=Counter)

    def rate(self, count: int) -> float | None:
        return count / self.tables if self.tables else None

    def to_markdown(self) -> str:
        def pct(x: float | None) -> str:
            return "–" if x is None else f"{100 * x:.1f} %"

        lines = [
            f"SIMULATED BACKBONE null test: fault_coupling={self.coupling:g}, {self.replicates} replicates × "
            + ", ".join(f"{b} ({n} items)" for b, n in self.benchmarks.items())
            + f" = {self.tables} tables",
            f"family-wise rate of any 'distinguishable' verdict: raw {pct(self.rate(self.any_raw))}, "
            f"Holm {pct(self.rate(self.any_holm))}",
            "",
            *md_table(
                ["variant", "mean Δ vs full (points)", "tables distinguishable (Holm)"],
                [
                    [v, f"{mean(ds):+.2f}", f"{self.detected.get(v, 0)}/{self.tables}"]
                    for v, ds in self.deltas.items()
                ],
            ),
        ]
        return "\n".join(lines + self._census_lines() + self._independence_lines() + self._control_lines())

    def _census_lines(self) -> list[str]:
        """What the mechanisms did to the injected faults, summed over all tables: a Δ of zero reads
        differently when ECC flagged every phantom but neutralised none than when it never saw one."""
        keys = [f"{k.value} {verb}" for k in CATCHABLE for verb in ("injected", *VERBS)] + list(HARMS)
        rows = [[v, *(counts.get(k, 0) for k in keys)] for v, counts in self.census.items()]
        title = f"Mechanism census, summed over the {self.tables} tables (simulator ground truth):"
        return _section(title, ["variant", *keys], rows)

    def _independence_lines(self) -> list[str]:
        """Faults must not know the answer: a decision that failed ECC should be right about as often
        as one that passed at coupling 0; a gap (say 23 % vs 72 %) makes ECC a detector of wrong answers."""
        rows = [
            [
                v,
                *(
                    f"{100 * c[f'{cell} right'] / c[f'{cell} n']:.1f} % ({c[f'{cell} n']})"
                    for cell in ECC_CELLS
                ),
            ]
            for v, c in self.census.items()
            if all(c.get(f"{cell} n", 0) for cell in ECC_CELLS)
        ]
        title = "Right answers among final decisions that failed / passed ECC (n):"
        return _section(title, ["variant", "failed ECC", "passed ECC"], rows)

    def _control_lines(self) -> list[str]:
        """Coupled faults change answers by construction: each variant against itself at coupling 0
        is an effect that exists where no mechanism undoes those faults (it shows the instrument
        can see one), and is small where a mechanism — or anything else — does."""
        title = (
            f"Planted-effect control: each variant at coupling {self.coupling:g} vs itself at coupling 0 "
            "(paired by seed and item; raw p < 0.05):"
        )
        rows = [
            [v, f"{mean(ds):+.2f}", f"{self.control_detected.get(v, 0)}/{len(ds)}"]
            for v, ds in self.control_deltas.items()
        ]
        return _section(title, ["variant", "mean Δ (points)", "tables distinguishable"], rows)


def _section(title: str, head: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    """A titled table of the report after a blank line; nothing when it has no rows."""
    return ["", title, "", *md_table(head, rows)] if rows else []


ECC_CELLS = ("ecc_failed", "ecc_passed")  # the independence table's columns


def run_dir_for(out: Path, coupling: float, benchmark: str, variant: str, seed: int) -> Path:
    return out / f"coupling-{coupling:g}" / benchmark / f"seed{seed}" / variant


def collect(
    out: Path,
    *,
    coupling: float,
    replicates: int,
    benchmarks: Mapping[str, int],
    bootstrap: BootstrapConfig = BootstrapConfig(resamples=2000),
) -> NullReport:
    """One Table 3 per (benchmark, replicate), read back from the runs' own records."""
    report = NullReport(coupling, replicates, dict(benchmarks))
    for benchmark, seed in itertools.product(benchmarks, range(replicates)):
        root = run_dir_for(out, coupling, benchmark, "full", seed).parent
        runs = [table3.load_run(d) for d in sorted(root.iterdir()) if (d / METRICS_FILE).exists()]
        rows = [r for r in table3.build_rows(runs, bootstrap=bootstrap) if r.variant != "full" and r.delta_ci]
        report.tables += 1
        raw = [r for r in rows if not r.delta_ci.contains(0.0)]  # type: ignore[union-attr]
        holm = [r for r in rows if r.verdict != table3.NOT_DISTINGUISHABLE]
        report.any_raw += bool(raw)
        report.any_holm += bool(holm)
        for r in rows:
            report.deltas.setdefault(r.variant, []).append(float(r.delta or 0.0))
            report.detected[r.variant] += r in holm
        for run in runs:
            add_rederived_census(report.census.setdefault(run.variant, Counter()), run.run_dir)
        _planted_control(report, out, benchmark, seed, runs, bootstrap)
    return report


def add_rederived_census(into: Counter[str], run_dir: Path) -> None:
    """Sum the run's simulator census into ``into``, derived again from its trajectories with today's
    census rules, with the independence cells (decisions that failed / passed ECC, and how many were right).

    Why not ``metrics.json``: the census is a function of the trajectory (``simulator/census.py``),
    and a rule fixed after the runs (an audit-only label is no flag) must not need the runs again."""
    run = RunDir(run_dir)
    for result in run.results():
        d = run.trajectory(result.id)
        if d is None:
            continue
        if result.error is None:
            cell = "ecc_failed" if _decision_failed_ecc(d) else "ecc_passed"
            into[f"{cell} n"] += 1
            into[f"{cell} right"] += int(result.correct)
        add_census(into, fault_census(d))


def _decision_failed_ecc(d: Mapping[str, Any]) -> bool:
    """The final decision (last DC claim) failed an ECC check that was applied."""
    dcs = [c for c in d.get("ledger", {}).get("claims", []) if c.get("ctype") == "DC"]
    g = (dcs[-1].get("grounding") or {}) if dcs else {}
    return g.get("ecc") is False and bool(g.get("ecc_applied"))


def add_census(into: Counter[str], simulator: Mapping[str, Any]) -> None:
    """Sum one run's simulator census (``metrics.json["mechanisms"]["simulator"]``) into ``into``."""
    for kind in CATCHABLE:
        for verb in ("injected", *VERBS):
            into[f"{kind.value} {verb}"] += int((simulator.get(verb) or {}).get(kind.value) or 0)
    for harm in HARMS:
        into[harm] += int((simulator.get("harmed") or {}).get(harm) or 0)
    into.update({key: int(n) for key, n in (simulator.get("independence") or {}).items()})


def _planted_control(
    report: NullReport,
    out: Path,
    benchmark: str,
    seed: int,
    runs: Sequence[table3.RunScores],
    bootstrap: BootstrapConfig,
) -> None:
    """At coupling > 0 faults change answers by construction: every variant against itself at
    coupling 0 (same seed, same items) measures what the coupled faults cost it."""
    if report.coupling == 0:
        return
    for run in runs:
        base = run_dir_for(out, 0.0, benchmark, run.variant, seed)
        if not (base / METRICS_FILE).exists():
            continue
        reference = table3.load_run(base)
        diffs = paired_differences(
            {i: [s] for i, s in run.item_scores.items()}, {i: [s] for i, s in reference.item_scores.items()}
        )
        pooled = [d for ds in diffs for d in ds]
        if not pooled:
            continue
        report.control_deltas.setdefault(run.variant, []).append(100.0 * mean(pooled))
        detected = bootstrap_p_value(diffs, bootstrap) < 1.0 - bootstrap.level
        report.control_detected[run.variant] += detected


def null_test(
    out: Path,
    *,
    coupling: float = 0.0,
    replicates: int = 20,
    benchmarks: Mapping[str, int] | None = None,
    variants: Sequence[str] = VARIANTS,
    overrides: Sequence[str] = (),
) -> NullReport:
    """Every (benchmark, seed, variant) run (a finished run resumes to nothing), then the report."""
    benches = dict(benchmarks or {"mmmu_pro_standard10": 60, "gauges": 44})
    world = [o.format(coupling=coupling) for o in NULL_WORLD]
    for (benchmark, limit), seed, variant in itertools.product(benches.items(), range(replicates), variants):
        d = run_dir_for(out, coupling, benchmark, variant, seed)
        run_point(d, benchmark, variant, seed, limit, [*world, *overrides])
    return collect(out, coupling=coupling, replicates=replicates, benchmarks=benches)
