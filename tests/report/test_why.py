"""The run page's "why" panel, unambiguous ids, the chart legend, the metric glossary."""

from __future__ import annotations

from dataclasses import dataclass, field

from ledgermind.report.charts import LEGEND_STEP, bar_chart
from ledgermind.report.glossary import HIGHER, LOWER, definition
from ledgermind.report.run_view import short_ids
from ledgermind.report.why import build_why


@dataclass
class Row:
    id: str
    outcome: str
    triggers: list[str] = field(default_factory=list)
    operators: list[str] = field(default_factory=list)

    @property
    def href(self) -> str:
        return f"items/{self.id}.html"


SIM = {
    "injected": {"phantom": 4, "misread": 0, "flip": 2},
    "caught": {"phantom": 3, "misread": 0},
    "missed": {"phantom": 1, "misread": 0},
    "in_answer": {"phantom": 1, "misread": 0, "flip": 2},
}


def test_why_panel_counts_are_the_census_and_examples_are_items_where_the_fault_got_through() -> None:
    rows = [
        Row("a", "wrong", ["T6"], ["ACQUIRE"]),
        Row("b", "correct", ["T6"]),
        Row("c", "wrong"),
        Row("d", "error"),
        Row("e", "unparsed", ["T5"]),
    ]
    per_item = {
        "a": {"simulator": {"missed": {"phantom": 1}, "in_answer": {"phantom": 1}}},
        "c": {"simulator": {"in_answer": {"flip": 2}}},
    }
    w = build_why({"triggers": {"T6": 2}, "simulator": SIM}, per_item, rows, ["T5", "T6"], ["ACQUIRE"])
    assert (w.n_scored, w.n_lost) == (4, 3)  # the errored item is neither scored nor lost
    (sec,) = w.faults
    assert (
        sec.outcomes == ("injected", "caught", "missed", "in_answer")
        and sec.label("in_answer") == "reached the answer"
    )
    by_kind = {r.kind: r for r in sec.rows}
    assert set(by_kind) == {"phantom", "flip"}  # misread: nothing injected or counted, nothing to explain
    assert by_kind["phantom"].counts == {"injected": 4, "caught": 3, "missed": 1, "in_answer": 1}
    assert by_kind["flip"].counts == {
        "injected": 2,
        "caught": None,
        "missed": None,
        "in_answer": 2,
    }  # not catchable
    assert [e.id for e in by_kind["phantom"].examples] == ["a"] and [
        e.href for e in by_kind["flip"].examples
    ] == ["items/c.html"]
    t6 = next(m for m in w.triggers if m.name == "T6")
    assert (t6.lost, t6.right, [e.id for e in t6.examples]) == (1, 1, ["a"])
    assert (w.unflagged.lost, [e.id for e in w.unflagged.examples]) == (1, ["c"])
    assert next(m for m in w.operators if m.name == "ACQUIRE").lost == 1


def test_short_ids_keep_the_distinguishing_end_and_never_collide() -> None:
    ids = ["test_Clinical_Medicine_128", "test_Clinical_Medicine_118", "q1"]
    shown = short_ids(ids)
    assert shown["q1"] == "q1" and len(set(shown.values())) == 3
    assert (
        shown["test_Clinical_Medicine_128"].endswith("_128")
        and len(shown["test_Clinical_Medicine_128"]) <= 22
    )
    clash = short_ids(
        ["aaaaaaaaXXXXXXXXXXXXXXXXXXXXbbbbbbbbbbbbbbb", "aaaaaaaaYYYYYYYYYYYYYYYYYYYYbbbbbbbbbbbbbbb"]
    )
    assert set(clash.values()) == set(clash)  # same shortening: both in full


def test_a_two_series_chart_is_wide_enough_for_its_legend() -> None:
    c = bar_chart(
        "c", "Calls per item by path", [("FULLPIPE", [3.0, 5.0])], series_names=("model calls", "tool calls")
    )
    assert c.width >= 8 + LEGEND_STEP + len("■ tool calls") * 7  # the second name starts at 8 + LEGEND_STEP


def test_one_definition_per_metric_with_its_direction() -> None:
    gdr, wdg, rc = definition("GDR"), definition("WDG"), definition("RC")
    assert gdr and gdr.direction == HIGHER and gdr.text.startswith("Eq. 8") and "(↑)" not in gdr.text
    assert wdg and wdg.direction == LOWER and rc and rc.direction == LOWER
    assert definition("no_such_metric") is None
