"""Every artefact of a simulated (replayed, tiny-model) Table 3 says what answered, on its own: the first
line of table3.md / table3.csv / census.md, the .tex caption, the PNG's title and metadata, the W&B run's
tags and group. A real model's table carries no such line. And a sweep with no scored item is refused."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import Image

from ledgermind.experiment import table3, table3_protocol, table3_render
from ledgermind.experiment.artefact_label import combined, label_for
from ledgermind.experiment.runner import RunOptions, identity_for, run_items
from ledgermind.metrics.stats import BootstrapConfig
from ledgermind.runs.reader import find_runs
from tests.experiment.conftest import run_process, run_script
from tests.experiment.fakes import fake_items, fake_score
from tests.experiment.test_table3_seeds import ListAgent

BOOT = BootstrapConfig(resamples=200, seed=0)
SIMULATED = "SimulatedBackend"  # the class name a simulated run's identity records


def _sweep(root: Path, backend: str, model: str, fail: set[str] = frozenset()) -> Path:  # type: ignore[assignment]
    items = fake_items(4)
    for variant, wrong in (("full", set()), ("no_ecc", {"q1"})):
        ident = identity_for(items, model=model, backend=backend, benchmark="fake", variant=variant, seed=0)
        asyncio.run(
            run_items(
                items,
                ListAgent(wrong, set(fail)),
                identity=ident,
                options=RunOptions(root / variant, progress=False),
                scorer=fake_score,
                summarize=None,
            )
        )
    return root


def _outputs(root: Path) -> table3_render.Table3Outputs:
    runs = [table3.load_run(d) for d in find_runs([root])]
    rows = table3.build_rows(runs, bootstrap=BOOT)
    return table3_render.write_outputs(rows, runs, root, with_paper=False, bootstrap=BOOT)


def test_every_simulated_artefact_says_so_in_its_first_line(tmp_path: Path) -> None:
    outs = _outputs(_sweep(tmp_path / "sim", SIMULATED, "simulated-backbone"))
    assert outs.markdown.read_text().splitlines()[0].startswith("**SIMULATED BACKBONE — a test instrument")
    assert outs.csv.read_text().splitlines()[0].startswith("# SIMULATED BACKBONE — ")
    assert outs.census.read_text().splitlines()[0].startswith("**SIMULATED BACKBONE — ")
    tex = outs.latex.read_text()
    assert tex[tex.index(r"\caption{") :].startswith(r"\caption{SIMULATED BACKBONE")
    with Image.open(outs.chart) as im:
        assert im.text["Title"].startswith("SIMULATED BACKBONE") and "SIMULATED" in im.text["Description"]


def test_a_real_model_table_has_no_label_and_replay_and_tiny_say_what_they_are(tmp_path: Path) -> None:
    outs = _outputs(_sweep(tmp_path / "real", "VLLMServerBackend", "qwen2_5_vl_7b"))
    assert outs.markdown.read_text().startswith("| Variant |") and outs.csv.read_text().startswith("variant,")
    with Image.open(outs.chart) as im:
        assert im.text["Title"] == "Table 3 — fake (4 items), qwen2_5_vl_7b"
    assert label_for({"backend": "ReplayBackend", "model": "gpt-4o"}).line.startswith(
        "REPLAYED — recorded replies of gpt-4o"
    )
    assert label_for({"backend": "TransformersBackend", "model": "tiny_qwen2_vl"}).kind == "TINY MODEL"
    mixed = combined(
        [label_for({"backend": SIMULATED}), label_for({"backend": "ReplayBackend", "model": "m"})]
    )
    assert mixed.kind == "SIMULATED + REPLAYED" and mixed.tags == ("simulated", "replayed")


def test_table3_wandb_run_is_tagged_and_grouped_with_its_sweep(tmp_path: Path) -> None:
    pytest.importorskip("wandb")
    from tests.experiment.wandb_records import read_run

    sweep = _sweep(tmp_path / "sweep", SIMULATED, "simulated-backbone")
    proc = run_process("table3.py", str(sweep), "--logger", "offline", "--resamples", "200", timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("SIMULATED BACKBONE")
    (run_file,) = sweep.glob("wandb/offline-run-*/run-*.wandb")
    run = read_run(run_file)["run"]
    assert set(run["tags"]) == {"table3", "simulated", "model:simulated-backbone", "benchmark:fake"}
    assert run["group"] == str(sweep) and run["job_type"] == "table3"


def test_table3_refuses_a_sweep_whose_items_all_errored(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path / "dead", "VLLMServerBackend", "m", fail={"q0", "q1", "q2", "q3"})
    proc = run_script("table3.py", str(sweep), "--logger", "none")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: no item was scored in any of the 2 runs (8 errored results): nothing to tabulate; their errors are "
        "in each run's results.jsonl, and rerunning the same command retries them"
    ]
    assert not (sweep / "table3.md").exists()


def test_every_page_of_a_simulated_multirun_report_carries_the_banner(tmp_path: Path) -> None:
    from ledgermind.report import build_report

    sweep = _sweep(tmp_path / "sim", SIMULATED, "simulated-backbone")
    index = build_report(sweep)
    pages = sorted(index.parent.rglob("*.html"))
    assert len(pages) > 3  # index, two run pages, item and compare pages
    for page in pages:
        html = page.read_text()
        assert (
            '<div class="banner" id="test-instrument-banner" role="note"><strong>SIMULATED</strong>' in html
        ), page
        assert "<title>SIMULATED — " in html, page
    h1 = index.read_text().split("<h1>", 1)[1].split("</h1>", 1)[0]
    assert h1 == "Multirun: 2 runs — SIMULATED backbone (test instrument) on fake"
    real = build_report(_sweep(tmp_path / "real", "VLLMServerBackend", "qwen2_5_vl_7b")).read_text()
    assert "test-instrument-banner" not in real and "qwen2_5_vl_7b (VLLMServerBackend) on fake" in real


def test_holm_decides_the_verdict_and_simulated_intervals_are_named_simulation_error(tmp_path: Path) -> None:
    from ledgermind.metrics.stats import Estimate

    ci = Estimate(-10.0, -18.0, -2.0, 50, 50)  # the raw interval excludes 0
    raw = table3.Row("no_ecc", "w/o ECC/NCC", {}, -10.0, delta_ci=ci, p_value=0.02)
    rows = table3.with_holm(
        [
            raw,
            table3.replace(raw, variant="no_ledger", p_value=0.01),
            table3.replace(raw, variant="baseline", p_value=0.5),
        ]
    )
    assert [r.p_holm for r in rows] == pytest.approx(
        [0.04, 0.03, 0.5]
    )  # ranks: 3·0.01, max(0.03, 2·0.02), 0.5
    assert [r.verdict for r in rows] == [table3.BELOW_FULL, table3.BELOW_FULL, table3.NOT_DISTINGUISHABLE]
    alone = table3.with_holm([table3.replace(raw, p_value=0.02)] * 6)  # six at 0.02: 6·0.02 = 0.12 ≥ 0.05
    assert {r.verdict for r in alone} == {
        table3.NOT_DISTINGUISHABLE
    } and raw.verdict is None  # not adjusted yet
    sim = _sweep(tmp_path / "sim", SIMULATED, "simulated-backbone")
    md = _outputs(sim).markdown.read_text()
    assert "| 95% sim. error | Δ vs full | Δ 95% sim. error (paired) | p | p Holm |" in md
    assert "every interval is simulation error" in md


def test_protocol_note_has_the_dual_read_escalate_row_from_the_recorded_config(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path / "sim", SIMULATED, "simulated-backbone")
    for variant, on in (("full", "true"), ("no_ecc", "true")):
        (sweep / variant / ".hydra").mkdir()
        (sweep / variant / ".hydra" / "config.yaml").write_text(
            f"pipeline:\n  dual_read_escalate: {on}\n  x: ${{oc.env:NOPE}}\n"
        )
    runs = [table3.load_run(d) for d in find_runs([sweep])]
    line = table3_protocol.protocol_footer(runs).strip().splitlines()[-1]
    assert (
        line.startswith("dual_read_escalate: on — DEVIATION from App. D.5")
        and "dual_read_escalate=false" in line
    )
    (sweep / "no_ecc" / ".hydra" / "config.yaml").write_text("pipeline:\n  dual_read_escalate: false\n")
    assert "MIXED across runs" in table3_protocol.escalation_line(runs)
    (sweep / "full" / ".hydra" / "config.yaml").write_text("pipeline:\n  dual_read_escalate: false\n")
    assert table3_protocol.escalation_line(runs).startswith(
        "dual_read_escalate: off (App. D.5 / Alg. 1 as written"
    )


def test_the_chart_names_its_benchmark_shows_only_splits_with_items_and_marks_each_verdict(
    tmp_path: Path,
) -> None:
    from matplotlib.backend_bases import RendererBase

    root = _sweep(tmp_path / "real", "VLLMServerBackend", "qwen2_5_vl_7b")
    runs = [table3.load_run(d) for d in find_runs([root])]
    rows = table3.build_rows(runs, bootstrap=BOOT)
    ctx = table3.context_of(runs)
    assert ctx.n == {"Easy": 2, "Medium": 1, "Hard": 1, "Overall": 4}
    ctx = replace(ctx, n={**ctx.n, "Medium": 0, "Hard": 0})  # as on gauges: splits without items
    fig = table3_render.figure(rows, table3.heading_for(runs), "", ctx)
    bars, forest = fig.axes
    assert [t.get_text() for t in bars.get_legend().get_texts()] == ["Easy (n=2)", "Overall (n=4), 95% CI"]
    assert [t.get_text() for t in forest.get_legend().get_texts()] == ["not distinguishable (p Holm ≥ 0.05)"]
    assert fig._suptitle.get_text() == "Table 3 — fake (4 items), qwen2_5_vl_7b"
    fig.canvas.draw()
    renderer: RendererBase = fig.canvas.get_renderer()
    box = fig.bbox
    for text in [bars.yaxis.label, forest.xaxis.label, fig._suptitle, *bars.get_xticklabels()]:
        ext = text.get_window_extent(renderer)
        assert box.x0 <= ext.x0 and ext.x1 <= box.x1 and box.y0 <= ext.y0 and ext.y1 <= box.y1, text
