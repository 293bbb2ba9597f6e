"""The self-built tiny Qwen2-VL checkpoint and the transformers backend on it (marker ``hf``)."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from ledgermind.backends.base import GenerationRequest, Message
from ledgermind.backends.tiny import QWEN2_VL_SPECIAL_TOKENS, TinySpec, build_tiny_qwen2_vl
from ledgermind.backends.transformers_local import TransformersBackend

pytestmark = pytest.mark.hf


@pytest.fixture(scope="module")
def hf_backend(tiny_model_cfg):
    return TransformersBackend(tiny_model_cfg, device="cpu")


def test_checkpoint_layout_and_size(tiny_model_dir):
    files = {p.name for p in tiny_model_dir.iterdir()}
    assert {
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "preprocessor_config.json",
        "generation_config.json",
        "chat_template.json",
    } <= files
    size_mb = sum(p.stat().st_size for p in tiny_model_dir.iterdir()) / 1e6
    assert size_mb < 3.0
    cfg = json.loads((tiny_model_dir / "config.json").read_text())
    assert cfg["architectures"] == ["Qwen2VLForConditionalGeneration"]
    assert cfg["text_config"]["num_hidden_layers"] == 2 and cfg["text_config"]["hidden_size"] == 64


def test_tokenizer_has_every_qwen2_vl_special_token(tiny_model_dir):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    cfg = json.loads((tiny_model_dir / "config.json").read_text())
    for t in QWEN2_VL_SPECIAL_TOKENS:
        ids = tok.encode(t, add_special_tokens=False)
        assert len(ids) == 1, t  # atomic, never split by BPE
    assert tok.convert_tokens_to_ids("<|image_pad|>") == cfg["image_token_id"]
    assert cfg["text_config"]["vocab_size"] == len(tok)
    assert tok.decode(tok.encode("Total was 3.5 million")) == "Total was 3.5 million"


def test_build_is_idempotent_and_rebuilds_on_spec_change(tiny_model_dir, tmp_path):
    stamp = (tiny_model_dir / "model.safetensors").stat().st_mtime_ns
    assert build_tiny_qwen2_vl(tiny_model_dir) == tiny_model_dir
    assert (tiny_model_dir / "model.safetensors").stat().st_mtime_ns == stamp
    other = build_tiny_qwen2_vl(tmp_path / "t", TinySpec(seed=1))
    assert (other / "model.safetensors").read_bytes() != (tiny_model_dir / "model.safetensors").read_bytes()


def test_greedy_generation_with_image_is_deterministic_and_fast(hf_backend, chart_image):
    r = GenerationRequest([Message("user", [chart_image, "What is the tallest bar?"])], max_tokens=12)
    first = hf_backend.generate_sync(r)
    t0 = time.perf_counter()
    second = hf_backend.generate_sync(r)
    elapsed = time.perf_counter() - t0
    assert first.text == second.text and first.text
    assert first.backend == "transformers" and first.model == "tiny_qwen2_vl"
    assert 0 < first.completion_tokens <= 12 and first.prompt_tokens > 20  # image tokens included
    assert elapsed < 5.0


def test_image_changes_the_output(hf_backend, chart_image):
    from PIL import Image

    def ask(img):
        return hf_backend.generate_sync(
            GenerationRequest([Message("user", [img, "Describe."])], max_tokens=8)
        ).text

    assert ask(chart_image) != ask(Image.new("RGB", (120, 90), "black"))


def test_stop_string_is_excluded_like_vllm(hf_backend, chart_image):
    r = GenerationRequest([Message("user", [chart_image, "Go"])], max_tokens=16)
    full = hf_backend.generate_sync(r).text
    stop = full[3:5]
    cut = hf_backend.generate_sync(GenerationRequest(r.messages, max_tokens=16, stop=(stop,))).text
    assert cut == full[: full.find(stop)]


def test_generate_does_not_block_the_event_loop(hf_backend, chart_image):
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.005)

    async def run():
        t = asyncio.create_task(ticker())
        r = GenerationRequest([Message("user", [chart_image, "x"])], max_tokens=16)
        await asyncio.gather(hf_backend.generate(r), hf_backend.generate(r))
        t.cancel()

    asyncio.run(run())
    assert ticks > 3


def test_structured_output_is_flagged_not_enforced(hf_backend):
    r = GenerationRequest([Message.text("user", "json")], max_tokens=4, json_schema={"type": "object"})
    assert hf_backend.generate_sync(r).meta["structured_output"] == "not_enforced"
