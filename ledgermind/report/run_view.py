"""The view of one run: accuracy splits, errors apart, metrics, census, item table, charts.

Accuracies are recomputed from ``results.jsonl`` (the source of truth, as for Table 3) with the
same grouping helper ``metrics.json`` uses, so a run that never finished still gets a page.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from ledgermind.experiment.results import ItemResult
from ledgermind.experiment.summary import DIFFICULTIES, group_accuracy
from ledgermind.metrics.census import TRIGGER_KEYS, TYPED_OPERATORS
from ledgermind.report import census_table
from ledgermind.report.charts import Chart, bar_chart
from ledgermind.report.item_view import outcome_of
from ledgermind.report.sources import RunData
from ledgermind.trajectory import Trigger

OPERATORS = tuple(o.value for o in TYPED_OPERATORS)
SHORT_TRIGGER = {t.value: short for t, short in TRIGGER_KEYS.items()}  # "T6_PHANTOM_GROUNDING" → "T6"


@dataclass(frozen=True)
class ItemRow:
    id: str
    href: str
    outcome: str
    path: str
    difficulty: str
    score: float
    prediction: str
    gold: str
    triggers: list[str]
    operators: list[str]
    abstained: bool
    phantom_caught: int  # T6 events: a claim citing evidence that does not say it, caught
    model_calls: int
    tool_calls: int
    error: str


@dataclass
class RunView:
    title: str
    identity: dict[str, Any]
    notes: list[str]
    n_items: int
    accuracy: float | None
    splits: list[tuple[str, dict[str, dict[str, Any]]]]
    outcomes: dict[str, int]
    trajectory_metrics: dict[str, Any]
    summary: list[tuple[str, Any]]
    census: list[census_table.CensusRow]
    census_source: str

    @property
    def census_groups(self) -> list[tuple[str, list[census_table.CensusRow]]]:
        return census_table.grouped(self.census)
    items: list[ItemRow]
    charts: list[Chart]
    paths: list[str]


def build_run_view(run: RunData, item_href: dict[str, str]) -> RunView:
    results = run.results
    by_diff = group_accuracy(results, lambda r: [r.difficulty] if r.difficulty else [])
    splits = [
        ("difficulty", {d: by_diff[d] for d in DIFFICULTIES if d in by_diff} | {d: v for d, v in by_diff.items() if d not in DIFFICULTIES}),
        ("path", group_accuracy(results, lambda r: [r.path or "ERROR"])),
        ("question type", group_accuracy(results, lambda r: r.question_types)),
    ]
    rows = [_item_row(r, run.trajectories.get(r.id), item_href.get(r.id, "")) for r in results]
    census, source = census_table.run_census(run.metrics, run.trajectories.values())
    m = run.metrics
    summary = [(k, m[k]) for k in ("model_calls_per_item", "tool_calls_per_item", "tokens_per_item",
                                    "latency_s_per_item", "wall_time_s") if k in m]  # fmt: skip
    return RunView(
        title=f"{run.variant} — {run.identity.get('model', '?')} on {run.identity.get('benchmark', '?')}",
        identity=run.identity,
        notes=run.notes,
        n_items=len(results),
        accuracy=sum(r.score for r in results) / len(results) if results else None,
        splits=splits,
        outcomes=dict(Counter(r.outcome for r in rows)),
        trajectory_metrics=dict(m.get("trajectory_metrics") or {}),
        summary=summary,
        census=census_table.rows(census),
        census_source=source,
        items=rows,
        charts=_charts(splits[0][1], rows),
        paths=sorted({r.path for r in rows}),
    )


def _item_row(r: ItemResult, t: dict[str, Any] | None, href: str) -> ItemRow:
    events = (t or {}).get("events", [])
    triggers = sorted({SHORT_TRIGGER.get(str(e.get("trigger")), str(e.get("trigger"))) for e in events})
    return ItemRow(
        id=r.id,
        href=href,
        outcome=outcome_of(r, t),
        path=r.path or "ERROR",
        difficulty=r.difficulty or "",
        score=r.score,
        prediction="" if r.prediction is None else str(r.prediction),
        gold="" if r.gold is None else str(r.gold),
        triggers=triggers,
        operators=sorted({str(e["operator"]) for e in events if e.get("operator")}),
        abstained=bool((t or {}).get("abstained", False)),
        phantom_caught=sum(1 for e in events if e.get("trigger") == Trigger.T6.value),
        model_calls=r.model_calls,
        tool_calls=r.tool_calls,
        error=r.error or (t or {}).get("error") or "",
    )


def _charts(by_difficulty: dict[str, dict[str, Any]], rows: list[ItemRow]) -> list[Chart]:
    acc = [(d, [100.0 * v["accuracy"]]) for d, v in by_difficulty.items()]
    trig = Counter(t for r in rows for t in r.triggers)
    per_path: dict[str, list[ItemRow]] = defaultdict(list)
    for r in rows:
        per_path[r.path].append(r)
    return [
        bar_chart("chart-accuracy", "Accuracy by difficulty (%)", acc, max_value=100.0, fmt="{:.1f}"),
        bar_chart("chart-triggers", "Items where each trigger fired", [(k, [trig[k]]) for k in SHORT_TRIGGER.values()]),
        bar_chart("chart-operators", "Items where each operator ran",
                  [(o.replace("_AND_", "&"), [sum(1 for r in rows if o in r.operators)]) for o in OPERATORS], bar_w=64),  # fmt: skip
        bar_chart(
            "chart-calls", "Calls per item by path",
            [(p, [sum(r.model_calls for r in rs) / len(rs), sum(r.tool_calls for r in rs) / len(rs)]) for p, rs in sorted(per_path.items())],
            series_names=("model calls", "tool calls"), fmt="{:.1f}",
        ),  # fmt: skip
    ]
