"""``ledgermind ls``: the runs, newest first, read as data; ``ledgermind ls components KIND``: every name
a run can use, read from ``conf/`` and the registries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ledgermind.cli import ls
from ledgermind.cli.commands import main as ledgermind
from ledgermind.confutil import CONF_DIR
from ledgermind.repair.policy import OPERATORS
from ledgermind.runs.results import ItemResult

GROUP_OF = {"benchmarks": "benchmark", "ablations": "ablation", "backends": "backend", "models": "model"}


def _listed(out: str) -> list[str]:
    return [line.split()[0] for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("kind", sorted(GROUP_OF))
def test_a_conf_group_lists_every_option_once_with_its_comment(kind: str, capsys) -> None:
    assert ledgermind(["ls", "components", kind]) == 0
    out = capsys.readouterr().out
    files = sorted((CONF_DIR / GROUP_OF[kind]).glob("*.yaml"))
    expected = [
        p.stem for p in files if not p.stem.startswith("_")
    ]  # a file starting with _ is a shared base
    assert _listed(out)[: len(expected)] == expected and expected
    first = files[-1].read_text(encoding="utf-8").splitlines()[0].lstrip("# ")
    assert first[:40] in out  # the option's own first comment says what it is


def test_benchmarks_name_their_loader_and_backends_their_class(capsys) -> None:
    assert ledgermind(["ls", "components", "benchmarks"]) == 0
    assert "mmmu_pro_standard10  [loader mmmu_pro]" in capsys.readouterr().out
    assert ledgermind(["ls", "components", "backends"]) == 0
    assert "[ledgermind.backends.vllm_server.VLLMServerBackend]" in capsys.readouterr().out


def test_operators_come_from_the_operator_table(capsys) -> None:
    assert ledgermind(["ls", "components", "operators"]) == 0
    out = capsys.readouterr().out
    typed = [name.value for name, op in OPERATORS.items() if op.layer is not None]
    assert _listed(out) == typed and "[EVIDENCE] DROP(e)" in out and "FREEFORM" not in out


def test_a_new_option_shows_up_without_an_edit(tmp_path: Path) -> None:
    (tmp_path / "ablation").mkdir()
    (tmp_path / "ablation" / "_flags.yaml").write_text("# shared base\n")
    (tmp_path / "ablation" / "no_verify.yaml").write_text(
        "# w/o verification: a new flag\ndefaults:\n  - _flags\n"
    )
    assert ls.render(ls.ablations(tmp_path)) == "no_verify  w/o verification: a new flag"


@pytest.mark.parametrize(
    ("kind", "hint"),
    [
        ("benchmark", "did you mean benchmarks? "),
        ("operatrs", "did you mean operators? "),
        ("xyzzy", ""),
    ],
)
def test_an_unknown_kind_is_one_line_and_exit_2(kind: str, hint: str, capsys) -> None:
    assert ledgermind(["ls", "components", kind]) == 2
    err = capsys.readouterr().err
    kinds = "benchmarks | ablations | backends | models | operators"
    assert err.strip().splitlines() == [
        f"ledgermind ls components: error: unknown kind {kind!r}: {hint}(kinds: {kinds})"
    ]


def test_python_dash_m_ledgermind_lists() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ledgermind", "ls", "components", "models"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert proc.returncode == 0 and "qwen2_5_vl_7b" in proc.stdout and proc.stderr == ""


def test_a_description_that_wraps_is_listed_whole(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "big.yaml").write_text(
        "# Big-VL (needs vLLM >= 0.11). A reasoning model: it thinks before\n# answering. More detail here.\nname: big\n"
    )
    assert ls.render(ls.models(tmp_path)) == (
        "big  [None] Big-VL (needs vLLM >= 0.11). A reasoning model: it thinks before answering."
    )


def _run(root: Path, name: str, *, variant: str, finished: bool, errors: int = 0, when: float) -> Path:
    """A run folder as the runner leaves it: results (and, once finished, metrics)."""
    run = root / name
    run.mkdir(parents=True)
    ident = {"model": "qwen2_5_vl_7b", "benchmark": "gauges", "variant": variant, "seed": 0}
    rows = [ItemResult(f"q{i}", "A", "A", 1.0, True, "DIRECT", None) for i in range(4 - errors)]
    rows += [
        ItemResult(f"e{i}", None, "A", 0.0, False, None, None, error="server: connection refused")
        for i in range(errors)
    ]
    (run / "results.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in rows))
    (run / "run_identity.json").write_text(json.dumps({"identity": ident}))
    if finished:
        metrics = {"identity": ident, "accuracy": 1.0, "n_items": 4, "n_scored": 4 - errors, "errors": errors}
        (run / "metrics.json").write_text(json.dumps(metrics))
    for f in run.iterdir():
        os.utime(f, (when, when))
    return run


def test_ls_lists_runs_newest_first_with_accuracy_interval_errors_and_status(tmp_path: Path, capsys) -> None:
    _run(tmp_path, "old", variant="full", finished=True, when=1_700_000_000)
    _run(tmp_path, "sweep/no_ecc", variant="no_ecc", finished=True, errors=1, when=1_700_000_600)
    _run(tmp_path, "new", variant="no_dual_read", finished=False, when=1_700_001_200)
    assert ledgermind(["ls", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:4] == ["date", "model", "benchmark", "variant"]
    assert [ln.split()[4] for ln in lines[1:]] == ["no_dual_read", "no_ecc", "full"]  # newest first
    unfinished, with_errors, done = lines[1:]
    assert "unfinished, 4 items done" in unfinished
    assert "75.0 [" not in with_errors and "100.0 [" in with_errors  # accuracy over the 3 scored items
    assert "  1  " in with_errors and "finished with errors (rerun retries them)" in with_errors
    assert "100.0 [51.0, 100.0]" in done and done.rstrip().endswith(str(tmp_path / "old"))


def test_ls_reads_a_run_folder_without_writing_to_it(tmp_path: Path, capsys) -> None:
    run = _run(tmp_path, "r", variant="full", finished=True, when=1_700_000_000)
    before = {p: (p.stat().st_mtime, p.read_bytes()) for p in run.rglob("*") if p.is_file()}
    assert ledgermind(["ls", str(run)]) == 0
    assert {p: (p.stat().st_mtime, p.read_bytes()) for p in run.rglob("*") if p.is_file()} == before
    assert not (run / ".lock").exists()


def test_a_kind_given_as_a_folder_names_the_component_listing(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert ledgermind(["ls", "models"]) == 2
    assert capsys.readouterr().err.strip() == (
        "ledgermind ls: error: not a directory: models (the models a run can name: ledgermind ls components models)"
    )


@pytest.mark.parametrize("name", ["metrics.json", "run_identity.json", "results.jsonl"])
def test_a_fifo_in_a_run_folder_is_an_unreadable_row_not_a_hang(tmp_path: Path, name: str) -> None:
    """A named pipe where a run file should be: opening it to read waits for a writer that never
    comes; the row says the file is not a regular file and the other runs are still listed."""
    _run(tmp_path, "good", variant="full", finished=True, when=1_700_000_000)
    bad = _run(tmp_path, "bad", variant="no_ecc", finished=True, when=1_700_000_600)
    (bad / name).unlink()
    os.mkfifo(bad / name)
    proc = subprocess.run(
        [sys.executable, "-m", "ledgermind", "ls", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert proc.returncode == 0, proc.stderr
    rows = {ln.rsplit(maxsplit=1)[-1]: ln for ln in proc.stdout.splitlines()[1:]}
    assert f"unreadable: {bad / name}: is a FIFO (named pipe), not a regular file; not read" in rows[str(bad)]
    assert "finished" in rows[str(tmp_path / "good")]
