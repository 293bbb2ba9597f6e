"""An OpenAI-compatible API (the paper's GPT-4o): the key comes from the environment variable the
config names, goes out only as the request's bearer token, and is absent when the variable is."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from ledgermind.backends.base import GenerationRequest, Message
from ledgermind.backends.vllm_server import VLLMServerBackend
from ledgermind.errors import BackendError, PreflightError


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


def _refusing(monkeypatch, status: int) -> VLLMServerBackend:
    """A server that refuses every request and quotes the key it was sent (some gateways do)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-quoted-secret")

    def handler(request: httpx.Request) -> httpx.Response:
        quoted = request.headers.get("Authorization", "")
        return httpx.Response(status, json={"error": {"message": f"Incorrect API key provided: {quoted}"}})

    return VLLMServerBackend(
        {"name": "gpt-4o", "hub_id": "gpt-4o"},
        api_key_env="OPENAI_API_KEY",
        max_retries=1,
        backoff_base_s=0.0,
        transport=httpx.MockTransport(handler),
    )


@pytest.mark.parametrize("status", [401, 500])
def test_a_server_quoting_the_key_in_its_refusal_does_not_put_it_in_the_error(monkeypatch, status) -> None:
    # the error text becomes results.jsonl's error, the trajectory, run.log and the W&B table
    with pytest.raises(BackendError) as err:
        _refusing(monkeypatch, status).generate_sync(GenerationRequest([Message.text("user", "hi")]))
    assert "sk-quoted-secret" not in str(err.value)
    assert f"HTTP {status}" in str(err.value) or "unavailable" in str(err.value)


@pytest.mark.parametrize(
    ("env", "api_key_env", "says"),
    [
        ({"OPENAI_API_KEY": "sk-wrong"}, "OPENAI_API_KEY", "the key in $OPENAI_API_KEY was not accepted"),
        ({}, "OPENAI_API_KEY", "$OPENAI_API_KEY is not set"),
        ({}, None, "backend.api_key_env=VAR"),
    ],
)
def test_a_server_that_wants_a_key_is_not_called_unreachable(monkeypatch, env, api_key_env, says) -> None:
    # vllm serve --api-key answers /v1/models with 401: the server is up, the key is the problem
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    backend = VLLMServerBackend(
        {"name": "gpt-4o", "hub_id": "gpt-4o"},
        api_key_env=api_key_env,
        transport=httpx.MockTransport(lambda _: httpx.Response(401, json={"error": "Unauthorized"})),
    )
    with pytest.raises(PreflightError) as err:
        asyncio.run(backend.preflight())
    assert "unreachable" not in str(err.value) and "HTTP 401" in str(err.value)
    assert says in str(err.value) and "sk-wrong" not in str(err.value)
