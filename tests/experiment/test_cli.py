"""scripts/run.py and scripts/table3.py as a user runs them (subprocesses, fakes for the model)."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ledgermind.confutil import option_node
from ledgermind.experiment.runner import RunOptions, identity_for, run_items
from tests.experiment.conftest import FAKE_OVERRIDES, REPO, run_module, run_script, subprocess_env
from tests.experiment.fakes import FakeAgent, fake_items, fake_score


def _stderr_lines(proc) -> list[str]:
    return [ln for ln in proc.stderr.splitlines() if ln.strip()]


def test_single_run_writes_outputs_and_banner(run_py, tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = run_py(*FAKE_OVERRIDES, "logger=none", f"hydra.run.dir={out}", "+ablation=no_ecc")
    assert proc.returncode == 0, proc.stderr
    assert (
        "tiny RANDOM-weight model" in proc.stderr and "model=qwen2_5_vl_7b backend=vllm_server" in proc.stderr
    )
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["identity"]["variant"] == "no_ecc"
    assert metrics["identity"]["backend"] == "ScriptedBackend"
    assert metrics["by_difficulty"]["Hard"]["accuracy"] == 0.0  # the fake no_ecc agent fails Hard
    assert len((out / "results.jsonl").read_text().splitlines()) == 6
    assert yaml.safe_load((out / ".hydra" / "config.yaml").read_text())["ablation"]["ecc_ncc"] is False


def test_limit_selects_first_items(finished_run, tmp_path: Path) -> None:
    out = finished_run(tmp_path / "run", "limit=2")  # run.py with the fakes and limit=2: exit 0
    ids = [json.loads(x)["id"] for x in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(ids) == ["q0", "q1"]


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("model=no_such_model", "error: unknown model option 'no_such_model': (options: "),
        ("+ablation=no_such_variant", "error: unknown ablation option 'no_such_variant': (options: "),
        ("concurrency=abc", "error: concurrency must be an integer >= 1, got 'abc'"),
        ("limit=-3", "error: limit must be an integer >= 0, got -3"),
        ("agent_factory=no.such.factory", "error: agent_factory 'no.such.factory' cannot be imported"),
        ("logger._target_=nope.Logger", "error: logger._target_: cannot import 'nope.Logger' ("),
        ("backend._target_=nope.Backend", "error: backend._target_: cannot import 'nope.Backend' ("),
        # the class's own refusal, raised after the run claimed its folder: the claim is taken back
        ("backend.allow_scripted=false", "error: the scripted backend answers from fixed rules"),
        ("model=hf", "error: model.hub_id is required: add model.hub_id=... to the command line"),
    ],
)
def test_config_errors_exit_2_without_traceback(run_py, tmp_path: Path, override: str, expected: str) -> None:
    proc = run_py(*FAKE_OVERRIDES, "logger=none", f"hydra.run.dir={tmp_path / 'run'}", override)
    assert proc.returncode == 2, proc.stderr
    assert expected in proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []  # a refused run leaves no folder, not even Hydra's empty one


def test_a_refused_run_in_the_default_folder_leaves_no_date_folder(tmp_path: Path) -> None:
    # started where the user stands, without hydra.run.dir: Hydra made outputs/<date>/<time>
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "run.py"), *FAKE_OVERRIDES, "logger=none", "limit=-3"],
        cwd=tmp_path,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "error: limit must be" in proc.stderr, proc.stderr
    assert [p.name for p in (tmp_path / "outputs").iterdir()] == []  # neither <time> nor <date>
    # a folder the user named stays, empty or not; only folders named by the start time go
    (tmp_path / "mine").mkdir()
    again = [*proc.args, "hydra.run.dir=mine/${now:%Y-%m-%d}/${now:%H-%M-%S}"]
    assert subprocess.run(again, cwd=tmp_path, env=subprocess_env(), timeout=120).returncode == 2
    assert [p.name for p in (tmp_path / "mine").iterdir()] == []


def test_a_bad_benchmark_limit_beside_the_run_limit_is_one_line_exit_2(run_py, tmp_path: Path) -> None:
    overrides = [o for o in FAKE_OVERRIDES if not o.startswith("benchmark=")]
    run = [f"hydra.run.dir={tmp_path / 'run'}", "benchmark=sample", "benchmark.limit=abc", "limit=1"]
    proc = run_py(*overrides, "logger=none", *run)
    assert proc.returncode == 2, proc.stderr
    assert _stderr_lines(proc) == ["error: benchmark.limit must be a non-negative integer or null, got 'abc'"]


def test_a_benchmark_that_gives_no_items_is_one_line_exit_2(run_py, tmp_path: Path) -> None:
    (tmp_path / "items.jsonl").write_text("")
    overrides = [o for o in FAKE_OVERRIDES if not o.startswith("benchmark=")]
    run = [f"hydra.run.dir={tmp_path / 'run'}", "benchmark=jsonl", f"benchmark.path={tmp_path}"]
    proc = run_py(*overrides, "logger=none", *run)
    assert proc.returncode == 2, proc.stderr
    assert _stderr_lines(proc) == [
        f"error: benchmark 'jsonl' gave no items from {tmp_path}: check the file and item_ids"
    ]
    assert not (tmp_path / "run").exists()


def _benchmarks_with_path() -> list[str]:
    """Every shipped benchmark option that reads files, plus the generic JSONL loader from the test conf."""
    names = ["jsonl_file"]
    for f in sorted((REPO / "conf" / "benchmark").glob("*.yaml")):
        if not f.stem.startswith("_") and "path" in option_node(
            "benchmark", f.stem, REPO / "conf"
        ):  # _loader: a base
            names.append(f.stem)
    return names


@pytest.mark.parametrize("benchmark", _benchmarks_with_path())
def test_bad_data_path_is_one_line_exit_2(run_py, tmp_path: Path, benchmark: str) -> None:
    missing = tmp_path / "does-not-exist"
    overrides = [o for o in FAKE_OVERRIDES if not o.startswith("benchmark=")]
    proc = run_py(
        *overrides,
        f"benchmark={benchmark}",
        f"benchmark.path={missing}",
        "logger=none",
        f"hydra.run.dir={tmp_path / 'run'}",
    )
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in _stderr_lines(proc) if not ln.startswith("NOTE:")]
    assert len(lines) == 1 and lines[0].startswith("error: ") and str(missing) in lines[0], proc.stderr
    assert not (tmp_path / "run").exists()


def test_missing_required_path_is_one_line_exit_2(run_py, tmp_path: Path) -> None:
    overrides = [o for o in FAKE_OVERRIDES if not o.startswith("benchmark=")]
    proc = run_py(*overrides, "benchmark=jsonl_file", "logger=none", f"hydra.run.dir={tmp_path}")
    assert proc.returncode == 2
    assert _stderr_lines(proc) == [
        "error: benchmark.path is required: add benchmark.path=... to the command line"
    ]


def test_item_that_raises_is_an_error_exit_3_and_rerun_retries_it(run_py, tmp_path: Path) -> None:
    counter = tmp_path / "calls.txt"
    proc = run_py(
        *FAKE_OVERRIDES,
        "logger=none",
        f"hydra.run.dir={tmp_path}",
        FAKE_AGENT_FAIL="q2",
        FAKE_AGENT_COUNTER=str(counter),
    )
    assert proc.returncode == 3, proc.stderr
    assert "on 5 scored of 6 items (0 unparsed, 1 errors)" in proc.stdout
    head, _, command = _stderr_lines(proc)[-1].partition("; retry them with: ")
    assert head == "error: 1 of 6 items failed (RuntimeError: corrupt image in q2)"
    assert command.startswith("python scripts/run.py ") and command.endswith(f"hydra.run.dir={tmp_path}")
    rows = {d["id"]: d for d in map(json.loads, (tmp_path / "results.jsonl").read_text().splitlines())}
    assert rows["q2"]["error"] == "RuntimeError: corrupt image in q2" and len(rows) == 6
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert (metrics["n_items"], metrics["n_scored"], metrics["errors"], metrics["accuracy"]) == (6, 5, 1, 1.0)

    again = run_py(
        *shlex.split(command)[2:], FAKE_AGENT_COUNTER=str(counter)
    )  # the printed command, as a user pastes it
    assert again.returncode == 0, again.stderr
    assert (
        counter.read_text().split().count("q2") == 2 and len(counter.read_text().split()) == 7
    )  # only q2 redone
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert (metrics["n_items"], metrics["n_scored"], metrics["errors"]) == (6, 6, 0)
    assert metrics["wall_time_total_s"] > metrics["wall_time_s"] > 0


# ------------------------------------------------------------------------------------- Table 3
def test_multirun_two_variants_then_table3(run_py, tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    proc = run_py(
        "-m", *FAKE_OVERRIDES, "logger=none", f"hydra.sweep.dir={sweep}", "+ablation=full,no_ledger"
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in sweep.iterdir() if p.is_dir()) == [
        "ablation=full",
        "ablation=no_ledger",
    ]  # named from the swept value

    t3 = run_script("table3.py", str(sweep), "--paper", "--census")
    assert t3.returncode == 0, t3.stderr
    md = (sweep / "table3.md").read_text()
    assert md.splitlines()[0].startswith(
        "**TINY MODEL — tiny_qwen2_vl is a tiny random-weight model"
    )  # what answered
    assert md.splitlines()[2].startswith(
        "| Variant | Easy (n=2) | Medium (n=2) | Hard (n=2) | Overall (n=6) | 95% CI | Δ vs full | Δ 95% CI (paired) | p "
        "| p Holm | McNemar p | Δ vs 0 (Holm) |"
    )
    # fake no_ledger fails Medium and Hard: Easy 100, Medium 0, Hard 0, Overall 2/6. Paired Δ per item: four −1,
    # two 0. Resampling 6 items, k zeros ~ Bin(6, 1/3): P(k = 0) = 8.8 % and P(k ≥ 5) = 1.8 %, P(k ≥ 4) = 10 %,
    # so the 95 % interval is [−100, −33.33]. McNemar: 4 discordant pairs, all one way: p = 2 / 2^4 = 0.125.
    # Bootstrap p: P*(Δ ≥ 0) = P(six draws all from the two zeros) = (1/3)^6 = 0.14 %, so p = 0.0027 (one comparison:
    # Holm changes nothing), below 0.05: "below full".
    assert (
        "| w/o Ledger | 100.0 | 0.0 | 0.0 | 33.33 | [0.00, 66.67] | −66.67 | [−100.00, −33.33] | 0.0026 | 0.0026 "
        "| 0.125 | below full "
        "| 75.7 | 50.3 | 30.7 | 53.50 | −15.39 |"
    ) in md
    assert (
        "| LedgerMind (full) | 100.0 | 100.0 | 100.0 | 100.00 | [100.00, 100.00] | – | – | – | – | – | – "
        "| 77.5 | 69.0 | 56.9 | 68.89 | – |"
    ) in md
    assert md.split("\n\n")[1] in t3.stdout and "percentile bootstrap over items" in md
    csv_text = (sweep / "table3.csv").read_text()
    assert csv_text.startswith("# TINY MODEL — ")
    rows = list(csv.DictReader(io.StringIO(csv_text.split("\n", 1)[1])))
    assert [r["variant"] for r in rows] == ["full", "no_ledger"]
    assert float(rows[1]["delta_vs_full"]) == pytest.approx(-200 / 3)
    tex = (sweep / "table3.tex").read_text()
    assert (
        r"w/o Ledger & 100.0 & 0.0 & 0.0 & 33.33 & [0.00, 66.67] & $-$66.67 & [$-$100.00, $-$33.33] & 0.0026 & 0.0026 & 0.125"
        in tex
    )
    assert "tiny\\_qwen2\\_vl" in tex
    assert (sweep / "table3.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    census = (sweep / "census.md").read_text().splitlines()[2:]
    assert (
        census[0].startswith("| variant | items | DIRECT/FULL/NL/BASE | T1..T6 |") and census[0] in t3.stdout
    )
    cells = {ln.split("|")[1].strip(): [c.strip() for c in ln.split("|")[2:-1]] for ln in census[2:]}
    assert list(cells) == ["full", "no_ledger"]
    for variant, sub in (
        ("full", "ablation=full"),
        ("no_ledger", "ablation=no_ledger"),
    ):  # each row is that run's census
        mech = json.loads((sweep / sub / "metrics.json").read_text())["mechanisms"]
        paths = "/".join(str(mech["paths"][k]) for k in ("DIRECT", "FULLPIPE", "NO_LEDGER", "BASELINE"))
        assert cells[variant][1] == paths and cells[variant][-1] == f"{mech['model_calls'] / 6:.2f}"
    assert cells["full"][0] == cells["no_ledger"][0] == "6"


def _fake_run(out: Path, *, model: str, n: int = 4, variant: str = "full") -> Path:
    items = fake_items(n)
    ident = identity_for(items, model=model, backend="b", benchmark="fake", variant=variant, seed=0)
    asyncio.run(
        run_items(
            items,
            FakeAgent(),
            identity=ident,
            options=RunOptions(out, progress=False),
            scorer=fake_score,
            summarize=None,
        )
    )
    return out


def test_table3_refuses_mixed_models(tmp_path: Path) -> None:
    a = _fake_run(tmp_path / "a", model="qwen2_5_vl_7b")
    b = _fake_run(tmp_path / "b", model="internvl3_8b", variant="no_ecc")
    proc = run_script("table3.py", str(a), str(b), "--logger", "none")
    assert proc.returncode == 2
    assert _stderr_lines(proc) == [
        f"error: refusing to mix runs with different models: {a}: qwen2_5_vl_7b; {b}: internvl3_8b"
    ]
    assert not (a / "table3.md").exists()


def test_table3_refuses_mixed_item_sets(tmp_path: Path) -> None:
    a = _fake_run(tmp_path / "a", model="m", n=4)
    b = _fake_run(tmp_path / "b", model="m", n=5, variant="no_ecc")
    proc = run_script("table3.py", str(a), str(b), "--logger", "none")
    assert proc.returncode == 2 and "different item sets" in proc.stderr


def test_table3_refuses_unfinished_run(tmp_path: Path) -> None:
    a = _fake_run(tmp_path / "a", model="m")
    (a / "metrics.json").unlink()
    proc = run_script("table3.py", str(a), "--logger", "none")
    assert proc.returncode == 2 and "did not finish" in proc.stderr


@pytest.mark.slow
def test_bench_runner_reports_speedup_from_concurrency(tmp_path: Path) -> None:
    """8 items that each wait 0.15 s (like a server call): concurrency 8 must be several times faster
    (about 7x here; the run's own work is a few ms per item, so even ten times that keeps it above 2x)."""
    extra = [o for o in FAKE_OVERRIDES if o != "progress=false"]
    proc = run_module(
        "scripts.bench_runner",
        "--items",
        "8",
        "--concurrency",
        "1",
        "8",
        "--sweep",
        "--",
        *extra,
        "benchmark.n=8",
        FAKE_AGENT_DELAY="0.15",
    )
    assert proc.returncode == 0, proc.stderr
    rows = [
        [c.strip() for c in ln.strip("|").split("|")]
        for ln in proc.stdout.splitlines()
        if ln[:3] in ("| 1", "| 8")
    ]
    assert [int(r[0]) for r in rows] == [1, 8] and [int(r[1]) for r in rows] == [8, 8]
    # the bench is where speed targets live; here only that concurrency is really used (8 items
    # waiting 0.15 s each cannot take as long at concurrency 8 as one at a time)
    assert float(rows[1][4]) > 1.5  # "× c=first" column


def test_help_lists_the_main_keys_with_examples(run_py_help) -> None:
    proc = run_py_help
    assert proc.returncode == 0, proc.stderr
    groups = {ln.split(":")[0] for ln in proc.stdout.splitlines() if ": " in ln and not ln.startswith(" ")}
    assert {"model", "backend", "benchmark", "pipeline", "ablation", "logger"} <= groups
    for key in ("cache:", "scoring:", "random_fallback_seed:", "model=hf model.hub_id="):
        assert key in proc.stdout, key
    assert "pipeline=official pipeline.prompt=cot" in proc.stdout and "Exit codes:" in proc.stdout
