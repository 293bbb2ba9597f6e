"""Reasoning blocks are kept apart from the answer, on every way a reply can carry them."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from omegaconf import OmegaConf

from ledgermind.backends.base import GenerationRequest, Message, Reply
from ledgermind.backends.build import build_backend
from ledgermind.backends.cache import CachedBackend
from ledgermind.backends.reasoning import (
    ReasoningBackend,
    ReasoningSpec,
    is_truncated,
    separate,
    split_reasoning,
)
from ledgermind.backends.vllm_server import VLLMServerBackend
from ledgermind.errors import ConfigError

CONF = Path(__file__).resolve().parents[2] / "conf"
SCRIPTED = {"_target_": "ledgermind.backends.scripted.ScriptedBackend", "allow_scripted": True}


def req(text: str = "Which option? A, B or C", max_tokens: int = 512) -> GenerationRequest:
    return GenerationRequest([Message.text("user", text)], max_tokens=max_tokens)


@pytest.mark.parametrize(
    ("text", "answer", "reasoning", "unclosed"),
    [
        ("<think>A looks right... no, C</think>\nAnswer: B", "Answer: B", "A looks right... no, C", False),
        ("plain Answer: B", "plain Answer: B", "", False),
        # the chat template opened the block: only the closing tag is in the reply
        ("option A? no.</think>Answer: C", "Answer: C", "option A? no.", False),
        # cut inside the block: truncated reasoning and *no* answer, not "Answer: A"
        ("<think>Answer: A is tempting", "", "Answer: A is tempting", True),
        ("<think>one</think> mid <think>two</think> Answer: D", "mid  Answer: D", "one\n\ntwo", False),
    ],
)
def test_split_reasoning(text, answer, reasoning, unclosed):
    s = split_reasoning(text)
    assert (s.answer, s.reasoning, s.unclosed) == (answer, reasoning, unclosed)


def test_template_opened_block_without_any_tag_is_all_reasoning():
    s = split_reasoning("Hmm, the answer is A, but let me check", opened_by_template=True)
    assert s.answer == "" and s.unclosed and "answer is A" in s.reasoning
    assert split_reasoning("x</think>Answer: B", opened_by_template=True).answer == "Answer: B"
    assert split_reasoning("<think>x</think>Answer: B", opened_by_template=True).reasoning == "x"


def test_separate_merges_server_reasoning_and_is_idempotent():
    r = Reply(text="<think>inline C</think>Answer: B", reasoning="server-side A", finish_reason="stop")
    s = separate(r)
    assert s.text == "Answer: B" and s.reasoning == "server-side A\n\ninline C"
    assert separate(s) == s and not is_truncated(s)
    cut = separate(Reply(text="<think>still thinking", finish_reason="stop"))
    assert cut.text == "" and is_truncated(cut)
    assert is_truncated(Reply(text="Answer: B is because", finish_reason="length"))


def test_vllm_server_returns_reasoning_content_apart():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            json={
                "choices": [
                    {
                        "message": {"content": "Answer: B", "reasoning_content": "C? no, B"},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 9, "completion_tokens": 4},
            },
        )

    b = VLLMServerBackend({"name": "m", "hub_id": "o/m"}, transport=httpx.MockTransport(handler))
    r = b.generate_sync(req())
    assert r.text == "Answer: B" and r.reasoning == "C? no, B" and r.prompt_tokens == 9


def test_thinking_model_config_adds_its_budget_and_splits(tmp_path):
    model = OmegaConf.to_container(OmegaConf.load(CONF / "model" / "qwen3_vl_8b_thinking.yaml"), resolve=True)
    spec = ReasoningSpec.from_model(model)
    assert spec is not None and spec.budget_tokens > 0 and spec.opened_by_template
    reply = "The label reads A, but the arrow points to C.</think>\n\nAnswer: B"
    b = build_backend(
        {**SCRIPTED, "rules": [{"pattern": "Which option", "reply": reply}]},
        model,
        cache_mode="readwrite",
        cache_path=tmp_path / "c.sqlite",
    )
    assert isinstance(b, ReasoningBackend) and isinstance(b.inner, CachedBackend) and b.name == "scripted"
    r = b.generate_sync(req(max_tokens=100))
    assert r.text == "Answer: B" and "points to C" in r.reasoning
    assert b.inner.inner.history[0].max_tokens == 100 + spec.budget_tokens
    # the cache keeps the raw reply (think text included), so a later parser can re-split it
    assert b.inner.cache.lookup(next(iter(_keys(b.inner.cache))))[0].text == reply


def _keys(cache):
    return [k for (k,) in cache._db.execute("SELECT key FROM replies")]


def test_plain_models_are_not_wrapped_and_bad_reasoning_nodes_are_one_line_errors():
    b = build_backend({**SCRIPTED, "default": "x"}, {"name": "m", "hub_id": "o/m"})
    assert not isinstance(b, ReasoningBackend)
    with pytest.raises(ConfigError, match="budget_tokens must be an integer"):
        ReasoningSpec.from_model({"reasoning": {"budget_tokens": -1}})
    with pytest.raises(ConfigError, match="unknown model.reasoning key"):
        ReasoningSpec.from_model({"reasoning": {"budget": 5}})
