"""S-RFA on real traces nobody here wrote: the official GPT-4o MMMU-Pro CoT replies, replayed
through the official protocol by the run path, then audited in ledger mode (real OCR, real NER)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledgermind.cli.srfa import main as srfa_main
from ledgermind.scoring.mmmu import choice_info, parse_multi_choice_response
from tests.experiment.conftest import run_script

pytestmark = pytest.mark.slow
N_ITEMS = 4


@pytest.mark.parametrize("setting,benchmark", [("standard10_cot", "mmmu_pro_standard10")])
def test_ledger_audit_of_official_gpt4o_traces_keeps_the_official_letter(
    tmp_path: Path,
    shared_data: Path,
    repo_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    setting: str,
    benchmark: str,
) -> None:
    outputs = shared_data / "mmmu_pro_subset" / "gpt4o_outputs" / f"{setting}.jsonl"
    run_dir = tmp_path / "run"
    done = run_script(
        "run.py",
        "pipeline=official",
        "pipeline.prompt=cot",
        f"benchmark={benchmark}",
        "backend=replay",
        f"backend.path={outputs}",
        f"limit={N_ITEMS}",
        "logger=none",
        "progress=false",
        f"hydra.run.dir={run_dir}",
        timeout=600,
        LEDGERMIND_SHARED_DATA=str(shared_data),
    )
    assert done.returncode == 0, done.stderr[-2000:]

    monkeypatch.setenv("LEDGERMIND_SHARED_DATA", str(shared_data))
    monkeypatch.chdir(repo_root)
    capsys.readouterr()
    assert srfa_main([str(run_dir), "logger=none"]) == 0
    console = capsys.readouterr().out.splitlines()
    # what answered leads (a replay is no model run), every rate says what it is a share of and over
    # how many, and the console says what S-RFA cannot judge
    assert console[0].startswith("REPLAYED — recorded replies of")
    rates = {ln.split()[0]: ln for ln in console if ln.startswith("  ") and "; n = " in ln}
    assert set(rates) == {"UCR_reason", "GDR", "R4R", "WDG"}
    assert f"n = {N_ITEMS} items" in next(ln for ln in console if ln.strip().startswith("Acc"))
    assert any(ln.startswith("what S-RFA cannot judge: S-RFA reads only the text") for ln in console)
    assert json.loads((run_dir / "srfa_metrics.json").read_text())["label"] == console[0]

    official = {r["id"]: r for r in map(json.loads, outputs.read_text().splitlines())}
    items = {
        r["id"]: r
        for r in map(json.loads, (shared_data / "mmmu_pro_subset" / "items.jsonl").read_text().splitlines())
    }
    audits = [json.loads(x) for x in (run_dir / "srfa.jsonl").read_text().splitlines()]
    assert len(audits) == N_ITEMS and all(a["error"] is None for a in audits)
    for a in audits:
        assert 1 <= len(a["claims"]) <= 10 and a["claims"][-1]["ctype"] == "DC"
        index2ans, letters = choice_info(items[a["id"]]["options"])
        fell_back = (
            parse_multi_choice_response(official[a["id"]]["response"], letters, index2ans).letter is None
        )
        if not fell_back:  # the official parser picked a random letter there: not comparable
            assert a["claims"][-1]["answer"] == official[a["id"]]["pred_indexs"], a["id"]
    metrics = json.loads((run_dir / "srfa_metrics.json").read_text())["ledger"]
    assert metrics["n"] == N_ITEMS and 0.0 <= metrics["all_claims"]["srfa.UCR_reason"] <= 1.0
    labels = [c["text_label"] for a in audits for c in a["claims"]]
    counts = metrics["text_labels"]
    assert sum(n for by in counts.values() for n in by.values()) == len(
        labels
    )  # every claim has one of three labels
    checkable = sum(1 for t in labels if t != "not_checkable_from_text")
    assert metrics["coverage"]["claims"] == pytest.approx(checkable / len(labels))
