"""``metrics.json``: what a finished run reports, and the identity that Table 3 checks.

Accuracies are fractions in [0, 1] (the mean item score); Table 3 renders them as percentages.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ledgermind.backends.recorded import describe_backend
from ledgermind.metrics.census import census, sum_census, with_section_totals
from ledgermind.records import REST, Record
from ledgermind.runs.results import ItemResult
from ledgermind.trajectory import MarkKind

DIFFICULTIES = ("Easy", "Medium", "Hard")  # the MMMU-Pro topic_difficulty split of Table 3

Summarize = Callable[[list[Any], list[float], float], Mapping[str, Any]]


@dataclass(frozen=True)
class RunIdentity(Record):
    """What must agree between runs before their numbers may share a table."""

    # Config hash, git state, versions, prompt hashes, image budget, ... (runs/provenance.py),
    # written flat before the fields below.
    provenance: Mapping[str, Any] = field(default_factory=dict, compare=False, kw_only=True, metadata=REST)
    model: str
    backend: str
    benchmark: str
    variant: str
    items_sha256: str
    n_items: int
    seed: int = 0


def items_hash(ids: Iterable[str]) -> str:
    """Order-independent hash of the item set (of ``Item.content_sha256`` digests: ids of older runs),
    so a shuffled loader still compares equal and an edited item does not."""
    h = hashlib.sha256()
    for item_id in sorted(set(ids)):
        h.update(item_id.encode("utf-8") + b"\0")
    return h.hexdigest()


def group_accuracy(
    results: Sequence[ItemResult], key: Callable[[ItemResult], Iterable[str]]
) -> dict[str, Any]:
    """``{group: {"n": .., "accuracy": ..}}``; an item may belong to several groups (question types)."""
    buckets: dict[str, list[float]] = defaultdict(list)
    for r in results:
        for g in key(r):
            buckets[g].append(r.score)
    return {g: {"n": len(s), "accuracy": sum(s) / len(s)} for g, s in sorted(buckets.items())}


def difficulty_accuracy(results: Sequence[ItemResult]) -> dict[str, Any]:
    """``group_accuracy`` by difficulty, Table 3's Easy / Medium / Hard first, any other label after."""
    groups = group_accuracy(results, lambda r: [r.difficulty] if r.difficulty else [])
    return {d: groups[d] for d in DIFFICULTIES if d in groups} | {
        d: v for d, v in groups.items() if d not in DIFFICULTIES
    }


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _per_item(results: Sequence[ItemResult], *fields: str) -> dict[str, float]:
    """``{"<field>_per_item": mean}`` of the given ``ItemResult`` fields, in the order given."""
    return {f"{f}_per_item": _mean([getattr(r, f) for r in results]) for f in fields}


def build_metrics(
    results: Sequence[ItemResult],
    trajectories: Sequence[Any],
    identity: RunIdentity,
    *,
    wall_time_s: float,
    gamma: float,
    summarize: Summarize | None,
    wall_time_total_s: float | None = None,
) -> dict[str, Any]:
    """Aggregate a run. ``trajectories`` are ``Trajectory`` objects of the items that have one.

    Errored items (``ItemResult.error``) are counted in ``errors`` and left out of every accuracy
    and of the trajectory metrics: ``n_scored`` items make the accuracy, ``n_items`` were asked.
    """
    # first: describing the backend imports its plugin, which registers its census sections (the
    # simulator's); a process that only reads a run (rescore) has never built the backend
    backend = describe_backend(identity.backend)
    failed = [r for r in results if r.error is not None]
    results = [r for r in results if r.error is None]
    ok_ids = {r.id for r in results}
    trajectories = [t for t in trajectories if t.item_id in ok_ids]
    # UCR_reason, GDR, R4R, WDG, OCErr, EUR, RR, RC, SE from the metrics package (App. F)
    score_of = {r.id: r.score for r in results}
    scores = [score_of[t.item_id] for t in trajectories]
    trajectory_metrics = dict(summarize(trajectories, scores, gamma)) if summarize and trajectories else {}
    metrics: dict[str, Any] = {
        "identity": identity.to_dict(),
        "n_items": len(results) + len(failed),
        "n_scored": len(results),
        "accuracy": _mean([r.score for r in results]),
        "by_difficulty": difficulty_accuracy(results),
        "by_question_type": group_accuracy(results, lambda r: r.question_types),
        "by_path": group_accuracy(results, lambda r: [r.path or "UNKNOWN"]),
        "by_subject": group_accuracy(results, lambda r: [r.subject] if r.subject else []),
        **_per_item(results, "model_calls", "tool_calls", "tokens", "latency_s"),
        "unparsed": sum(1 for r in results if not r.parsed),
        "errors": len(failed),
        "error_causes": error_causes(failed),
        "truncated": sum(1 for r in results if r.truncated),
        **_per_item(results, "prompt_tokens", "image_pixels"),
        "wall_time_s": wall_time_s,  # this invocation; the total is over all invocations
        "wall_time_total_s": wall_time_s if wall_time_total_s is None else wall_time_total_s,
        "trajectory_metrics": trajectory_metrics,
        "mechanisms": sum_census(census(t) for t in trajectories),
        "abstention_rate": _mean([1.0 if t.abstained else 0.0 for t in trajectories]),
        # knowledge questions that met no knowledge source (no search provider, no corpus): items, not marks
        "knowledge_without_source": sum(
            1 for t in trajectories if any(m.kind is MarkKind.SEARCH_SKIPPED_NO_PROVIDER for m in t.marks)
        ),
    }
    with_section_totals(metrics["mechanisms"])  # e.g. the share of the simulator's injected faults caught
    if disclaimer := backend.disclaimer:  # a test instrument says so
        metrics["test_instrument"] = disclaimer
    return metrics


def error_causes(failed: Sequence[ItemResult], top: int = 5) -> dict[str, int]:
    """The most frequent causes, most frequent first. A cause is the error's first clause:
    'model call failed (decide): vLLM server unavailable …; last error: …' → the text before ';'."""
    counts = Counter((r.error or "").split(";")[0][:240] for r in failed)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top])
