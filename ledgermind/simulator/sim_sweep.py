"""Response curve of one simulator fault rate: ``full`` vs the ablation built against that fault.

Why: "ECC matters" is only an honest statement with its regime attached — at which phantom rate,
by how much, with what uncertainty. This sweeps one ``backend.<rate>`` of the simulated backbone
over a grid and, at every point, runs ``full`` and the ablation that removes the mechanism built
for that fault, through the normal run path (``experiment.app.run_experiment``: simulated backend,
response cache off, logger none). It then draws Δ accuracy (ablation − full, paired bootstrap
interval over items and seeds) and the fault's catch rate (Wilson interval over injected faults)
against the rate.

Every run writes its composed config to ``<run>/.hydra/config.yaml`` as a Hydra run does; the
read-back takes each run's variant and seed from ``metrics.json`` and the rate value from that
config, never from directory names.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from ledgermind.errors import UserError, first_line
from ledgermind.experiment import table3
from ledgermind.markdown import md_table
from ledgermind.metrics.stats import BootstrapConfig, Estimate, wilson_interval
from ledgermind.runs.files import RECORDED_CONFIG
from ledgermind.runs.reader import RunDir, find_runs
from ledgermind.simulator.faults import PROBABILITIES, FaultRates
from ledgermind.simulator.label import NOTE


@dataclass(frozen=True)
class SweepTarget:
    """The ablation that removes the mechanism built against a fault, and the census fault kind whose
    catch rate is drawn (``None``: the census defines no catch for it)."""

    ablation: str
    fault: str | None


# backend.<rate> -> what to compare it with (README "Fault-rate sweep" shows this table).
RATE_TARGETS: dict[str, SweepTarget] = {
    # what no recorded answer can calibrate: how often a hallucinated entity comes with a changed answer
    "fault_coupling": SweepTarget("no_ecc", "phantom"),
    "phantom_rate": SweepTarget("no_ecc", "phantom"),  # ECC/NCC demote claims naming absent entities
    "read_noise": SweepTarget("no_dual_read", "misread"),  # Dual-Read compares two readings of a number
    "zoom_precision": SweepTarget("no_dual_read", "misread"),
}


class SweepError(UserError):
    """A sweep that cannot run or cannot be read back (unknown rate, bad grid, missing runs)."""


@dataclass(frozen=True)
class SweepSpec:
    rate: str
    grid: tuple[float, ...]
    target: SweepTarget
    benchmark: str = "mmmu_pro_standard10"
    seeds: tuple[int, ...] = (0,)
    limit: int | None = None
    # further Hydra overrides (perception.cache_dir=..., backend.p_correct=...)
    overrides: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.grid:
            raise SweepError("the grid is empty: give rate values, e.g. --grid 0,0.1,0.2,0.4")
        top, bound = (1.0, "lie in [0, 1]") if self.rate in PROBABILITIES else (math.inf, "be >= 0")
        if bad := [v for v in self.grid if not 0 <= v <= top]:
            raise SweepError(f"{self.rate} values must {bound}, got {bad}")

    @property
    def variants(self) -> tuple[str, str]:
        return ("full", self.target.ablation)


def spec_for(
    rate: str, grid: Sequence[float], *, ablation: str | None = None, fault: str | None = None, **kwargs: Any
) -> SweepSpec:
    """A spec from the rate→ablation table; ``ablation``/``fault`` choose for a rate not in it."""
    known = RATE_TARGETS.get(rate) or SweepTarget(ablation or "", None)
    if not known.ablation:
        raise SweepError(
            f"no ablation is mapped to {rate!r} (known: {', '.join(RATE_TARGETS)}); "
            "choose the ablation to compare with (--ablation)"
        )
    target = SweepTarget(ablation or known.ablation, known.fault if fault is None else fault)
    return SweepSpec(rate, tuple(float(v) for v in grid), target, **kwargs)


# ---------------------------------------------------------------------------------- running
def _compose(overrides: Sequence[str]) -> DictConfig:
    from hydra.errors import HydraException

    from ledgermind.pipeline.config import compose

    try:
        return compose(overrides)
    except HydraException as e:  # a bad override or option: the user's mistake, one line
        raise SweepError(f"cannot compose the run config: {first_line(e)}") from None


def check_rate(spec: SweepSpec) -> None:
    """Fail before any run when ``backend=simulated`` has no such rate."""
    backend = _compose(["backend=simulated", f"benchmark={spec.benchmark}", "output_dir=unused"]).backend
    if spec.rate not in backend:
        known = sorted(FaultRates.__dataclass_fields__)
        raise SweepError(f"backend=simulated has no {spec.rate!r} (its rates: {', '.join(known)})")


# The fixed part of every simulated run of a study: the simulated backend, no logger, no response
# cache, no progress bar, no banner.
SIMULATED_RUN = (
    "backend=simulated",
    "logger=none",
    "cache.mode=off",
    "progress=false",
    "backend.banner=false",
)


def run_point(
    out: Path, benchmark: str, variant: str, seed: int, limit: int | None, extra: Sequence[str]
) -> None:
    """Compose one simulated run (what ``scripts/run.py`` would run), record its config as a Hydra
    run does (rescoring and read-back use it) and run it; a finished run resumes to nothing."""
    from ledgermind.experiment.app import run_experiment

    limits = [f"limit={limit}"] if limit is not None else []
    point = [f"benchmark={benchmark}", f"+ablation={variant}", f"seed={seed}", f"output_dir={out}"]
    cfg = _compose([*SIMULATED_RUN, *point, *limits, *extra])
    (out / RECORDED_CONFIG).parent.mkdir(parents=True, exist_ok=True)
    OmegaConf.save(cfg, out / RECORDED_CONFIG)
    run_experiment(cfg)


def run_sweep(spec: SweepSpec, out_dir: Path) -> list[Path]:
    """Run every (value, variant, seed) point into ``<rate>-<value>/<variant>-seed<seed>`` (only for
    writing: read-back trusts the run's own records); a rerun is cheap."""
    check_rate(spec)
    dirs = []
    for value, variant, seed in itertools.product(spec.grid, spec.variants, spec.seeds):
        dirs.append(out_dir / f"{spec.rate}-{value:g}" / f"{variant}-seed{seed}")
        extra = [*spec.overrides, f"backend.{spec.rate}={value}"]
        run_point(dirs[-1], spec.benchmark, variant, seed, spec.limit, extra)
    return dirs


# ---------------------------------------------------------------------------------- reading back
@dataclass(frozen=True)
class CatchRate:
    injected: int
    caught: int
    interval: tuple[float, float] | None

    @property
    def percent(self) -> tuple[float, float, float] | None:
        """The rate and its interval in percent, when faults were injected (else no interval)."""
        if self.interval is None:
            return None
        return 100 * self.caught / self.injected, 100 * self.interval[0], 100 * self.interval[1]


@dataclass(frozen=True)
class SweepPoint:
    value: float
    full: Estimate  # accuracy, percent
    ablation: Estimate
    delta: Estimate  # ablation − full, points, paired over items (and seeds)
    catch: dict[str, CatchRate] = field(default_factory=dict)  # variant -> catch rate of the target fault

    @property
    def distinguishable(self) -> bool:
        return not self.delta.contains(0.0)


def rate_value(run_dir: Path, rate: str) -> float:
    cfg = RunDir(run_dir).config()  # inert, like every reader of a run folder
    if cfg is None:
        raise SweepError(f"{run_dir} has no {RECORDED_CONFIG}: cannot tell which {rate} it ran with")
    value = OmegaConf.select(cfg, f"backend.{rate}")
    if value is None:
        raise SweepError(f"{run_dir / RECORDED_CONFIG} sets no backend.{rate}")
    return float(value)


def fault_counts(mechanisms: Mapping[str, Any], fault: str) -> tuple[int, int]:
    """(injected, caught) of one fault kind from a run's census; per-place breakdowns are summed."""
    sim = mechanisms.get("simulator") or {}

    def total(node: Any) -> int:
        if isinstance(node, Mapping):
            return sum(total(v) for v in node.values())
        return int(node or 0)

    injected, caught = ((sim.get(verb) or {}).get(fault, 0) for verb in ("injected", "neutralised"))
    return total(injected), total(caught)


def collect(
    run_dirs: Sequence[Path], spec: SweepSpec, bootstrap: BootstrapConfig = BootstrapConfig()
) -> list[SweepPoint]:
    """One point per rate value among the given runs (or run/sweep dirs), from the runs' own records;
    accuracy and Δ are those of the Table 3 rows the same runs give."""
    runs = [table3.load_run(d) for d in find_runs(run_dirs)]
    by_value: dict[float, list[table3.RunScores]] = {}
    for r in runs:
        by_value.setdefault(rate_value(r.run_dir, spec.rate), []).append(r)
    points = []
    for value in sorted(by_value):
        group = [r for r in by_value[value] if r.variant in spec.variants]
        if missing := [v for v in spec.variants if v not in {r.variant for r in group}]:
            raise SweepError(f"{spec.rate}={value:g}: no finished run of {', '.join(missing)}")
        try:
            rows = {row.variant: row for row in table3.build_rows(group, bootstrap=bootstrap)}
        except UserError as e:
            raise SweepError(f"{spec.rate}={value:g}: {e}") from None
        full, ablation = (rows[v] for v in spec.variants)
        if full.overall is None or ablation.overall is None or ablation.delta_ci is None:
            raise SweepError(f"{spec.rate}={value:g}: no item scored by both {' and '.join(spec.variants)}")
        catch = {}
        if (fault := spec.target.fault) is not None:
            for variant in spec.variants:
                catch[variant] = catch_rate(
                    [r for r in group if r.variant == variant], fault, bootstrap.level
                )
        points.append(SweepPoint(value, full.overall, ablation.overall, ablation.delta_ci, catch))
    return points


def catch_rate(runs: Sequence[table3.RunScores], fault: str, level: float) -> CatchRate:
    """The fault's catch rate summed over the runs (every seed of one variant)."""
    counts = [fault_counts(r.mechanisms, fault) for r in runs]
    injected, caught = sum(c[0] for c in counts), sum(c[1] for c in counts)
    return CatchRate(injected, caught, wilson_interval(caught, injected, level))


# ---------------------------------------------------------------------------------- rendering
def _ci(e: Estimate) -> str:
    return f"{e.mean:.2f} [{e.low:.2f}, {e.high:.2f}]".replace("-", "−")


def _catch(c: CatchRate | None) -> str:
    if c is None or c.percent is None:
        return "–" if c is None else "– (0 injected)"
    rate, low, high = c.percent
    return f"{rate:.1f} [{low:.1f}, {high:.1f}] ({c.caught}/{c.injected})"


def to_markdown(points: Sequence[SweepPoint], spec: SweepSpec) -> str:
    full, abl = spec.variants
    fault = spec.target.fault
    head = [spec.rate, f"{full} acc.", f"{abl} acc.", f"Δ {abl} − {full}", "Δ vs 0"]
    head += [f"{fault} catch % ({full})", f"{fault} catch % ({abl})"] if fault else []
    rows = [
        [
            f"{p.value:g}",
            *map(_ci, (p.full, p.ablation, p.delta)),
            "distinguishable" if p.distinguishable else table3.NOT_DISTINGUISHABLE,
            *([_catch(p.catch.get(full)), _catch(p.catch.get(abl))] if fault else []),
        ]
        for p in points
    ]
    return "\n".join(md_table(head, rows, first="---:")) + "\n"


def method_note(points: Sequence[SweepPoint], spec: SweepSpec, boot: BootstrapConfig) -> str:
    n = points[0].full.n if points else 0
    return (
        f"{NOTE}. {spec.benchmark}, {n} items, seeds {', '.join(map(str, spec.seeds))}; every other simulator "
        f"setting at its default{' with ' + ' '.join(spec.overrides) if spec.overrides else ''}. Accuracy (%) with a "
        f"{100 * boot.level:g} % item-bootstrap interval; Δ paired per item and seed ({boot.resamples} resamples, "
        f"seed {boot.seed}); catch %: neutralised / injected faults of that kind over all items and seeds with a Wilson "
        "interval (faults within an item are not independent, so it is optimistic). "
        "Errored items are left out pairwise."
    )


def to_csv(points: Sequence[SweepPoint], spec: SweepSpec) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    estimates = [f"{e}{end}" for e in ("full", "ablation", "delta") for end in ("", "_low", "_high")]
    catches = [f"{what}_{v}" for what in ("catch", "injected") for v in ("full", "ablation")]
    w.writerow([spec.rate, *estimates, "distinguishable", *catches])
    for p in points:
        cs = [p.catch.get(v) for v in spec.variants]
        intervals = [x for e in (p.full, p.ablation, p.delta) for x in (e.mean, e.low, e.high)]
        counts = [c.caught / c.injected if c and c.injected else None for c in cs] + [
            c.injected if c else None for c in cs
        ]
        w.writerow([p.value, *intervals, p.distinguishable, *counts])
    return buf.getvalue()


def _errorbar(ax: Any, xs: Sequence[float], ys: Sequence[tuple[float, float, float]], **kwargs: Any) -> None:
    """Points at each (value, low, high) with their interval as error bars."""
    below, above = [y - lo for y, lo, _ in ys], [hi - y for y, _, hi in ys]
    ax.errorbar(xs, [y for y, _, _ in ys], yerr=[below, above], capsize=3, marker="o", **kwargs)


def plot(points: Sequence[SweepPoint], spec: SweepSpec, path: Path) -> Path:
    """Left: Δ accuracy vs rate with paired intervals. Right: catch rate vs rate (when defined)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    full, abl = spec.variants
    xs = [p.value for p in points]
    panels = 2 if spec.target.fault else 1
    fig, axes = plt.subplots(1, panels, figsize=(5.2 * panels, 3.8), squeeze=False)
    ax = axes[0][0]
    _errorbar(ax, xs, [(p.delta.mean, p.delta.low, p.delta.high) for p in points])
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_xlabel(f"backend.{spec.rate}")
    ax.set_ylabel(f"Δ accuracy {abl} − {full} (points)")
    if spec.target.fault:
        axc = axes[0][1]
        for variant in spec.variants:
            pts = [(p.value, pc) for p in points if (c := p.catch.get(variant)) and (pc := c.percent)]
            if pts:
                _errorbar(axc, [x for x, _ in pts], [pc for _, pc in pts], label=variant)
        axc.set_xlabel(f"backend.{spec.rate}")
        axc.set_ylabel(f"{spec.target.fault} faults neutralised (%)")
        axc.set_ylim(-2, 102)
        if axc.has_data():
            axc.legend(fontsize="small")
        else:
            axc.text(0.5, 0.5, f"no {spec.target.fault} fault injected", ha="center", transform=axc.transAxes)
    fig.suptitle("simulated backbone (test instrument)", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


@dataclass(frozen=True)
class SweepOutputs:
    markdown: Path
    csv: Path
    chart: Path


def write_outputs(
    points: Sequence[SweepPoint], spec: SweepSpec, out_dir: Path, boot: BootstrapConfig
) -> SweepOutputs:
    stem = f"sweep_{spec.rate}"
    outs = SweepOutputs(out_dir / f"{stem}.md", out_dir / f"{stem}.csv", out_dir / f"{stem}.png")
    note = method_note(points, spec, boot)
    outs.markdown.write_text(to_markdown(points, spec) + "\n" + note + "\n", encoding="utf-8")
    outs.csv.write_text(to_csv(points, spec), encoding="utf-8")
    plot(points, spec, outs.chart)
    return outs


def sweep(
    spec: SweepSpec, out_dir: Path, boot: BootstrapConfig = BootstrapConfig()
) -> tuple[list[SweepPoint], SweepOutputs]:
    """Run the whole grid, read it back and write ``sweep_<rate>.md/.csv/.png`` into ``out_dir``."""
    points = collect(run_sweep(spec, out_dir), spec, boot)
    return points, write_outputs(points, spec, out_dir, boot)
