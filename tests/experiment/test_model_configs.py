"""Every model config runs end to end: ``scripts/run.py model=NAME backend=vllm_server`` against a real
HTTP server on 127.0.0.1 (``ledgermind.testing.fake_openai_server``), one item of the bundled sample.

Why: ``model=qwen3_vl_8b`` ended in a traceback (its nested ``mm_processor_kwargs.size`` reached a JSON
writer as a ``DictConfig``) and no test ran each config. The server is told the config's served name
and context length, as a server started by ``scripts/serve.py`` would be.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from ledgermind.backends.model_ref import ModelRef
from ledgermind.testing.fake_openai_server import FakeOpenAIServer
from tests.experiment.conftest import REPO, run_script

MODELS = sorted(p.stem for p in (REPO / "conf" / "model").glob("*.yaml"))
# the generic config names its model on the command line
GIVEN = {"hf": ["model.hub_id=HuggingFaceTB/SmolVLM-256M-Instruct"]}


def _model(name: str, *overrides: str) -> dict:
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=[f"model={name}", *GIVEN.get(name, []), *overrides])
    return OmegaConf.to_container(cfg.model, resolve=True)


def _run(name: str, url: str, out: Path, *extra: str):
    return run_script(
        "run.py",
        f"model={name}",
        *GIVEN.get(name, []),
        "backend=vllm_server",
        f"backend.base_urls=[{url}/v1]",
        "backend.max_retries=0",
        "limit=1",
        "concurrency=1",
        "logger=none",
        "progress=false",
        f"hydra.run.dir={out}",
        *extra,
        timeout=300,
    )


@pytest.mark.parametrize("name", MODELS)
def test_each_model_config_runs_one_item_and_records_its_identity(name: str, tmp_path: Path) -> None:
    model = _model(name)
    ref = ModelRef.from_mapping(model)
    with FakeOpenAIServer(
        0.0, ref.served_name, strict_model=True, max_model_len=ref.engine_args()["max_model_len"]
    ) as srv:
        proc = _run(name, srv.root_url, tmp_path)
        assert srv.completions >= 1  # the item was answered by the server, not from a cache
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    ident = json.loads((tmp_path / "metrics.json").read_text())["identity"]
    assert ident["model"] == model["name"] and ident["backend"] == "VLLMServerBackend"
    assert ident["model_source"] == (model.get("hub_id") or model.get("path"))
    budget = ident["image_budget"]
    assert budget["mm_processor_kwargs"] == (model["vllm_args"].get("mm_processor_kwargs") or {})
    assert budget["max_images_per_request"] == model["vllm_args"]["limit_mm_per_prompt"]["image"]
    assert ident["decoding"]["reasoning"] == model.get("reasoning")


def test_a_server_with_another_context_length_is_one_line_before_any_item(tmp_path: Path) -> None:
    ref = ModelRef.from_mapping(_model("qwen3_vl_8b"))
    with FakeOpenAIServer(0.0, ref.served_name, strict_model=True, max_model_len=8192) as srv:
        proc = _run("qwen3_vl_8b", srv.root_url, tmp_path)
        assert srv.completions == 0
    assert proc.returncode == 2, proc.stderr[-2000:]
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("error: ") and "max_model_len 8192, the config says 32768" in line
    assert "model.vllm_args.max_model_len=8192" in line


def test_an_openai_compatible_api_model_is_asked_by_its_name_and_its_key_stays_in_the_environment(
    tmp_path: Path,
) -> None:
    """The recipe of docs/models.md for the paper's GPT-4o (any OpenAI-compatible endpoint): the server
    backend asks for the model by name with the key from ``api_key_env``; the key reaches no file."""
    key = "sk-test-0123456789abcdef"
    with FakeOpenAIServer(0.0, "gpt-4o", strict_model=True, record=True) as srv:
        proc = run_script(
            "run.py",
            "model=hf",
            "model.hub_id=gpt-4o",
            "backend=vllm_server",
            f"backend.base_urls=[{srv.root_url}/v1]",
            "backend.api_key_env=OPENAI_API_KEY",
            "limit=1",
            "logger=none",
            "progress=false",
            f"hydra.run.dir={tmp_path}",
            timeout=300,
            OPENAI_API_KEY=key,
        )
        asked = {body["model"] for body in srv.recorded}
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert asked == {"gpt-4o"}
    assert json.loads((tmp_path / "metrics.json").read_text())["identity"]["model"] == "gpt-4o"
    leaked = [p for p in tmp_path.rglob("*") if p.is_file() and key.encode() in p.read_bytes()]
    assert leaked == [] and key not in proc.stdout + proc.stderr
