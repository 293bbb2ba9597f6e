"""An OpenAI-compatible API (the paper's GPT-4o): the key comes from the environment variable the
config names, goes out only as the request's bearer token, and is absent when the variable is."""

from __future__ import annotations

import httpx

from ledgermind.backends.base import GenerationRequest, Message
from ledgermind.backends.vllm_server import VLLMServerBackend


def _authorization(monkeypatch, **env: str) -> list[str | None]:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    seen: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("Authorization"))
        body = {"choices": [{"message": {"content": "A"}, "finish_reason": "stop"}], "usage": {}}
        return httpx.Response(200, json=body)

    b = VLLMServerBackend(
        {"name": "gpt-4o", "hub_id": "gpt-4o"},
        api_key_env="OPENAI_API_KEY",
        transport=httpx.MockTransport(handler),
    )
    b.generate_sync(GenerationRequest([Message.text("user", "hi")]))
    return seen


def test_the_key_is_sent_as_a_bearer_token_from_the_named_variable(monkeypatch) -> None:
    assert _authorization(monkeypatch, OPENAI_API_KEY="sk-abc") == ["Bearer sk-abc"]


def test_no_variable_no_header(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert _authorization(monkeypatch) == [None]
