"""The null test of the instrument: replicated simulated Table 3s in a world with no built-in benefit.

Why: an instrument is trusted only when it has been shown to say "no effect" where none was built
in (issue #33). This runs R replicated Table 3s (one run seed per replicate: another instance of
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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean
from typing import Any

from omegaconf import DictConfig, OmegaConf

from ledgermind.experiment import table3
from ledgermind.metrics.stats import BootstrapConfig
from ledgermind.simulator.sim_sweep import HYDRA_CONFIG, _compose

VARIANTS = tuple(v for v, _ in table3.VARIANTS)
# The null world: no coupling, no suggestible looks, no evidence pull, no zoom benefit.
NULL_WORLD = ("backend.fault_coupling={coupling}", "backend.look_agree=0", "backend.evidence_pull=0",
              "backend.zoom_precision=1")  # fmt: skip


@dataclass
class NullReport:
    coupling: float
    replicates: int
    benchmarks: dict[str, int]  # name -> items
    deltas: dict[str, list[float]] = field(default_factory=dict)  # variant -> Δ (points) per table
    any_raw: int = 0  # tables with ≥ 1 variant distinguishable (raw interval)
    any_holm: int = 0  # ... after Holm
    detected: dict[str, int] = field(default_factory=dict)  # variant -> tables where it was distinguishable (Holm)
    tables: int = 0

    def rate(self, count: int) -> float | None:
        return count / self.tables if self.tables else None

    def to_markdown(self) -> str:
        def pct(x: float | None) -> str:
            return "–" if x is None else f"{100 * x:.1f} %"

        lines = [
            f"SIMULATED BACKBONE null test: fault_coupling={self.coupling:g}, {self.replicates} replicates × "
            + ", ".join(f"{b} ({n} items)" for b, n in self.benchmarks.items()) + f" = {self.tables} tables",
            f"family-wise rate of any 'distinguishable' verdict: raw {pct(self.rate(self.any_raw))}, "
            f"Holm {pct(self.rate(self.any_holm))}",
            "",
            "| variant | mean Δ vs full (points) | tables distinguishable (Holm) |",
            "|---|---:|---:|",
        ]
        for v, ds in self.deltas.items():
            lines.append(f"| {v} | {mean(ds):+.2f} | {self.detected.get(v, 0)}/{self.tables} |")
        return "\n".join(lines)


RunFn = Callable[[DictConfig], Mapping[str, Any]]


def run_dir_for(out: Path, coupling: float, benchmark: str, variant: str, seed: int) -> Path:
    return out / f"coupling-{coupling:g}" / benchmark / f"seed{seed}" / variant


def run_replicates(out: Path, *, coupling: float, replicates: int, benchmarks: Mapping[str, int],
                   variants: Sequence[str] = VARIANTS, overrides: Sequence[str] = (), run: RunFn | None = None) -> None:
    """Every (benchmark, seed, variant) run; a finished run resumes to nothing."""
    if run is None:
        from ledgermind.experiment.app import run_experiment as run
    world = [o.format(coupling=coupling) for o in NULL_WORLD]
    for benchmark, limit in benchmarks.items():
        for seed in range(replicates):
            for variant in variants:
                d = run_dir_for(out, coupling, benchmark, variant, seed)
                cfg = _compose(["backend=simulated", "logger=none", "cache.mode=off", "progress=false",
                                "backend.banner=false", f"benchmark={benchmark}", f"+ablation={variant}",
                                f"seed={seed}", f"output_dir={d}", f"limit={limit}", *world, *overrides])  # fmt: skip
                (d / HYDRA_CONFIG).parent.mkdir(parents=True, exist_ok=True)
                OmegaConf.save(cfg, d / HYDRA_CONFIG)
                run(cfg)


def collect(out: Path, *, coupling: float, replicates: int, benchmarks: Mapping[str, int],
            bootstrap: BootstrapConfig = BootstrapConfig(resamples=2000)) -> NullReport:
    """One Table 3 per (benchmark, replicate), read back from the runs' own records."""
    report = NullReport(coupling, replicates, dict(benchmarks))
    for benchmark in benchmarks:
        for seed in range(replicates):
            root = run_dir_for(out, coupling, benchmark, "full", seed).parent
            runs = [table3.load_run(d) for d in sorted(root.iterdir()) if (d / "metrics.json").exists()]
            rows = [r for r in table3.build_rows(runs, bootstrap=bootstrap) if r.variant != "full" and r.delta_ci]
            report.tables += 1
            raw = [r for r in rows if not r.delta_ci.contains(0.0)]  # type: ignore[union-attr]
            holm = [r for r in rows if r.verdict != table3.NOT_DISTINGUISHABLE]
            report.any_raw += bool(raw)
            report.any_holm += bool(holm)
            for r in rows:
                report.deltas.setdefault(r.variant, []).append(float(r.delta or 0.0))
                report.detected[r.variant] = report.detected.get(r.variant, 0) + (r in holm)
    return report


def null_test(out: Path, *, coupling: float = 0.0, replicates: int = 20, benchmarks: Mapping[str, int] | None = None,
              variants: Sequence[str] = VARIANTS, overrides: Sequence[str] = (), run: RunFn | None = None) -> NullReport:
    benches = dict(benchmarks or {"mmmu_pro_standard10": 60, "gauges": 44})
    run_replicates(out, coupling=coupling, replicates=replicates, benchmarks=benches, variants=variants,
                   overrides=overrides, run=run)  # fmt: skip
    return collect(out, coupling=coupling, replicates=replicates, benchmarks=benches)
