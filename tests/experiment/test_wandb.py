"""W&B logging: offline run files hold the config, per-item table, summary and Table 3; no secrets."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ledgermind.experiment.variants import variant
from ledgermind.experiment.wandb_logger import ITEM_COLUMNS, is_secret_name, sanitize
from ledgermind.pipeline.config import ablation_flags
from tests.experiment.conftest import FAKE_OVERRIDES, run_scripts_in_child
from tests.experiment.wandb_records import read_run

ENV_SECRET = "sk-env-secret-5b1f0c"  # exported as a secret-named env var
ENV_SECRET_2 = "tok-elsewhere-77aa"  # referenced from a non-secret-named config key


@pytest.mark.parametrize(
    "name", ["api_key", "HF_TOKEN", "apiKey", "db-password", "client_secret", "key", "auth"]
)
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["max_tokens", "keywords", "monkey", "tokens_per_item", "author"])
def test_non_secret_names(name: str) -> None:
    assert not is_secret_name(name)


def test_sanitize_drops_secret_keys_and_redacts_secret_values() -> None:
    cfg = {
        "backend": {
            "api_key_env": "X",
            "base_urls": ["http://h/v1"],
            "headers": {"note": "Bearer s3cr3t-xyz"},
        },
        "search": {"serper_api_key": "abc"},
        "max_tokens": 512,
    }
    out = sanitize(cfg, ["s3cr3t-xyz"])
    assert out == {
        "backend": {"base_urls": ["http://h/v1"], "headers": {"note": "Bearer ***"}},
        "search": {},
        "max_tokens": 512,
    }


def _run_file(run_dir: Path) -> Path:
    files = list(run_dir.glob("wandb/offline-run-*/run-*.wandb"))
    assert len(files) == 1, files
    return files[0]


def _table_json(run_dir: Path, name: str) -> dict:
    files = list(run_dir.glob(f"wandb/offline-run-*/files/media/table/{name}_*.table.json"))
    assert len(files) == 1, files
    return json.loads(files[0].read_text())


@pytest.fixture(scope="module")
def offline_runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, tuple[Path, subprocess.CompletedProcess]]:
    """The W&B runs of this module, all in one child (W&B's service is a process of the child's): per
    name, the folder and the outcome. ``secrets``: a sweep whose config references secrets from the
    environment, and Table 3 logged from it (auto never follows a run folder's logger node: the folder
    is data, so it is asked for); ``grouped``: a plain sweep; ``simulated``: one simulated item. The
    tests only read these folders; one child pays Python, the project's imports and W&B's service once."""
    root = tmp_path_factory.mktemp("wandb")
    secrets, grouped, simulated = root / "secrets", root / "grouped", root / "simulated"
    runs = {
        "secrets": (
            secrets,
            "run.py",
            [
                "-m",
                *FAKE_OVERRIDES,
                "logger=wandb_offline",
                f"hydra.sweep.dir={secrets}",
                "+ablation=full,no_ecc",
                "logger.group=abl-sweep",
                "logger.tags=[mine]",
                "+extra.hf_token=${oc.env:LM_TEST_API_KEY}",
                "+extra.note=${oc.env:LM_TEST_PLAIN}",
            ],
        ),
        "table3": (secrets, "table3.py", [str(secrets), "--logger", "offline"]),
        "grouped": (
            grouped,
            "run.py",
            [
                "-m",
                *FAKE_OVERRIDES,
                "logger=wandb_offline",
                f"hydra.sweep.dir={grouped}",
                "+ablation=full,no_ecc",
            ],
        ),
        "simulated": (
            simulated,
            "run.py",
            [
                "backend=simulated",
                "limit=1",
                "logger=wandb_offline",
                "progress=false",
                f"hydra.run.dir={simulated}",
            ],
        ),
    }
    done = run_scripts_in_child(
        [(script, args) for _, script, args in runs.values()],
        root / "answers.json",
        LM_TEST_API_KEY=ENV_SECRET,
        LM_TEST_PLAIN=ENV_SECRET_2,
        MY_SERVICE_TOKEN=ENV_SECRET_2,
    )
    return {
        name: (folder, proc) for (name, (folder, _, _)), (proc, _) in zip(runs.items(), done, strict=True)
    }


@pytest.mark.slow
def test_offline_run_files_and_no_secret_leak(offline_runs: dict) -> None:
    sweep, proc = offline_runs["secrets"]
    _, t3 = offline_runs["table3"]
    assert proc.returncode == 0, proc.stderr
    job = sweep / "ablation=no_ecc"
    metrics = json.loads((job / "metrics.json").read_text())
    run = read_run(_run_file(job))

    # logger.group wins over the benchmark default; job type and automatic tags
    assert run["run"]["group"] == "abl-sweep" and run["run"]["job_type"] == "eval"
    assert set(run["run"]["tags"]) == {"mine", "variant:no_ecc", "model:tiny_qwen2_vl", "benchmark:fake"}
    # resolved config, minus secrets
    assert run["config"]["model"]["name"] == "tiny_qwen2_vl"
    recorded = run["config"]["ablation"]  # the variant's file, without how Table 3 shows it
    assert recorded["name"] == "no_ecc" and ablation_flags(recorded) == variant("no_ecc").flags
    assert run["config"]["pipeline"]["gamma"] == 0.5
    assert (
        run["config"]["identity"]["config_sha256"] == metrics["identity"]["config_sha256"]
    )  # provenance in W&B
    assert run["config"]["identity"]["prompts_sha256"] == metrics["identity"]["prompts_sha256"]
    assert "hf_token" not in run["config"]["extra"] and run["config"]["extra"]["note"] == "***"
    # per-item stream and summary
    assert [h["running/accuracy"] for h in run["history"] if "running/accuracy" in h][-1] == metrics[
        "accuracy"
    ]
    assert run["summary"]["accuracy"] == metrics["accuracy"] == pytest.approx(4 / 6)
    assert run["summary"]["by_difficulty/Hard/accuracy"] == 0.0
    (record,) = [keys for keys in run["summary_records"] if "accuracy" in keys]  # the metrics in one update
    assert {"by_difficulty/Hard/accuracy", "n_items", "identity/config_sha256"} <= record
    # per-item table
    table = _table_json(job, "items")
    assert table["columns"] == ITEM_COLUMNS
    rows = {r[0]: dict(zip(ITEM_COLUMNS, r, strict=True)) for r in table["data"]}
    assert len(rows) == 6
    assert (
        rows["q2"]["difficulty"] == "Hard"
        and rows["q2"]["correct"] is False
        and rows["q2"]["prediction"] == "B"
    )
    assert rows["q0"]["correct"] is True and rows["q0"]["model_calls"] == 2
    assert (
        rows["q2"]["question"] == "question 2?"
        and rows["q2"]["reply"] == "Answer: B"
        and rows["q2"]["error"] is None
    )
    assert (
        rows["q2"]["options"] == "A. right\nB. wrong\nC. also wrong\nD. nope"
        and rows["q2"]["thumbnail"] is None
    )

    assert t3.returncode == 0, t3.stderr
    t3_table = _table_json(sweep, "table3")
    head = next(x for x in (sweep / "table3.csv").read_text().splitlines() if not x.startswith("#")).split(
        ","
    )
    assert t3_table["columns"] == head  # the CSV's table, column for column
    ablated = dict(zip(head, t3_table["data"][1], strict=True))
    assert ablated["display"] == "w/o ECC/NCC" and ablated["delta_vs_full"] == pytest.approx(-100 / 3)
    assert list(sweep.glob("wandb/offline-run-*/files/media/images/table3_chart_*.png"))

    # no secret value anywhere in the outputs (W&B files, Hydra logs, results)
    for f in sweep.rglob("*"):
        if f.is_file() and not f.is_symlink():
            data = f.read_bytes()
            assert ENV_SECRET.encode() not in data, f
            assert ENV_SECRET_2.encode() not in data, f


@pytest.mark.slow
def test_a_sweep_is_one_wandb_group_and_a_simulated_run_is_tagged(offline_runs: dict) -> None:
    (sweep, proc), (single, sim) = offline_runs["grouped"], offline_runs["simulated"]
    assert proc.returncode == 0, proc.stderr
    groups = {
        read_run(_run_file(sweep / job))["run"]["group"] for job in ("ablation=full", "ablation=no_ecc")
    }  # named from the swept value
    assert groups == {str(sweep)}  # the sweep, not the benchmark
    assert sim.returncode == 0, sim.stderr[-2000:]
    run = read_run(_run_file(single))
    assert "simulated" in run["run"]["tags"] and run["run"]["group"] == "sample"
    table = _table_json(single, "items")
    row = dict(zip(table["columns"], table["data"][0], strict=True))
    assert row["thumbnail"] is not None and row["question"]  # the sample item's image, as a W&B image


def test_thumbnail_is_a_small_copy_of_the_first_image(tmp_path: Path) -> None:
    from PIL import Image

    from ledgermind.experiment.wandb_logger import THUMBNAIL_SIDE, WandbLogger

    Image.new("RGB", (1200, 600), "white").save(tmp_path / "big.png")
    thumb = WandbLogger()._thumbnail(tmp_path / "big.png")
    assert thumb is not None and max(thumb.image.size) == THUMBNAIL_SIDE
    assert (
        WandbLogger()._thumbnail(tmp_path / "missing.png") is None and WandbLogger()._thumbnail(None) is None
    )
