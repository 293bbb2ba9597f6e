"""Re-score a finished run from its stored replies, without re-running anything.

Why this exists: after a parser fix, or to report the upstream random-letter fallback
(``scoring.random_fallback_seed``), the numbers must be recomputable from what the run saved.
Every trajectory keeps the text the runner scored (``runner.answer_text``); this module feeds the
same text to the *current* scorer, rewrites ``results.jsonl`` and ``metrics.json``, and keeps the
previous files under ``rescore/<stamp>/`` (names that Table 3's scan does not pick up), so the old
numbers stay beside the new ones. No backend is constructed and no tool is called: the items come
from the benchmark loader of the run's recorded config, the text from the trajectories.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from ledgermind.benchmarks.item import Item
from ledgermind.confutil import container
from ledgermind.errors import DataError, UserError
from ledgermind.experiment.runner import Scorer, answer_text, read_trajectories, score_text
from ledgermind.metrics import summarize
from ledgermind.pipeline.config import PipelineConfig
from ledgermind.runs.atomic import atomic_write, atomic_write_json, json_text
from ledgermind.runs.files import METRICS_FILE, RECORDED_CONFIG, RESULTS_FILE
from ledgermind.runs.items import load_items
from ledgermind.runs.provenance import request_totals, scorer_version
from ledgermind.runs.reader import RunDir
from ledgermind.runs.results import ItemResult
from ledgermind.runs.summary import build_metrics
from ledgermind.trajectory import Trajectory

RESCORE_DIR = "rescore"


@dataclass(frozen=True)
class Change:
    id: str
    before: tuple[str | None, float, bool]  # (prediction, score, parsed)
    after: tuple[str | None, float, bool]


@dataclass
class RescoreReport:
    run_dir: Path
    n_items: int
    changes: list[Change] = field(default_factory=list)
    accuracy_before: float = 0.0
    accuracy_after: float = 0.0
    backup_dir: Path | None = None


def scorer_from_config(
    cfg: DictConfig | None, random_fallback_seed: int | None = None, *, trusted: bool = False
) -> Scorer:
    """The run's configured scorer (``app.configured_scorer``; the project's own unless ``trusted``),
    optionally with the seeded random-letter fallback (``scoring.random_fallback_seed``) switched on."""
    from ledgermind.experiment.app import configured_scorer

    node = OmegaConf.create(container(cfg, resolve=False) if cfg is not None else {})
    if random_fallback_seed is not None:
        OmegaConf.update(node, "scoring.random_fallback_seed", int(random_fallback_seed), force_add=True)
    scorer = configured_scorer(node, trusted=trusted)
    if random_fallback_seed is not None and not isinstance(scorer, functools.partial):
        raise UserError(
            f"scorer {node.get('scorer')} takes no ScoringConfig, so it has no random fallback to seed"
        )
    return scorer


# ------------------------------------------------------------------------------ re-scoring
async def rescore_results(
    results: Sequence[ItemResult], trajectories: dict[str, Trajectory], items: dict[str, Item], scorer: Scorer
) -> list[ItemResult]:
    """New result lines: the stored answer text through ``scorer``; items without a trajectory keep theirs."""
    out = []
    for r in results:
        traj = trajectories.get(r.id)
        if traj is None or r.error is not None:  # a failed item was never scored: it stays an error
            out.append(r)
            continue
        item = items.get(r.id)
        if item is None:
            raise UserError(
                f"item {r.id!r} of the run is no longer in the benchmark data; cannot re-score it"
            )
        view = await score_text(scorer, item, answer_text(traj))
        out.append(
            replace(
                r, prediction=view.prediction, score=view.score, parsed=view.parsed, **request_totals(traj)
            )
        )
    return out


def rescore_run(
    run_dir: Path,
    *,
    items: Iterable[Item] | None = None,
    scorer: Scorer | None = None,
    random_fallback_seed: int | None = None,
    trust_config: bool = False,
) -> RescoreReport:
    """Re-score one finished run in place; the previous files move to ``rescore/<stamp>/``."""
    run = RunDir(run_dir)
    run_dir, metrics_path = run.path, run.path / METRICS_FILE
    old_metrics = run.metrics()
    if old_metrics is None:
        raise UserError(f"{run_dir} has no {METRICS_FILE}: the run did not finish (resume it first)")
    cfg = run.config() if items is None or scorer is None else None
    if cfg is None and (items is None or scorer is None):
        raise UserError(f"{run_dir} has no recorded config ({RECORDED_CONFIG}); pass the items explicitly")
    # strict: a corrupt line would otherwise vanish from the rewritten file (an item silently dropped)
    results = run.results(strict=True)
    # a run folder is data: its benchmark is reloaded from the registry unless the user trusts it
    if items is None:
        items = load_items(cfg, None, trusted=trust_config)  # type: ignore[arg-type]  # cfg: checked above
    by_id = {it.id: it for it in items}
    scorer = scorer or scorer_from_config(cfg, random_fallback_seed, trusted=trust_config)
    try:
        trajs = read_trajectories(run_dir, [r.id for r in results], strict=True)
    except DataError as e:
        raise UserError(f"{e}; nothing was rewritten") from None
    new = asyncio.run(rescore_results(results, trajs, by_id, scorer))
    # everything is computed and checked before anything is written: a failure leaves the folder as it was
    identity = run.run_identity(old_metrics)
    identity = replace(identity, provenance={**identity.provenance, "scorer": scorer_version()})
    pipeline = (container(cfg, resolve=False) if cfg is not None else {}).get("pipeline", {})
    gamma = pipeline.get("gamma", PipelineConfig.gamma) if isinstance(pipeline, dict) else pipeline
    if isinstance(gamma, bool) or not isinstance(gamma, int | float):  # a hand-edited or foreign config
        raise UserError(f"{run_dir}: the recorded config's pipeline.gamma is {gamma!r}, not a number")
    metrics = build_metrics(
        new,
        list(trajs.values()),
        identity,
        wall_time_s=float(old_metrics.get("wall_time_s", 0.0)),
        gamma=float(gamma),
        summarize=summarize,
        wall_time_total_s=old_metrics.get("wall_time_total_s"),
    )
    changes = [
        Change(a.id, _verdict(a), _verdict(b))
        for a, b in zip(results, new, strict=True)
        if _verdict(a) != _verdict(b)
    ]
    metrics["rescore"] = {
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "scorer": scorer_version(),
        "scorer_before": (old_metrics.get("identity") or {}).get("scorer"),
        "random_fallback_seed": random_fallback_seed,
        "changed": len(changes),
        "accuracy_before": old_metrics.get("accuracy"),
    }
    backup = _backup(run_dir)
    metrics["rescore"]["previous"] = str((backup / "metrics.before.json").relative_to(run_dir))
    atomic_write(run_dir, run_dir / RESULTS_FILE, "".join(json_text(r.to_dict()) + "\n" for r in new))
    atomic_write_json(run_dir, metrics_path, metrics)
    return RescoreReport(
        run_dir, len(new), changes, float(old_metrics.get("accuracy", 0.0)), metrics["accuracy"], backup
    )


# ------------------------------------------------------------------------------ files
def _backup(run_dir: Path) -> Path:
    """Copy the current results and metrics under ``rescore/<stamp>/`` before they are replaced."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    backup = run_dir / RESCORE_DIR / stamp
    n = 1
    while backup.exists():
        n += 1
        backup = run_dir / RESCORE_DIR / f"{stamp}-{n}"
    atomic_write(run_dir, backup / "results.before.jsonl", (run_dir / RESULTS_FILE).read_bytes())
    atomic_write(run_dir, backup / "metrics.before.json", (run_dir / METRICS_FILE).read_bytes())
    return backup


def _verdict(r: ItemResult) -> tuple[str | None, float, bool]:
    return (r.prediction, r.score, r.parsed)
