"""Client for one or more vLLM OpenAI-compatible servers (the primary GPU path).

Several ``base_urls`` spread one sweep over several GPUs (one ``vllm serve`` per GPU), routed by
``backends/routing.py``: all calls of one item go to one server (its prefix cache keeps the
item's image), the same server in every job of a sweep (``backends/placement.py``), each server
has its own request limit, and a server that fails leaves the rotation — its items move on at
their next attempt, so a dead server costs a retry rather than a failed item. On one node,
vLLM's own ``--data-parallel-size N`` behind a single URL is the alternative
(``scripts/serve.py --dp N``).
When the server reports ``usage.prompt_tokens_details.cached_tokens`` (vLLM with
``--enable-prompt-tokens-details``), the reply's meta records it per call.

Every request is bounded: ``timeout_s`` is the deadline of the whole exchange (httpx's own read
timeout restarts with every byte, so a server trickling a byte at a time could hold a request for
minutes), ``max_reply_bytes`` caps the body (a runaway reply would fill the trajectory, the cache
and the report), and a busy server's ``Retry-After`` is waited out within the retry budget. An
empty reply (``content`` null or "") is the server's failure, not the model's answer: it is an
error of that call, never cached, so a later run asks again.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

import httpx

from ledgermind.backends.base import BACKENDS, Backend, GenerationRequest, Reply
from ledgermind.backends.chat import to_openai_messages
from ledgermind.backends.model_ref import ModelRef
from ledgermind.backends.retry import (
    Failure,
    GaveUp,
    RetryPolicy,
    is_retryable_status,
    retry_after_s,
    retrying,
)
from ledgermind.backends.routing import ItemRouter
from ledgermind.benchmarks.item import Item
from ledgermind.errors import BackendError, BackendTimeout, ConfigError, PreflightError


def build_payload(
    request: GenerationRequest, served_model: str, return_token_ids: bool = False
) -> dict[str, Any]:
    """The ``/v1/chat/completions`` body. Structured output uses vLLM's API: a JSON schema through
    the standard ``response_format`` (type ``json_schema``), a regex through vLLM's
    ``structured_outputs`` extension (vLLM >= 0.11; it replaced ``guided_regex``)."""
    body: dict[str, Any] = {
        "model": served_model,
        "messages": to_openai_messages(request.messages),
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "seed": request.seed,
    }
    if request.stop:
        body["stop"] = list(request.stop)
    if return_token_ids:  # vLLM extension: generated ids in choices[0].token_ids
        body["return_token_ids"] = True
    if request.json_schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "ledgermind_reply", "schema": request.json_schema},
        }
    if request.regex is not None:
        body["structured_outputs"] = {"regex": request.regex}
    return body


@dataclass
class _LoopState:
    """One httpx client and the request limits of one event loop: ``generate_sync`` runs each call
    in a fresh loop, and asyncio primitives must not cross loops."""

    client: httpx.AsyncClient
    requests: asyncio.Semaphore
    per_server: dict[str, asyncio.Semaphore]


@BACKENDS.register("vllm_server")
class VLLMServerBackend(Backend):
    name = "vllm_server"
    supports_structured_output = True

    def __init__(
        self,
        model: Mapping[str, Any],
        base_urls: Sequence[str] = ("http://127.0.0.1:8000",),
        served_model_name: str | None = None,
        api_key_env: str | None = None,
        concurrency: int = 8,
        per_server_concurrency: int | None = None,
        routing: str = "rendezvous",
        load_epsilon: float = 0.0,
        cooldown_s: float = 30.0,
        timeout_s: float = 120.0,
        connect_timeout_s: float = 5.0,
        max_retries: int = 5,
        backoff_base_s: float = 0.5,
        backoff_cap_s: float = 32.0,
        max_reply_bytes: int = 1 << 20,
        seed: int | None = None,
        return_token_ids: bool = False,
        transport: httpx.AsyncBaseTransport | None = None,  # tests inject httpx.MockTransport
    ) -> None:
        self.ref = ModelRef.from_mapping(model)
        urls = [base_urls] if isinstance(base_urls, str) else list(base_urls)
        if not urls:
            raise ConfigError("vllm_server backend needs at least one base URL")
        if concurrency < 1 or (per_server_concurrency is not None and per_server_concurrency < 1):
            raise ConfigError(
                f"concurrency must be >= 1, got {concurrency} (per server: {per_server_concurrency})"
            )
        # accept both "http://host:8000" and the OpenAI-SDK style "http://host:8000/v1"
        self.base_urls = [u.rstrip("/").removesuffix("/v1") for u in urls]
        self._model_id = self.ref.name
        # vLLM serves a model under its --served-model-name, which defaults to the --model argument.
        self.served_model = served_model_name or self.ref.served_name
        self.policy = RetryPolicy(max_retries=max_retries, base_s=backoff_base_s, cap_s=backoff_cap_s)
        self._timeout = httpx.Timeout(timeout_s, connect=connect_timeout_s)
        self.timeout_s, self.max_reply_bytes = timeout_s, max_reply_bytes
        self.return_token_ids = return_token_ids
        self._rng = random.Random(seed)
        self.router = ItemRouter(self.base_urls, routing, cooldown_s=cooldown_s, load_epsilon=load_epsilon)
        key = os.environ.get(api_key_env) if api_key_env else None
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._key = key
        # what a 401/403 says of the key: the server is up, so "unreachable" would name the wrong thing
        self._key_state = (
            f"the key in ${api_key_env} was not accepted"
            if key
            else f"it needs an API key and ${api_key_env} is not set"
            if api_key_env
            else "it needs an API key: export it and name the variable with backend.api_key_env=VAR"
        )
        n = concurrency * len(self.base_urls)
        limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
        per_server = per_server_concurrency or concurrency
        self._new_state = lambda: _LoopState(
            httpx.AsyncClient(timeout=self._timeout, limits=limits, headers=headers, transport=transport),
            asyncio.Semaphore(concurrency),
            {u: asyncio.Semaphore(per_server) for u in self.base_urls},
        )
        self._states: WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = WeakKeyDictionary()

    def _state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        if loop not in self._states:
            self._states[loop] = self._new_state()
        return self._states[loop]

    async def generate(self, request: GenerationRequest) -> Reply:
        # image encoding (base64 of every image) off the event loop: it would stall every item in flight
        body = await asyncio.to_thread(build_payload, request, self.served_model, self.return_token_ids)
        async with self._state().requests:
            t0 = time.perf_counter()
            (data, url), attempts = await self._post_with_retries(body, request.item_id)
            latency = time.perf_counter() - t0
        return self._parse(data, latency, url, attempts)

    def expect_items(self, items: Sequence[Item]) -> None:
        self.router.expect(items)

    def item_done(self, item_id: str) -> None:
        self.router.item_done(item_id)

    async def _post_with_retries(
        self, body: dict[str, Any], item_id: str
    ) -> tuple[tuple[dict[str, Any], str], int]:
        async def attempt() -> tuple[dict[str, Any], str] | Failure:
            url = self.router.pick(item_id)
            self.router.started(url, item_id)
            answered = True  # a server that answers (even to reject the request) stays in rotation
            try:
                async with self._state().per_server[url]:
                    outcome = await self._post_once(url, body)
                answered = not isinstance(outcome, Failure)
            finally:
                self.router.finished(url, answered)
            return outcome if isinstance(outcome, Failure) else (outcome, url)

        try:
            return await retrying(attempt, self.policy, self._rng, "vllm_server")
        except GaveUp as gave_up:
            # a slow server is up: "unavailable" would send its user looking for a dead one
            err, what = (
                (BackendTimeout, "gave no complete reply in time")
                if gave_up.failure.timed_out
                else (BackendError, "unavailable")
            )
            raise err(
                f"vLLM server {what} after {gave_up.attempts} attempts; last error: {gave_up.failure.why}"
            ) from None

    async def _post_once(self, url: str, body: dict[str, Any]) -> dict[str, Any] | Failure:
        """The reply JSON, or a ``Failure`` a retry may fix; raises for one no retry can fix."""
        client = self._state().client
        try:
            async with asyncio.timeout(self.timeout_s):
                async with client.stream("POST", f"{url}/v1/chat/completions", json=body) as resp:
                    raw = bytearray()  # refused once it passes max_reply_bytes, before it is all in memory
                    async for chunk in resp.aiter_bytes():
                        raw += chunk
                        if len(raw) > self.max_reply_bytes:
                            raise BackendError(
                                f"{url} sent a reply larger than backend.max_reply_bytes={self.max_reply_bytes} bytes"
                            )
        except TimeoutError:
            return Failure(f"{url}: no complete reply within backend.timeout_s={self.timeout_s:g} s", True)
        except httpx.TransportError as exc:
            return Failure(f"{url}: {type(exc).__name__}: {exc}", isinstance(exc, httpx.TimeoutException))
        text = self._scrub(raw.decode("utf-8", errors="replace"))
        if resp.status_code == 200:
            try:
                return json.loads(raw)
            except ValueError as exc:
                raise BackendError(f"{url} returned malformed JSON: {text[:200]!r}") from exc
        if not is_retryable_status(resp.status_code):
            raise BackendError(f"{url} rejected the request (HTTP {resp.status_code}): {text[:500]}")
        return Failure(
            f"{url}: HTTP {resp.status_code}: {text[:200]}", retry_after_s=retry_after_s(resp.headers)
        )

    def _scrub(self, text: str) -> str:
        """``text`` (a server's words, bound for an error) without the API key: a gateway that quotes
        the key it refused would otherwise put it in results.jsonl, the trajectory, run.log and W&B."""
        return text.replace(self._key, "<api key>") if self._key else text

    async def preflight(self) -> None:
        """Every base URL answers ``/v1/models``, lists ``served_model`` and serves it with the
        configured ``max_model_len`` (one line otherwise).

        Why the length: the run records the config's context length in its identity; a server started
        with another ``--max-model-len`` truncates or refuses other requests than the record says.
        """
        client = self._state().client
        for url in self.base_urls:
            try:
                resp = await client.get(
                    f"{url}/v1/models", timeout=httpx.Timeout(10.0, connect=self._timeout.connect)
                )
                if resp.status_code in (401, 403):
                    raise PreflightError(
                        f"{url} refused the request (HTTP {resp.status_code}): {self._key_state}"
                    )
                resp.raise_for_status()
                cards = {str(m.get("id")): m for m in resp.json().get("data", [])}
            except (httpx.HTTPError, ValueError, AttributeError) as exc:
                raise PreflightError(
                    f"backend unreachable at {url} ({type(exc).__name__}: {str(exc)[:120]}); start it with "
                    f"`python scripts/serve.py model=<name> --launch` or fix backend.base_urls"
                ) from None
            if self.served_model not in cards:
                raise PreflightError(
                    f"{url} serves {list(cards)}, not {self.served_model!r}; set backend.served_model_name "
                    f"or start the server with --served-model-name {self.served_model}"
                )
            # the server's max_model_len (vLLM lists it per model) against the config's
            served = cards[self.served_model].get("max_model_len")
            wanted = self.ref.engine_args().get("max_model_len")
            if served is not None and wanted is not None and int(served) != int(wanted):
                raise PreflightError(
                    f"{url} serves {self.served_model} with max_model_len {served}, the config says {wanted}; "
                    f"restart it with `python scripts/serve.py model={self.ref.name}` or set "
                    f"model.vllm_args.max_model_len={served}"
                )

    def _parse(self, data: dict[str, Any], latency: float, url: str, attempts: int) -> Reply:
        try:
            choice = data["choices"][0]
            text = choice["message"]["content"] or ""
            # vLLM's --reasoning-parser returns the thinking apart (``reasoning_content``; newer: ``reasoning``)
            reasoning = choice["message"].get("reasoning_content") or choice["message"].get("reasoning") or ""
            usage = u if isinstance(u := data.get("usage"), dict) else {}
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise BackendError(f"unexpected chat completion shape from {url}: {str(data)[:300]}") from exc
        meta: dict[str, Any] = {"base_url": url, "attempts": attempts, "served_model": self.served_model}
        details = usage.get("prompt_tokens_details")  # vLLM --enable-prompt-tokens-details
        if isinstance(details, dict) and details.get("cached_tokens") is not None:
            meta["cached_tokens"] = _count(details["cached_tokens"])
        if choice.get("token_ids") is not None:
            meta["token_ids"] = list(choice["token_ids"])
        if not text and not reasoning:  # thinking without an answer is the model's (truncated) reply
            raise BackendError(
                f"{url} sent an empty reply (content {choice['message']['content']!r}, "
                f"finish_reason {choice.get('finish_reason')!r})"
            )
        return self.reply(
            text,
            # optional fields may be absent *or* null (some OpenAI-compatible servers send "usage": {.. null})
            prompt_tokens=_count(usage.get("prompt_tokens")),
            completion_tokens=_count(usage.get("completion_tokens")),
            finish_reason=str(choice.get("finish_reason") or "stop"),
            latency_s=latency,
            meta=meta,
            reasoning=str(reasoning),
        )

    async def aclose(self) -> None:
        if (state := self._states.pop(asyncio.get_running_loop(), None)) is not None:
            await state.client.aclose()


def _count(value: Any) -> int:
    """A token count from a server reply: absent, null or not a number counts as 0."""
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0
