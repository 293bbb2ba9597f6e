"""``metrics.json``: what a finished run reports, and the identity that Table 3 checks.

Accuracies are fractions in [0, 1] (the mean item score); Table 3 renders them as percentages.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ledgermind.experiment.results import ItemResult
from ledgermind.metrics.census import census, sum_census

DIFFICULTIES = ("Easy", "Medium", "Hard")  # the MMMU-Pro topic_difficulty split of Table 3

Summarize = Callable[[list[Any], list[float], float], Mapping[str, Any]]


@dataclass(frozen=True)
class RunIdentity:
    """What must agree between runs before their numbers may share a table."""

    model: str
    backend: str
    benchmark: str
    variant: str
    items_sha256: str
    n_items: int
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RunIdentity:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


def items_hash(ids: Iterable[str]) -> str:
    """Order-independent hash of the item set, so a shuffled loader still compares equal."""
    h = hashlib.sha256()
    for item_id in sorted(set(ids)):
        h.update(item_id.encode("utf-8") + b"\0")
    return h.hexdigest()


def group_accuracy(results: Sequence[ItemResult], key: Callable[[ItemResult], Iterable[str]]) -> dict[str, Any]:
    """``{group: {"n": .., "accuracy": ..}}``; an item may belong to several groups (question types)."""
    buckets: dict[str, list[float]] = defaultdict(list)
    for r in results:
        for g in key(r):
            buckets[g].append(r.score)
    return {g: {"n": len(s), "accuracy": sum(s) / len(s)} for g, s in sorted(buckets.items())}


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def build_metrics(
    results: Sequence[ItemResult],
    trajectories: Sequence[Any],
    identity: RunIdentity,
    *,
    wall_time_s: float,
    gamma: float,
    summarize: Summarize | None,
) -> dict[str, Any]:
    """Aggregate a run. ``trajectories`` are ``Trajectory`` objects of the items that have one."""
    by_difficulty = group_accuracy(results, lambda r: [r.difficulty] if r.difficulty else [])
    metrics: dict[str, Any] = {
        "identity": identity.to_dict(),
        "n_items": len(results),
        "accuracy": _mean([r.score for r in results]),
        "by_difficulty": {d: by_difficulty[d] for d in DIFFICULTIES if d in by_difficulty}
        | {d: v for d, v in by_difficulty.items() if d not in DIFFICULTIES},
        "by_question_type": group_accuracy(results, lambda r: r.question_types),
        "by_path": group_accuracy(results, lambda r: [r.path or "ERROR"]),
        "by_subject": group_accuracy(results, lambda r: [r.subject] if r.subject else []),
        "model_calls_per_item": _mean([r.model_calls for r in results]),
        "tool_calls_per_item": _mean([r.tool_calls for r in results]),
        "tokens_per_item": _mean([r.tokens for r in results]),
        "latency_s_per_item": _mean([r.latency_s for r in results]),
        "unparsed": sum(1 for r in results if not r.parsed and r.error is None),
        "errors": sum(1 for r in results if r.error is not None),
        "wall_time_s": wall_time_s,
        "trajectory_metrics": _trajectory_metrics(results, trajectories, gamma, summarize),
        "mechanisms": sum_census(census(t) for t in trajectories),
        "abstention_rate": _mean([1.0 if t.abstained else 0.0 for t in trajectories]),
    }
    return metrics


def _trajectory_metrics(
    results: Sequence[ItemResult], trajectories: Sequence[Any], gamma: float, summarize: Summarize | None
) -> dict[str, Any]:
    """UCR_reason, GDR, R4R, WDG, OCErr, EUR, RR, RC, SE from the metrics package (App. F)."""
    if summarize is None or not trajectories:
        return {}
    score_of = {r.id: r.score for r in results}
    scores = [score_of.get(t.item_id, 0.0) for t in trajectories]
    return dict(summarize(list(trajectories), scores, gamma))
