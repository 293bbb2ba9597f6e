"""The view of one run: accuracy splits, errors apart, metrics, census, item table, charts.

Accuracies are recomputed from ``results.jsonl`` (the source of truth, as for Table 3) with the
same grouping helper ``metrics.json`` uses, so a run that never finished still gets a page.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ledgermind.backends.recorded import describe_backend
from ledgermind.metrics.census import TRIGGER_KEYS, TYPED_OPERATORS
from ledgermind.metrics.stats import wilson_interval
from ledgermind.report import census_table
from ledgermind.report.charts import Chart, bar_chart
from ledgermind.report.glossary import COST_SUMMARIES, Definition, glossary
from ledgermind.report.item_view import ItemView
from ledgermind.report.sources import RunData
from ledgermind.report.timeline import shorten
from ledgermind.report.why import WhyView, build_why
from ledgermind.runs.results import ItemResult
from ledgermind.runs.summary import difficulty_accuracy, group_accuracy
from ledgermind.runs.trajectories import safe_filename
from ledgermind.trajectory import Trigger

QUESTION_CHARS = 160  # question text in the item table (the item page has all of it)

OPERATORS = tuple(o.value for o in TYPED_OPERATORS)
SHORT_TRIGGER = {t.value: short for t, short in TRIGGER_KEYS.items()}  # "T6_PHANTOM_GROUNDING" → "T6"


@dataclass(frozen=True)
class ItemRow:
    id: str
    href: str
    outcome: str
    path: str
    difficulty: str
    subject: str
    question: str
    thumbnail: str | None  # report-relative path of the item's first image
    score: float
    prediction: str
    gold: str
    triggers: list[str]
    operators: list[str]
    abstained: bool
    # T6 events: a claim citing evidence that does not say it (not the simulator's "caught")
    phantom_caught: int
    model_calls: int
    tool_calls: int
    error: str
    short_id: str  # what the id column shows: unambiguous among the run's ids (``short_ids``)


ID_CHARS = 22  # the id column's width; longer ids keep their distinguishing end


def short_ids(ids: list[str], width: int = ID_CHARS) -> dict[str, str]:
    """Display ids no longer than ``width`` that stay distinct: a long id keeps its start and its end
    ("test_Clin…edicine_128"), since MMMU ids share long prefixes and differ at the end; when two
    shortenings still collide, both show in full."""
    head = max(4, (width - 1) // 3)
    tail = width - 1 - head
    short = {i: i if len(i) <= width else f"{i[:head]}…{i[-tail:]}" for i in ids}
    seen = Counter(short.values())
    return {i: (s if seen[s] == 1 else i) for i, s in short.items()}


@dataclass(frozen=True)
class Headline:
    """Accuracy over the scored items with its 95% Wilson interval (errors are counted apart)."""

    accuracy: float | None
    low: float | None
    high: float | None
    n: int


@dataclass
class RunView:
    title: str
    headline: Headline
    provenance: list[tuple[str, str]]  # identity, flattened, shown collapsed at the bottom
    notes: list[str]
    n_items: int
    splits: list[tuple[str, dict[str, dict[str, Any]]]]
    outcomes: dict[str, int]
    trajectory_metrics: dict[str, Any]
    summary: list[tuple[str, Any]]
    census: list[census_table.CensusRow]
    census_source: str
    items: list[ItemRow]
    charts: list[Chart]
    paths: list[str]
    why: WhyView | None = None
    definitions: dict[str, Definition] = field(default_factory=dict)  # metric name -> its one definition


def build_run_view(run: RunData, views: Mapping[str, ItemView]) -> RunView:
    """``views``: item id → its item page's view (what the row shows of the trajectory, its first
    image), one for every result."""
    results = run.results
    scored = [r for r in results if not r.error]
    by_diff = difficulty_accuracy(scored)
    splits = [
        ("subject", group_accuracy(scored, lambda r: [r.subject] if r.subject else [])),
        ("difficulty", by_diff),
        # errored items are counted apart (outcome "error"), never as a path's wrong answers
        ("path", group_accuracy(scored, lambda r: [r.path or "ERROR"])),
        ("question type", group_accuracy(scored, lambda r: r.question_types)),
    ]
    # a split nobody has is not shown
    splits = [(name, _with_intervals(groups)) for name, groups in splits if groups]
    shown = short_ids([r.id for r in results])
    rows = [_item_row(r, views[r.id], shown[r.id]) for r in results]
    # first: describing the backend registers its census sections, which a derived census counts
    describe_backend(str(run.identity.get("backend", "")))
    censuses = {i: census_table.item_census(t) for i, t in run.trajectories.items()}
    # each item's own census (recorded with its trajectory, else derived from it)
    item_censuses = {i: c for i, c in censuses.items() if c is not None}
    census, source = census_table.run_census(run.metrics, item_censuses.values())
    m = run.metrics
    summary: list[tuple[str, Any]] = [(k, m[k]) for k in COST_SUMMARIES if k in m]
    return RunView(
        title=f"{run.variant} — {backend_label(run.identity)} on {run.identity.get('benchmark', '?')}",
        headline=headline(scored),
        provenance=provenance_rows(run.identity),
        notes=run.notes,
        n_items=len(results),
        splits=splits,
        outcomes=dict(Counter(r.outcome for r in rows)),
        trajectory_metrics=dict(m.get("trajectory_metrics") or {}),
        summary=summary,
        census=census_table.rows(census, census_table.structural_zeros(run.run_dir, run.variant)),
        census_source=source,
        items=rows,
        charts=_charts(dict(sorted(by_diff.items())), rows),  # the chart lists difficulties by name
        paths=sorted({r.path for r in rows}),
        why=build_why(census, item_censuses, rows, list(SHORT_TRIGGER.values()), list(OPERATORS)),
        definitions={
            d.name: d for d in glossary([*(m.get("trajectory_metrics") or {}), *(k for k, _ in summary)])
        },
    )


def backend_label(identity: Mapping[str, Any]) -> str:
    """What answered: a backend that names itself (the simulator: its model config is only a
    placeholder), else the model."""
    backend = str(identity.get("backend", ""))
    if label := describe_backend(backend).label:
        return label
    model = str(identity.get("model", "?"))
    return f"{model} ({backend})" if backend else model


def headline(scored: list[ItemResult]) -> Headline:
    n = len(scored)
    acc = sum(r.score for r in scored) / n if n else None
    low, high = wilson_interval(sum(r.score for r in scored), n) or (None, None)
    return Headline(acc, low, high, n)


def _with_intervals(groups: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {}
    for g, s in groups.items():
        low, high = wilson_interval(s["accuracy"] * s["n"], s["n"]) or (None, None)
        out[g] = {**s, "low": low, "high": high}
    return out


def provenance_rows(identity: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The identity as ``key: value`` lines (nested records as indented JSON, not Python reprs)."""
    return [
        (
            str(k),
            json.dumps(v, indent=1, sort_keys=True, default=str) if isinstance(v, dict | list) else str(v),
        )
        for k, v in identity.items()
    ]


def item_href(item_id: str) -> str:
    """The item's page, relative to its run's page."""
    return f"items/{safe_filename(item_id)}.html"


def _item_row(r: ItemResult, v: ItemView, short_id: str) -> ItemRow:
    """The item's row: its result's columns and what its page's view read from the trajectory (a
    trajectory of another shape leaves that view, and so the row, with the result's columns only)."""
    first = v.images[0].stored if v.images else None
    return ItemRow(
        id=r.id,
        href=item_href(r.id),
        outcome=v.outcome,
        path=r.path or "ERROR",
        difficulty=r.difficulty or "",
        subject=r.subject or "",
        question=shorten(v.question, QUESTION_CHARS),
        thumbnail=first.rel if first else None,
        score=r.score,
        prediction="" if r.prediction is None else str(r.prediction),
        gold="" if r.gold is None else str(r.gold),
        triggers=sorted({SHORT_TRIGGER.get(t, t) for t in v.triggers}),
        operators=sorted(set(v.operators)),
        abstained=v.abstained,
        phantom_caught=v.triggers.count(Trigger.T6.value),
        model_calls=r.model_calls,
        tool_calls=r.tool_calls,
        error=v.error or "",
        short_id=short_id,
    )


def _charts(by_difficulty: dict[str, dict[str, Any]], rows: list[ItemRow]) -> list[Chart]:
    acc = [(f"{d} (n={v['n']})", [100.0 * v["accuracy"]]) for d, v in by_difficulty.items()]
    trig = Counter(t for r in rows for t in r.triggers)
    per_path = {p: [r for r in rows if r.path == p] for p in sorted({r.path for r in rows})}
    accuracy = bar_chart(
        "chart-accuracy", "Accuracy by difficulty (%)", acc, max_value=100.0, fmt="{:.1f}", bar_w=72
    )
    return [
        *([accuracy] if acc else []),  # a benchmark without difficulty labels gets no empty chart
        bar_chart(
            "chart-triggers",
            "Items where each trigger fired",
            [(k, [trig[k]]) for k in SHORT_TRIGGER.values()],
        ),
        bar_chart(
            "chart-operators",
            "Items where each operator ran",
            [(o.replace("_AND_", "&"), [sum(1 for r in rows if o in r.operators)]) for o in OPERATORS],
            bar_w=64,
        ),
        bar_chart(
            "chart-calls",
            "Calls per item by path",
            [
                (p, [sum(r.model_calls for r in rs) / len(rs), sum(r.tool_calls for r in rs) / len(rs)])
                for p, rs in per_path.items()
            ],
            series_names=("model calls", "tool calls"),
            fmt="{:.1f}",
        ),
    ]
