"""Real-stack smoke: tiny random Qwen2-VL + real PP-OCRv5 + real spaCy on a real MMMU-Pro image.

The answers are meaningless (random weights); what is asserted is that a complete FULLPIPE
trajectory is produced and serialises, through transformers and through a real vLLM CPU server
with structured outputs.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import jsonschema
import pytest

from ledgermind.benchmarks import load_benchmark
from ledgermind.grounding import GroundingCascade
from ledgermind.pipeline import AblationFlags, LedgerMindAgent, PipelineConfig
from ledgermind.pipeline.agent import grounding_config
from ledgermind.prompts import schemas
from ledgermind.trajectory import PathKind, Trajectory

pytestmark = [pytest.mark.slow, pytest.mark.hf]
STAGE_SCHEMAS = {"observe": None, "reason": schemas.CLAIMS, "decide": schemas.DECISION}


@pytest.fixture(scope="module")
def real_item(shared_data: Path):
    items = load_benchmark(
        "mmmu_pro", {"path": str(shared_data / "mmmu_pro_subset"), "setting": "standard10", "limit": 3}
    )
    return items[0]


@pytest.fixture(scope="module")
def perception_tools():
    from omegaconf import OmegaConf

    from perception.tools import build_tools

    cfg = OmegaConf.to_container(OmegaConf.load(Path(__file__).parents[2] / "conf/perception/cpu.yaml"))
    return build_tools(cfg)


def run_agent(backend, tools, item, cfg=PipelineConfig(max_tokens=48)) -> Trajectory:
    flags = AblationFlags(dispatcher=False)  # force FULLPIPE
    agent = LedgerMindAgent(backend, tools, GroundingCascade(grounding_config(cfg, flags)), cfg, flags)
    return asyncio.run(agent.solve(item))


def assert_complete(t: Trajectory) -> None:
    assert t.error is None, t.notes
    assert t.path is PathKind.FULLPIPE
    stages = [c.stage for c in t.model_calls]
    assert stages[0] == "plan" and {"observe", "reason", "decide"} <= set(stages)
    assert any(o["tool"] == "ocr" for o in t.tool_calls)
    assert t.ledger.entries()[0].src == "plan" and t.timings["total_s"] > 0
    assert t.tokens > 0
    d = t.to_dict()
    assert Trajectory.from_dict(json.loads(json.dumps(d))).to_dict() == d


def test_fullpipe_with_transformers_backend(tiny_model_cfg, perception_tools, real_item):
    from ledgermind.backends.transformers_local import TransformersBackend

    backend = TransformersBackend(tiny_model_cfg, device="cpu")
    t = run_agent(backend, perception_tools, real_item)
    assert_complete(t)
    assert all(c.backend == "transformers" for c in t.model_calls)


@pytest.mark.vllm
def test_fullpipe_with_vllm_server_and_structured_outputs(
    vllm_server, tiny_model_cfg, perception_tools, real_item
):
    from ledgermind.backends.vllm_server import VLLMServerBackend

    backend = VLLMServerBackend(
        tiny_model_cfg,
        base_urls=[vllm_server.base_url],
        served_model_name=vllm_server.model,
        timeout_s=120,
        max_retries=1,
    )
    assert backend.supports_structured_output
    t = run_agent(backend, perception_tools, real_item)
    assert_complete(t)
    calls = {c.stage: c for c in t.model_calls}
    for stage, schema in (("reason", schemas.CLAIMS), ("decide", schemas.DECISION)):
        call = calls[stage]
        if call.completion_tokens < 48:  # a reply cut by max_tokens cannot be complete JSON
            try:
                jsonschema.validate(json.loads(call.reply), schema)  # structured output obeys the schema
            except ValueError as exc:
                raise AssertionError(
                    f"{stage}: {call.reply!r} ({call.completion_tokens} tokens, error {call.error})"
                ) from exc


def test_search_settings_reach_the_tool_and_search_off_is_left_to_the_runs_one_notice(monkeypatch, caplog):
    import pytest as _pytest
    from omegaconf.errors import ConfigKeyError

    from ledgermind.cli.run_args import composition_error
    from ledgermind.pipeline.agent import build_search_tool

    monkeypatch.setenv("SERPER_API_KEY", "test-key-not-used")
    tool = build_search_tool({"provider": "auto", "top_k": 5, "max_chars": 300})
    assert tool is not None and tool.config.top_k == 5 and tool.config.max_chars == 300
    with _pytest.raises(ConfigKeyError) as refused:  # the run's one line names the closest key
        build_search_tool({"provider": "web", "topk": 5})
    assert composition_error(refused.value) == "unknown key 'search.topk': did you mean search.top_k?"
    monkeypatch.delenv("SERPER_API_KEY")
    monkeypatch.delenv("SERPAPI_API_KEY", raising=False)
    with caplog.at_level("WARNING"):
        assert build_search_tool({"provider": "auto"}) is None
    assert caplog.records == []  # the run's one line counts the knowledge items it affects
