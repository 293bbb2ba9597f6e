"""Every conf/model and conf/backend entry instantiates (no weights are loaded)."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf

from ledgermind.backends.base import Backend
from ledgermind.backends.build import build_backend
from ledgermind.backends.model_ref import ModelRef
from ledgermind.errors import ConfigError

CONF = Path(__file__).resolve().parents[2] / "conf"
MODELS = sorted((CONF / "model").glob("*.yaml"))
REAL_MODELS = ["qwen2_5_vl_3b", "qwen2_5_vl_7b", "qwen3_vl_8b", "internvl3_8b", "smolvlm"]


GIVEN = {"hf": {"hub_id": "ORG/Some-VL-2B"}}  # the generic config names its model on the command line


def load(path: Path) -> dict:
    node = OmegaConf.merge(OmegaConf.load(path), GIVEN.get(path.stem, {}))
    return OmegaConf.to_container(node, resolve=True)


def test_all_expected_model_configs_exist():
    assert {p.stem for p in MODELS} >= {"tiny_qwen2_vl", *REAL_MODELS}


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_model_config_is_complete(path):
    cfg = load(path)
    ref = ModelRef.from_mapping(cfg)
    assert ref.name == GIVEN.get(path.stem, {}).get("hub_id", path.stem)
    assert ref.context_length >= 1024 and ref.max_images >= 1
    assert ref.vllm_args["max_model_len"] <= ref.context_length
    assert ref.vllm_args["limit_mm_per_prompt"]["image"] == ref.max_images
    if path.stem != "tiny_qwen2_vl":
        assert "/" in ref.hub_id and ref.resolve_source() == ref.hub_id


def test_tiny_model_config_builds_into_the_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("LEDGERMIND_CACHE", str(tmp_path))
    cfg = load(CONF / "model" / "tiny_qwen2_vl.yaml")
    assert cfg["path"] == f"{tmp_path}/tiny-qwen2-vl" and cfg["builder"] == "tiny_qwen2_vl"


@pytest.mark.parametrize("backend", ["vllm_server", "transformers", "scripted"])
@pytest.mark.parametrize("model", REAL_MODELS[:2])
def test_backend_configs_instantiate_with_hydra(backend, model):
    bcfg = load(CONF / "backend" / f"{backend}.yaml")
    if backend == "scripted":
        bcfg["allow_scripted"] = True
    b = build_backend(bcfg, load(CONF / "model" / f"{model}.yaml"))
    assert isinstance(b, Backend) and b.name == backend and b.model_id == model


def test_scripted_config_refuses_without_opt_in(monkeypatch):
    monkeypatch.delenv("LEDGERMIND_ALLOW_SCRIPTED", raising=False)
    with pytest.raises(ConfigError) as info:  # the class's own refusal, not Hydra's wrapper
        build_backend(load(CONF / "backend" / "scripted.yaml"), {"name": "m", "hub_id": "o/m"})
    assert "tests only" in str(info.value)


@pytest.mark.xdist_group("tiny_model_dir")  # the worker that imports vLLM for its engine (~15 s of CPU)
def test_vllm_inprocess_config(monkeypatch):
    cfg = load(CONF / "backend" / "vllm_inprocess.yaml")
    model = load(CONF / "model" / "qwen2_5_vl_7b.yaml")
    try:
        import vllm  # noqa: F401
    except ImportError:
        with pytest.raises(Exception, match="pip install 'ledgermind\\[vllm\\]'"):
            build_backend(cfg, model)
        return
    b = build_backend(cfg, model)  # the engine is created lazily: no weights loaded here
    assert b.engine_args["dtype"] == "bfloat16" and b._engine is None


def test_model_ref_errors():
    for bad in [{}, {"name": "x"}, {"name": "x", "builder": "nope"}]:
        with pytest.raises(ConfigError):
            ModelRef.from_mapping(bad)
    with pytest.raises(ConfigError, match="does not exist"):
        ModelRef.from_mapping({"name": "x", "path": "/nonexistent/dir"}).resolve_source()
