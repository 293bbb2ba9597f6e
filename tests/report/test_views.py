"""The report's view layer and builder without a browser: highlighting, census rows, outcomes,
timeline order, tolerance to old or partial runs, escaping in the written HTML, Table 3."""

from __future__ import annotations

import json
import os
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ledgermind.errors import DataError, UserError
from ledgermind.report import build_report, census_table
from ledgermind.report.highlight import Segment, segments
from ledgermind.report.images import ImageStore
from ledgermind.report.item_view import ItemView, build_item_view, outcome_of
from ledgermind.report.sources import input_image_path, load_run
from ledgermind.report.timeline import timeline
from ledgermind.runs.results import ItemResult
from ledgermind.runs.trajectories import safe_filename, trajectory_path


# ----------------------------------------------------------------------------- pure helpers
def marked(segs: list[Segment]) -> list[str]:
    """The marked texts, in order (what a reader sees highlighted)."""
    return [s.text for s in segs if s.mark]


def test_segments_mark_entities_and_whole_numbers_only() -> None:
    segs = segments("It is the Apollo 13 plaque, 15.5 kPa not 5", ["Apollo 13"], ["5"])
    assert marked(segs) == ["Apollo 13", "5"]  # "5" inside "15.5" is not marked
    assert [s.mark for s in segs if s.mark] == ["entity", "number"]
    assert "".join(s.text for s in segs) == "It is the Apollo 13 plaque, 15.5 kPa not 5"
    hostile = segments("<script>x</script> Paris", ["Paris"])
    assert hostile[0].text == "<script>x</script> " and hostile[0].mark is None  # text, left to the escaper
    assert segments("", ["a"]) == [] and marked(segments("abc", [], [])) == []


def test_census_rows_flatten_any_nesting_and_flag_zeros() -> None:
    census = {
        "paths": {"DIRECT": 3, "FULLPIPE": 0},
        "dual_read": {"runs": 0, "agree": 0},
        "abstained": 2,
        "search": {"rounds": {"r1": 1, "r2": 0}},
        "flag": True,
    }
    rows = census_table.rows(census)
    assert [r.key for r in rows] == [
        "paths.DIRECT",
        "paths.FULLPIPE",
        "dual_read.runs",
        "dual_read.agree",
        "abstained",
        "search.rounds.r1",
        "search.rounds.r2",
        "flag",
    ]
    assert {r.key for r in rows if r.meaning == "dead"} == {
        "dual_read.runs",
        "dual_read.agree",
        "search.rounds.r2",
    }
    assert (
        next(r for r in rows if r.key == "paths.FULLPIPE").meaning == "good-zero"
    )  # a route not taken is not dead


def test_census_zeros_coloured_by_meaning_in_a_per_fault_kind_section() -> None:
    sim = {
        "injected": {"phantom": 3, "flip": 0},
        "caught": {"phantom": 0, "misread": 0},
        "missed": {"phantom": 3},
        "in_answer": {"phantom": 0},
    }
    census = {"simulator": sim, "operator_failures": 0, "triggers": {"T2": 0}}
    meaning = {r.key: r.meaning for r in census_table.rows(census, {"triggers.T2"})}
    assert meaning["simulator.caught.phantom"] == "dead"  # injected 3, caught none: red
    assert meaning["simulator.caught.misread"] == "good-zero"  # never injected: nothing to catch
    assert meaning["simulator.in_answer.phantom"] == meaning["simulator.injected.flip"] == "good-zero"
    assert meaning["operator_failures"] == "good-zero" and meaning["triggers.T2"] == "structural"


def _result(**kw) -> ItemResult:
    base = dict(id="q", prediction="A", gold="A", score=1.0, parsed=True, path="DIRECT", difficulty="Easy")
    return ItemResult(**(base | kw))


def test_outcomes_keep_errors_and_unparsed_apart_from_wrong() -> None:
    assert outcome_of(_result(), {}) == "correct"
    assert outcome_of(_result(score=0.0), {}) == "wrong"
    assert outcome_of(_result(score=0.5), {}) == "partial"
    assert outcome_of(_result(score=0.0, parsed=False, prediction=None), {}) == "unparsed"
    assert outcome_of(_result(score=0.0, error="backend: connection refused"), {}) == "error"
    assert outcome_of(_result(score=0.0, path=None), None) == "error"  # the agent raised
    assert outcome_of(_result(score=0.0), {"error": "image unreadable"}) == "error"


def test_timeline_orders_calls_tools_and_triggers_by_step() -> None:
    t = {
        "model_calls": [
            {"stage": "plan", "step": 1, "latency_s": 0.5, "prompt_tokens": 3, "completion_tokens": 2},
            {"stage": "decide", "step": 3, "latency_s": 0.2, "error": "timeout"},
        ],
        "ledger": {
            "entries": [{"id": "OC-1", "tool_call_id": "ocr#1", "t": 2.0}],
            "tool_outputs": [
                {
                    "call_id": "ocr#1",
                    "tool": "ocr",
                    "observations": [{}],
                    "created_at": 10.0,
                    "latency_s": 0.1,
                },
                {
                    "call_id": "ocr#2",
                    "tool": "ocr",
                    "observations": [],
                    "error": "crashed",
                    "created_at": 11.0,
                },
            ],
        },
        "events": [
            {
                "trigger": "T1_TOOL_ANOMALY",
                "operator": "RETRY",
                "layer": "ACTION",
                "targets": ["ocr#2"],
                "cost": 4.0,
                "step": 2,
            }
        ],
    }
    rows = timeline(t)
    assert [(r.step, r.kind, r.label.split(" ")[0]) for r in rows] == [
        (1, "model", "plan"),
        (2, "tool", "ocr"),
        (2, "tool", "ocr"),
        (2, "trigger", "T1_TOOL_ANOMALY"),
        (3, "model", "decide"),
    ]
    assert rows[0].cost == "0.50 s · 5 tok" and rows[3].cost == "cost 4"
    assert [r.failed for r in rows] == [False, False, True, False, True]
    assert "RETRY" in rows[3].detail and "ocr#2" in rows[3].detail


def test_input_image_path_reads_what_the_ledger_recorded() -> None:
    assert input_image_path("PosixPath('/data/a b.png')") == Path("/data/a b.png")
    assert input_image_path("/data/x.jpg") == Path("/data/x.jpg")
    assert input_image_path("<PIL.Image.Image image mode=RGB>") is None and input_image_path(None) is None


# ----------------------------------------------------------------------------- views of real trajectories
def test_item_view_of_a_real_trajectory(scripted_multirun: Path, tmp_path: Path) -> None:
    run = load_run(scripted_multirun / "0_full")
    t = run.trajectories["apollo"]
    v = build_item_view(
        run.results[[r.id for r in run.results].index("apollo")],
        t,
        run.items["apollo"],
        ImageStore(tmp_path, run.image_roots()),
    )
    assert v.path == "FULLPIPE" and v.outcome == "correct"
    with_box = [e for e in t["ledger"]["entries"] if e.get("bbox")]
    assert (
        len(v.images) == 1
        and v.images[0].stored
        and (v.images[0].stored.width, v.images[0].stored.height) == (400, 300)
    )
    assert sorted(b.entry_id for b in v.images[0].boxes) == sorted(e["id"] for e in with_box)
    claims = {c.id: c for _, cs in v.chain for c in cs}
    sc2 = claims["SC-2"]
    assert sc2.ecc is False and sc2.missing_entities == ["Apollo 13"] and "Apollo 13" in marked(sc2.text)
    entry_ids = {e.id for e in v.entries}
    for c in claims.values():
        for (
            ci
        ) in c.citations:  # a citation links to its entry when the entry exists, else is shown as unresolved
            assert (ci.anchor == f"entry-{ci.raw}") == (ci.raw in entry_ids) or ci.anchor == f"claim-{ci.raw}"
    assert [name for name, _ in v.chain] == ["[E]", "[J]", "DC"]
    cited = {e.id: e.cited_by for e in v.entries}
    assert "SC-1" in cited["OC-2"]


def _write_old_run(run: Path) -> Path:
    """No metrics.json, no .hydra, a trajectory without mechanisms/claims keys whose image lies outside
    the run and data folders, an item without a trajectory."""
    (run / "trajectories").mkdir(parents=True)
    rows = [_result(id="a").to_dict(), _result(id="b", score=0.0, path=None, error="server down").to_dict()]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    trajectory_path(run, "a").write_text(
        json.dumps(
            {
                "item_id": "a",
                "question": "Q <b>?",
                "path": "DIRECT",
                "ledger": {
                    "entries": [
                        {
                            "id": "OC-1",
                            "src": "ocr",
                            "kappa": "PERCEPTION",
                            "fact": "x",
                            "sigma": 0.9,
                            "omega": "STALE",
                            "bbox": [1, 2, 3, 4],
                            "tool_call_id": "ocr#1",
                        }
                    ],
                    "tool_outputs": [
                        {
                            "call_id": "ocr#1",
                            "tool": "ocr",
                            "inputs": {"image": "PosixPath('/nonexistent/i.png')"},
                        }
                    ],
                },
            }
        )
    )
    return run


def test_report_tolerates_old_and_partial_runs(tmp_path: Path) -> None:
    run = _write_old_run(tmp_path / "old")
    index = build_report(run)
    html = index.read_text()
    assert "no metrics.json" in html and "no mechanism census" in html
    item_a = (run / "report" / "items" / f"{safe_filename('a')}.html").read_text()
    assert (
        "image outside the run and data directories, not shown: i.png" in item_a and "Q &lt;b&gt;?" in item_a
    )
    item_b = (run / "report" / "items" / f"{safe_filename('b')}.html").read_text()
    assert "server down" in item_b and "No trajectory was recorded" in item_b


def test_side_by_side_page_of_an_item_whose_image_is_not_shown(tmp_path: Path) -> None:
    """The first run's image of the item cannot be stored (outside the run and data folders): the
    side-by-side page is written without it rather than the whole multirun report failing."""
    multi = tmp_path / "multi"
    for name in ("0_full", "1_no_ecc"):
        _write_old_run(multi / name)
    index = build_report(multi)
    page = (index.parent / "compare" / f"{safe_filename('a')}.html").read_text()
    assert "Item <code>a</code> across runs" in page and "compare-image" not in page


def test_a_run_whose_metrics_record_no_identity_is_named_by_its_folder(tmp_path: Path) -> None:
    run = _write_old_run(tmp_path / "old")
    (run / "metrics.json").write_text(json.dumps({"identity": None}))
    assert load_run(run).variant == "old"
    assert "old" in build_report(run).read_text()


@pytest.mark.parametrize(
    "trajectory",
    [{"item_id": "a", "ledger": "x"}, {"ledger": {"claims": [5]}}, {"marks": 5}, {"events": [1, 2]}],
)
def test_a_trajectory_of_another_shape_is_shown_unreadable_not_a_crash(tmp_path: Path, trajectory) -> None:
    run = tmp_path / "run"
    (run / "trajectories").mkdir(parents=True)
    (run / "results.jsonl").write_text(json.dumps(_result(id="a").to_dict()) + "\n")
    trajectory_path(run, "a").write_text(json.dumps(trajectory))
    build_report(run)
    page = (run / "report" / "items" / f"{safe_filename('a')}.html").read_text()
    assert "trajectory unreadable (" in page and "shown without it" in page


def test_census_rendered_with_never_fired_flags(scripted_multirun: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(scripted_multirun / "0_full", run)
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["mechanisms"] = {
        "triggers": {"T1": 2, "T2": 0},
        "dual_read": {"runs": 0, "identical_requests": 0},
        "operator_failures": 0,
        "new_mechanism": {"x": 5},
    }
    (run / "metrics.json").write_text(json.dumps(metrics))
    build_report(run)
    html = (run / "report" / "index.html").read_text()
    never = _rows_with_class(html, "never")
    assert never == ["triggers.T2", "dual_read.runs"]  # zero counters flagged, others not
    chips = _chips(html)
    assert "never" not in chips["operator_failures"]["class"]  # zero failures is health, not a dead mechanism
    assert "never" not in chips["dual_read.identical_requests"]["class"]
    assert 'data-key="new_mechanism.x"' in html  # a key the report never heard of still shows


def test_census_of_runs_recorded_before_it_is_derived_from_trajectories(
    scripted_multirun: Path, tmp_path: Path
) -> None:
    from ledgermind.metrics.census import census, sum_census
    from ledgermind.trajectory import Trajectory

    run = tmp_path / "run"
    shutil.copytree(scripted_multirun / "0_full", run)
    recorded = json.loads((run / "metrics.json").read_text())
    assert "mechanisms" in recorded  # the current runner records it
    expected = sum_census(
        census(Trajectory.from_dict(json.loads(p.read_text()))) for p in (run / "trajectories").glob("*.json")
    )
    assert expected == recorded["mechanisms"]
    recorded.pop("mechanisms")
    (run / "metrics.json").write_text(json.dumps(recorded))
    for p in (run / "trajectories").glob("*.json"):
        t = json.loads(p.read_text())
        t.pop("mechanisms", None)
        p.write_text(json.dumps(t))
    build_report(run)
    html = (run / "report" / "index.html").read_text()
    assert "derived from 2 trajectories" in html
    shown = {k: v for k, v in _census_cells(html).items()}
    assert shown["triggers.T6"] == str(expected["triggers"]["T6"]) and shown["paths.FULLPIPE"] == "1"
    item = (run / "report" / "items" / f"{safe_filename('apollo')}.html").read_text()
    assert 'data-key="triggers.T6"' in item and "no mechanism census" not in item
    assert "never-flag" not in item and "counters at zero for this item" in item  # per item, zero is normal
    assert 'data-key="triggers.T2"' not in item  # zero counters are listed apart, not as counters


def _chips(html: str) -> dict[str, dict[str, str]]:
    """The census counters (chips) of a page: key -> class and value."""
    found: dict[str, dict[str, str]] = {}

    class P(HTMLParser):
        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "span" and "chip" in (a.get("class") or "").split():
                found[a["data-key"]] = {"class": a["class"], "value": a["data-value"]}

    P().feed(html)
    return found


def _census_cells(html: str) -> dict[str, str]:
    return {k: c["value"] for k, c in _chips(html).items()}


def _rows_with_class(html: str, cls: str) -> list[str]:
    return [k for k, c in _chips(html).items() if cls in c["class"].split()]


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_written_html_has_no_element_from_model_tool_or_dataset_text(scripted_multirun: Path) -> None:
    for page in (scripted_multirun / "report").rglob("*.html"):
        p = _Elements()
        p.feed(page.read_text())
        scripts = [a.get("src", "") for t, a in p.tags if t == "script"]
        assert all(s.endswith("assets/report.js") for s in scripts) and len(scripts) == 1, page
        assert not any("onerror" in a for _, a in p.tags), page
        assert not any(a.get("id") == "injected" for _, a in p.tags), page
        assert not any(t in ("img", "b", "i") and "src" in a and a["src"] == "x" for t, a in p.tags), page


def test_multirun_index_has_table3_or_says_why_not(scripted_multirun: Path, tmp_path: Path) -> None:
    html = (scripted_multirun / "report" / "index.html").read_text()
    assert "LedgerMind (full)" in html and "w/o ECC/NCC" in html
    multi = tmp_path / "multi"
    shutil.copytree(scripted_multirun / "0_full", multi / "a")
    shutil.copytree(scripted_multirun / "0_full", multi / "b")  # the same variant twice: not one table
    (multi / "c").mkdir()
    (multi / "c" / "results.jsonl").write_text("")  # a job that never finished an item
    build_report(multi)
    index = (multi / "report" / "index.html").read_text()
    assert "appears twice" in index
    assert (
        "Runs with no finished items (not shown): c" in index
        and not (multi / "report" / "runs" / "c").exists()
    )


def test_bad_inputs_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no runs under"):
        build_report(tmp_path)
    run = tmp_path / "r"
    run.mkdir()
    (run / "results.jsonl").write_text("")
    with pytest.raises(DataError, match="no finished items"):
        build_report(run)
    (run / "results.jsonl").write_text(json.dumps(_result().to_dict()) + "\n")
    (run / "report").mkdir()
    (run / "report" / "mine.txt").write_text("user data")
    with pytest.raises(UserError, match="refusing to overwrite"):
        build_report(run)
    assert (run / "report" / "mine.txt").exists()
    build_report(run, tmp_path / "out")
    build_report(run, tmp_path / "out")  # a report directory is replaced on rebuild
    assert (tmp_path / "out" / "items" / f"{safe_filename('q')}.html").exists()


def test_run_page_charts_count_what_the_trajectories_record(scripted_multirun: Path) -> None:
    run = scripted_multirun / "0_full"
    trajs = [json.loads(p.read_text()) for p in (run / "trajectories").glob("*.json")]
    bars: dict[str, dict[str, str]] = {}

    class P(HTMLParser):
        chart: str | None = None

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "figure" and a.get("id", "").startswith("chart-"):
                self.chart = a["id"]
                bars[self.chart] = {}
            elif tag == "rect" and self.chart and "data-label" in a:
                bars[self.chart].setdefault(a["data-label"], a["data-value"])

    P().feed((scripted_multirun / "report" / "runs" / safe_filename("0_full") / "index.html").read_text())
    assert list(bars["chart-triggers"]) == ["T1", "T2", "T3", "T4", "T5", "T6"]  # zeros drawn too
    for short in bars["chart-triggers"]:
        n = sum(1 for t in trajs if any(e["trigger"].startswith(short + "_") for e in t["events"]))
        assert float(bars["chart-triggers"][short]) == n
    assert float(bars["chart-operators"]["ACQUIRE"]) == sum(
        1 for t in trajs if any(e["operator"] == "ACQUIRE" for e in t["events"])
    )
    assert set(bars["chart-calls"]) == {t["path"] for t in trajs}


def test_item_page_shows_the_exact_prompt_and_reply_of_every_model_call(scripted_multirun: Path) -> None:
    """lmms-eval's --log_samples: each call's messages are in the trajectory and on the item page."""
    import html as html_lib

    t = json.loads(trajectory_path(scripted_multirun / "0_full", "apollo").read_text())
    calls = t["model_calls"]
    assert calls and all(c["messages"] for c in calls)
    page = html_lib.unescape(
        (
            scripted_multirun
            / "report"
            / "runs"
            / safe_filename("0_full")
            / "items"
            / f"{safe_filename('apollo')}.html"
        ).read_text()
    )
    assert page.count('<details class="call">') == len(calls)
    for c in calls:
        for m in c["messages"]:
            for p in m["content"]:
                if p["type"] == "text":
                    assert p["text"] in page  # verbatim, whole (the timeline cell only shortens the summary)
                else:
                    assert f"image sha256 <code>{p['sha256'][:12]}</code> {p['width']}×{p['height']}" in page
        assert c["reply"] in page
    images = [p for c in calls for m in c["messages"] for p in m["content"] if p["type"] == "image"]
    assert images and any(
        f'alt="image {p["sha256"][:12]}"' in page for p in images
    )  # the item's image, linked


def test_a_budget_exhausted_event_is_stamped_with_the_step_it_happened_at(monkeypatch) -> None:
    """Π logs a "budget exhausted" hit without a clock reading of its own; it was stored at step 0
    and sat at the top of the item page's timeline."""
    import asyncio

    from ledgermind.backends.scripted import ScriptedBackend
    from ledgermind.benchmarks.item import AnswerType, Item
    from ledgermind.dispatch import profile
    from ledgermind.grounding import GroundingCascade
    from ledgermind.pipeline.config import AblationFlags, PipelineConfig
    from ledgermind.pipeline.context import ItemContext
    from ledgermind.repair import TriggerHit
    from ledgermind.trajectory import PathKind, Trigger

    monkeypatch.setenv("LEDGERMIND_ALLOW_SCRIPTED", "1")
    cfg = PipelineConfig(per_trigger_budget=0)
    ctx = ItemContext(
        Item("q", "?", [], None, None, AnswerType.OPEN),
        profile("?"),
        PathKind.FULLPIPE,
        ScriptedBackend({"name": "scripted"}, [], default=""),
        {},
        GroundingCascade(cfg.grounding),
        cfg,
        AblationFlags(typed_repair=False),
    )
    ctx.ledger.advance(7)
    asyncio.run(ctx.executor.repair(TriggerHit(Trigger.T6, ("SC-1",))))
    assert [(e.note, e.step) for e in ctx.traj.events] == [("budget exhausted", 7)]
    rows = timeline(ctx.traj.to_dict())
    assert rows[-1].kind == "trigger" and rows[-1].step == 7


def test_a_benchmark_without_difficulty_gets_no_empty_difficulty_table_or_chart(tmp_path: Path) -> None:
    """gauges have no difficulty labels: the page showed an empty "accuracy by difficulty"."""
    from ledgermind.experiment.artefact_label import label_for
    from ledgermind.metrics.stats import wilson_interval
    from ledgermind.report.run_view import build_run_view
    from ledgermind.report.sources import RunData

    def views(results: list[ItemResult]) -> dict[str, ItemView]:
        return {r.id: build_item_view(r, None, None, ImageStore(tmp_path)) for r in results}

    results = [_result(id=f"g{i}", difficulty=None, score=float(i % 2), subject=None) for i in range(4)]
    run = RunData(tmp_path, results, {}, {"identity": {"backend": "SimulatedBackend"}}, {})
    v = build_run_view(run, views(results))
    assert [name for name, _ in v.splits] == ["path"]  # no subject, no difficulty, no question type recorded
    assert "chart-accuracy" not in [c.id for c in v.charts]
    assert (
        label_for(run.identity).kind == "SIMULATED"
        and "SIMULATED" in v.title
        and v.headline.n == 4
        and v.headline.accuracy == 0.5
    )
    assert (v.headline.low, v.headline.high) == wilson_interval(2, 4)
    low, high = wilson_interval(2, 4)
    assert low == pytest.approx(0.1500, abs=1e-4) and high == pytest.approx(
        0.8500, abs=1e-4
    )  # textbook Wilson 95%
    art = [_result(id="x", subject="Art")]
    with_diff_run = RunData(tmp_path, art, {}, {}, {})
    with_diff = build_run_view(with_diff_run, views(art))
    assert [name for name, _ in with_diff.splits][:2] == [
        "subject",
        "difficulty",
    ] and not label_for(with_diff_run.identity)


def test_an_image_path_that_is_no_file_is_named_for_what_it_is(tmp_path: Path) -> None:
    """A folder or a FIFO where an item's image should be is not 'not found': the page says what it is."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "folder.png").mkdir()
    os.mkfifo(data / "pipe.png")
    store = ImageStore(tmp_path / "report", [data])
    assert store.add(data / "folder.png") == f"image {data / 'folder.png'} is a directory, not a regular file"
    assert (
        store.add(data / "pipe.png")
        == f"image {data / 'pipe.png'} is a FIFO (named pipe), not a regular file"
    )
    assert store.add(data / "gone.png") == f"image not found: {data / 'gone.png'}"


def test_errored_items_are_left_out_of_the_path_split(tmp_path: Path) -> None:
    """An item that failed (a server, an image) after its path ran, or before any path, is an error
    counted apart: the path table's accuracy is over scored items, as metrics.json's by_path."""
    from ledgermind.report.run_view import build_run_view
    from ledgermind.report.sources import RunData
    from ledgermind.runs.summary import group_accuracy

    results = [
        _result(id="ok", path="FULLPIPE"),
        _result(id="late", path="FULLPIPE", score=0.0, error="model call failed (decide): server down"),
        _result(id="early", path=None, score=0.0, error="input: the question is empty"),
    ]
    views = {r.id: build_item_view(r, None, None, ImageStore(tmp_path)) for r in results}
    v = build_run_view(RunData(tmp_path, results, {}, {}, {}), views)
    paths = dict(v.splits)["path"]
    assert set(paths) == {"FULLPIPE"} and (paths["FULLPIPE"]["n"], paths["FULLPIPE"]["accuracy"]) == (1, 1.0)
    scored = [r for r in results if r.error is None]
    assert {g: s["n"] for g, s in paths.items()} == {
        g: s["n"] for g, s in group_accuracy(scored, lambda r: [r.path or "UNKNOWN"]).items()
    }


def test_multirun_runs_table_accuracy_leaves_errored_items_out(tmp_path: Path) -> None:
    """The multirun's Runs table gives each run's accuracy over its scored items, as the run's page
    and metrics.json do: an errored item is not a 0, and a run with no scored item has no accuracy."""
    multi = tmp_path / "multi"
    runs = {
        "a": [_result(id="x"), _result(id="y", score=0.0, error="model call failed: server down")],
        "b": [
            _result(id="x", score=0.0, error="server down"),
            _result(id="y", score=0.0, error="server down"),
        ],
    }
    for name, rows in runs.items():
        (multi / name).mkdir(parents=True)
        (multi / name / "results.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in rows))
    index = build_report(multi).read_text()
    cells = r'<td>{}</td><td class="num">2</td><td class="num">{}</td><td class="num">{}</td>'
    assert cells.format("a", "100.0%", 1) in index  # not 50.0%: y failed, it was not answered wrong
    assert cells.format("b", "–", 2) in index  # not 0.0%: nothing was scored
