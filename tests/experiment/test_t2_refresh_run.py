"""T2 / REFRESH end to end through the run path (``run_experiment``, what scripts/run.py calls):
the offline retriever over a small corpus, the real OCR, a request-driven fake model. A retrieval
entry fetched during evidence gathering is older than its TTL (3 ledger steps) by the time the
decision cites it — a T6 repair and hypothesis verification ran in between — so T2 fires and,
since the decision depends on it, REFRESH re-runs the search and SUPERSEDEs the entry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from PIL import Image, ImageDraw, ImageFont

from ledgermind.experiment.app import run_experiment
from ledgermind.runs.trajectories import trajectory_path
from ledgermind.trajectory import Trajectory

pytestmark = pytest.mark.slow  # real OCR on one image (~20 s on 2 cores)
CONF = Path(__file__).resolve().parents[2] / "conf"
QUESTION = "Identify the artifact; according to history, which year was it placed?"


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    from matplotlib import font_manager

    font = ImageFont.truetype(font_manager.findfont("DejaVu Sans"), 26)
    img = Image.new("RGB", (360, 160), "white")
    ImageDraw.Draw(img).text((20, 20), "APOLLO 11 PLAQUE", fill="black", font=font)
    ImageDraw.Draw(img).text((40, 100), "1969", fill="black", font=font)
    img.save(tmp_path / "plaque.png")
    row = {"id": "p1", "question": QUESTION, "images": ["plaque.png"], "answer": "Apollo 11"}
    (tmp_path / "items.jsonl").write_text(json.dumps(row) + "\n")
    corpus = [
        {
            "id": "a11",
            "title": "Apollo 11",
            "text": "Apollo 11 landed on the Moon in 1969 and left a plaque.",
            "url": "local://a11",
        },
        {"id": "v1", "title": "Voyager", "text": "Voyager 1 carries a golden record launched in 1977."},
        {
            "id": "h1",
            "title": "Hubble",
            "text": "The Hubble telescope was deployed from the shuttle Discovery.",
        },
        {
            "id": "s1",
            "title": "Sputnik",
            "text": "Sputnik was the first artificial satellite, a polished sphere.",
        },
        {"id": "m1", "title": "Mir", "text": "Mir was a modular space station assembled in orbit."},
    ]  # BM25 needs a few documents: a term in half of a two-document corpus has zero weight
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps(p) + "\n" for p in corpus))
    return tmp_path


def test_an_expired_retrieval_entry_fires_t2_and_refresh_supersedes_it(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    overrides = [
        "backend=scripted",
        "backend._target_=tests.experiment.ledger_model.ApolloHistorian",
        "benchmark=jsonl",
        f"benchmark.path={bench}",
        "logger=none",
        "progress=false",
        "search.provider=local",
        f"search.corpus={bench / 'corpus.jsonl'}",
        f"perception.cache_dir={tmp_path / 'pcache'}",
        f"output_dir={out}",
    ]
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=overrides)
    metrics = run_experiment(cfg)
    assert metrics["errors"] == 0 and metrics["knowledge_without_source"] == 0
    census = metrics["mechanisms"]
    assert (
        census["search"]["rounds"] >= 2
        and census["triggers"]["T2"] >= 1
        and census["operators"]["REFRESH"] >= 1
    )
    traj = Trajectory.from_dict(json.loads(trajectory_path(out, "p1").read_text()))
    refresh = next(e for e in traj.events if e.operator is not None and e.operator.value == "REFRESH")
    old = traj.ledger.get(refresh.targets[0])
    assert (
        old.kappa.value == "RETRIEVAL"
        and old.omega.value == "STALE"
        and old.superseded_by in refresh.new_entries
    )
    new = traj.ledger.get(old.superseded_by)
    assert new.kappa.value == "RETRIEVAL" and "1969" in new.fact and new.src.startswith("local://")
    assert any(t.op == "SUPERSEDE" and t.entry_id == old.id for t in traj.ledger.transitions)
    assert refresh.tool_call and traj.ledger.tool_output(refresh.tool_call).kind.value == "search"
