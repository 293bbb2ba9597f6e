"""S-RFA's names before issue 36, when it was called "audit": still read or run for one release.

Writers use the new names (``srfa.jsonl``, ``srfa_metrics.json``, ``srfa_responses.sqlite``,
``scripts/srfa.py``, the ``srfa:`` config node); a run folder written with the old file names is
still read, and ``scripts/audit.py``, ``scripts/audit_check.py`` and ``audit.KEY=V`` overrides
still work, each with a one-line note on stderr.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from PIL import Image

from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.cli.srfa import compose_srfa_config, renamed_overrides
from ledgermind.cli.srfa_check import main as srfa_check_main
from ledgermind.grounding.cascade import GroundingCascade, GroundingConfig
from ledgermind.srfa.compare import compare
from ledgermind.srfa.protocol import SrfaMode
from ledgermind.srfa.run import (
    OLD_NAMES,
    SRFA_FILE,
    SRFA_METRICS_FILE,
    SrfaSettings,
    judge_cache_file,
    load_run,
    read_run_records,
    srfa_run,
)
from ledgermind.trajectory import PathKind, Trajectory
from perception.aliases import AliasTable
from perception.ner import SpacyNER
from tests.experiment.conftest import FAKE_OVERRIDES, run_script
from tests.helpers import EchoOCR, TextImage

OLD_FILE, OLD_METRICS = OLD_NAMES[SRFA_FILE], OLD_NAMES[SRFA_METRICS_FILE]
QUESTION = "Which mission is commemorated by the plaque in <image 1>?"


def test_the_old_and_new_names() -> None:
    assert (SRFA_FILE, SRFA_METRICS_FILE) == ("srfa.jsonl", "srfa_metrics.json")
    assert (OLD_FILE, OLD_METRICS) == ("audit.jsonl", "audit_metrics.json")


@pytest.fixture(scope="module")
def cascade() -> GroundingCascade:
    return GroundingCascade(GroundingConfig(), SpacyNER(), AliasTable.default())


def _old_run(tmp_path: Path) -> tuple[Path, dict[str, Item]]:
    """A run folder of two items (q1 right, q2 wrong) and its items."""
    image = tmp_path / "plaque.png"
    Image.new("RGB", (64, 48), "white").save(image)
    run = tmp_path / "run"
    (run / "trajectories").mkdir(parents=True)
    rows, items = [], {}
    for item_id, answer, trace in (
        ("q1", "A", "The plaque reads Apollo 11.\nAnswer: A"),
        ("q2", "B", "The plaque names Apollo 13.\nAnswer: B"),
    ):
        t = Trajectory(item_id, QUESTION, PathKind.BASELINE)
        t.ledger.record(EchoOCR().invoke(image=TextImage(["Apollo 11 plaque", "July 1969"])))
        t.transcript = [{"role": "model", "text": trace}]
        (run / "trajectories" / f"{item_id}.json").write_text(json.dumps(t.to_dict()))
        rows.append(
            {
                "id": item_id,
                "prediction": answer,
                "gold": "A",
                "score": float(answer == "A"),
                "difficulty": "Easy",
                "path": "BASELINE",
                "error": None,
            }
        )
        items[item_id] = Item(
            item_id, QUESTION, [image], ["Apollo 11", "Apollo 13"], "A", AnswerType.MCQ, difficulty="Easy"
        )
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return run, items


def _srfa(run: Path, items: dict[str, Item], cascade: GroundingCascade) -> dict:
    return asyncio.run(
        srfa_run(
            load_run(run), SrfaSettings(SrfaMode.LEDGER, 0.5, progress=False), cascade=cascade, items=items
        )
    )


def test_a_run_folder_with_the_old_file_names_is_read(tmp_path: Path, cascade, capsys) -> None:
    run, items = _old_run(tmp_path)
    metrics = _srfa(run, items, cascade)
    assert (run / SRFA_FILE).is_file() and (run / SRFA_METRICS_FILE).is_file()  # the writer's names
    assert not (run / OLD_FILE).exists() and not (run / OLD_METRICS).exists()
    (run / SRFA_FILE).rename(run / OLD_FILE)  # what a run folder audited before issue 36 holds
    (run / SRFA_METRICS_FILE).rename(run / OLD_METRICS)
    capsys.readouterr()

    assert srfa_check_main([str(run)]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["correctness"]["n"] == 2
    assert f"note: reading {run / OLD_FILE}" in err and "now srfa.jsonl" in err
    [row] = compare([run])  # no metrics.json here: the row can only come from audit_metrics.json
    assert row.source == "srfa:ledger" and row.values["Acc"] == metrics["ledger"]["Acc"]

    again = _srfa(run, items, cascade)  # a rerun keeps the old file's finished items, labels nothing again
    assert again["ledger"] == metrics["ledger"]
    assert (run / SRFA_FILE).read_text() == "" and json.loads((run / SRFA_METRICS_FILE).read_text()) == again
    assert (run / OLD_FILE).is_file()  # the old file is data: read, never rewritten or removed
    (run / SRFA_METRICS_FILE).write_text("{torn")  # a damaged metrics file is one line, exit 2
    capsys.readouterr()
    assert srfa_check_main([str(run)]) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith(f"{SRFA_METRICS_FILE}: not valid JSON (Expecting property name enclosed in double quotes)")
    )


def test_a_rerun_over_a_partial_old_file_audits_only_the_rest_under_the_new_name(
    tmp_path: Path, cascade
) -> None:
    run, items = _old_run(tmp_path)
    full = _srfa(run, items, cascade)
    lines = (run / SRFA_FILE).read_text().splitlines()
    (run / SRFA_FILE).unlink()
    (run / SRFA_METRICS_FILE).unlink()
    (run / OLD_FILE).write_text(next(x for x in lines if '"q1"' in x) + "\n")  # q1 finished before issue 36
    again = _srfa(run, items, cascade)
    assert [json.loads(x)["id"] for x in (run / SRFA_FILE).read_text().splitlines()] == ["q2"]
    assert again["ledger"] == full["ledger"]
    assert sorted(a.item_id for a in read_run_records(run)) == ["q1", "q2"]


def test_the_judge_cache_keeps_its_old_name_in_an_old_folder(tmp_path: Path) -> None:
    assert judge_cache_file(tmp_path) == tmp_path / "srfa_responses.sqlite"
    (tmp_path / "audit_responses.sqlite").write_bytes(b"")
    assert (
        judge_cache_file(tmp_path) == tmp_path / "audit_responses.sqlite"
    )  # its replies are not asked again


def test_old_config_overrides_are_read_under_the_new_node(capsys) -> None:
    assert renamed_overrides(["srfa.mode=judge", "model=x"]) == ["srfa.mode=judge", "model=x"]
    assert capsys.readouterr().err == ""
    new = renamed_overrides(["audit.mode=both", "+audit.grounding.beta=0.2", "audit.gamma=0.3", "model=x"])
    assert new == ["srfa.mode=both", "+srfa.grounding.beta=0.2", "srfa.gamma=0.3", "model=x"]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'srfa'" in err  # one note, however many overrides
    cfg = compose_srfa_config(new[:3])
    assert (cfg.srfa.mode, cfg.srfa.gamma, cfg.srfa.grounding.beta) == ("both", 0.3, 0.2)
    assert "audit" not in cfg


def test_the_old_scripts_still_run_and_say_their_new_names(tmp_path: Path) -> None:
    out = tmp_path / "run"
    made = run_script("run.py", *FAKE_OVERRIDES, "limit=2", "logger=none", f"hydra.run.dir={out}")
    assert made.returncode == 0, made.stderr
    old = run_script("audit.py", str(out), "--trust-config", "logger=none", "audit.mode=ledger")
    assert old.returncode == 0, old.stderr
    notes = [ln for ln in old.stderr.splitlines() if ln.startswith("note:")]
    assert (
        notes[0].startswith("note: scripts/audit.py is now scripts/srfa.py") and len(notes) == 2
    )  # + the node
    assert old.stdout.rstrip().endswith(f"-> {out / SRFA_FILE}, {out / SRFA_METRICS_FILE}")
    assert (out / SRFA_FILE).is_file() and not (out / OLD_FILE).exists()

    (out / SRFA_FILE).rename(out / OLD_FILE)
    (out / SRFA_METRICS_FILE).rename(out / OLD_METRICS)
    check = run_script("audit_check.py", str(out))
    assert check.returncode == 0, check.stderr
    assert check.stderr.startswith("note: scripts/audit_check.py is now scripts/srfa_check.py")
    assert f"note: reading {out / OLD_FILE}" in check.stderr
    assert json.loads(check.stdout)["correctness"]["n"] == 2

    usage = run_script("audit.py", "--help")
    assert usage.returncode == 0 and usage.stderr.splitlines()[1].startswith("usage: ledgermind srfa RUN_DIR")
