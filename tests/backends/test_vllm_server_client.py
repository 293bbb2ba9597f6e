"""The vLLM server client against an in-process mock transport (no server, no sleeps)."""

from __future__ import annotations

import asyncio
import base64
import io
import json

import httpx
import pytest
from PIL import Image

from ledgermind.backends.base import GenerationRequest, Message
from ledgermind.backends.images import image_digest
from ledgermind.backends.vllm_server import VLLMServerBackend, build_payload
from ledgermind.errors import BackendError, BackendTimeout, ConfigError

MODEL = {"name": "m", "hub_id": "org/m"}


def ok_body(text: str = "hello") -> dict:
    return {
        "choices": [{"message": {"content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 2},
    }


class Script:
    """A mock transport answering from a list of (status | exception) steps; records requests."""

    def __init__(self, steps):
        self.steps = list(steps)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = self.steps.pop(0) if self.steps else 200
        if isinstance(step, Exception):
            raise step
        if step == 200:
            return httpx.Response(200, json=ok_body())
        return httpx.Response(step, text=f"status {step}")


def backend(script: Script, **kw) -> VLLMServerBackend:
    kw.setdefault("backoff_base_s", 0.0)
    return VLLMServerBackend(MODEL, transport=httpx.MockTransport(script), **kw)


def req(**kw) -> GenerationRequest:
    return GenerationRequest([Message.text("user", "hi")], **kw)


def test_success_parses_text_usage_and_identity():
    s = Script([200])
    r = backend(s).generate_sync(req())
    assert (r.text, r.prompt_tokens, r.completion_tokens) == ("hello", 7, 2)
    assert r.backend == "vllm_server" and r.model == "m" and r.meta["attempts"] == 1
    body = json.loads(s.requests[0].content)
    assert body["model"] == "org/m" and body["temperature"] == 0.0
    assert s.requests[0].url.path == "/v1/chat/completions"


@pytest.mark.parametrize("failure", [503, 500, 429, httpx.ConnectError("refused"), httpx.ReadTimeout("t")])
def test_retryable_failures_are_retried(failure):
    s = Script([failure, failure, 200])
    r = backend(s, max_retries=3).generate_sync(req())
    assert r.text == "hello" and len(s.requests) == 3 and r.meta["attempts"] == 3


@pytest.mark.parametrize("status", [400, 404, 422])
def test_4xx_is_never_retried(status):
    s = Script([status, 200])
    with pytest.raises(BackendError, match=f"HTTP {status}"):
        backend(s, max_retries=5).generate_sync(req())
    assert len(s.requests) == 1


def test_gives_up_after_max_retries_with_clear_error():
    s = Script([503] * 10)
    with pytest.raises(BackendError, match="after 4 attempts.*HTTP 503"):
        backend(s, max_retries=3).generate_sync(req())
    assert len(s.requests) == 4


def test_persistent_timeouts_raise_backend_timeout():
    s = Script([httpx.ReadTimeout("slow")] * 3)
    with pytest.raises(BackendTimeout):
        backend(s, max_retries=2).generate_sync(req())


def test_backoff_sleeps_between_attempts(monkeypatch):
    slept: list[float] = []

    async def fake_sleep(d):
        slept.append(d)

    monkeypatch.setattr("ledgermind.backends.vllm_server.asyncio.sleep", fake_sleep)
    s = Script([503, 503, 503, 200])
    backend(s, max_retries=5, backoff_base_s=1.0, seed=0).generate_sync(req())
    assert len(slept) == 3
    assert all(0 <= d <= 2**i for i, d in enumerate(slept))


def test_rotation_policy_sends_each_request_to_the_next_server():
    s = Script([200, 200, 200, 200])
    b = backend(s, base_urls=["http://a:1/v1", "http://b:2/"], routing="rotation")
    for item in ("x", "x", "y", "y"):
        b.generate_sync(req(item_id=item))
    assert [r.url.host for r in s.requests] == ["a", "b", "a", "b"]
    assert {r.url.path for r in s.requests} == {"/v1/chat/completions"}


def test_least_loaded_routing_keeps_an_item_on_one_server_and_balances_new_items():
    s = Script([])
    b = backend(s, base_urls=["http://a:1", "http://b:2", "http://c:3"], routing="least_loaded")
    order = ["i1", "i2", "i3", "i1", "i2", "i3", "i4", "i1", "i4"]
    for item in order:
        b.generate_sync(req(item_id=item))
    by_item: dict[str, set[str]] = {}
    for item, r in zip(order, s.requests, strict=True):
        by_item.setdefault(item, set()).add(r.url.host)
    assert all(len(hosts) == 1 for hosts in by_item.values())  # every call of an item on one server
    assert {h for i in ("i1", "i2", "i3") for h in by_item[i]} == {
        "a",
        "b",
        "c",
    }  # three items, three servers


def test_a_failing_server_leaves_rotation_and_its_item_continues_elsewhere():
    s = Script([200, httpx.ConnectError("down"), 200, 200, 200])
    b = backend(s, base_urls=["http://a:1", "http://b:2"], max_retries=2, routing="least_loaded")
    b.generate_sync(req(item_id="x"))  # x pinned to a
    r = b.generate_sync(req(item_id="x"))  # a dies: after one retry x continues on b
    b.generate_sync(req(item_id="x"))
    b.generate_sync(req(item_id="new"))  # a is out of rotation: the new item goes to b too
    assert [q.url.host for q in s.requests] == ["a", "a", "b", "b", "b"] and r.meta["attempts"] == 2
    assert not b.router.healthy("http://a:1") and b.router.assignment("x") == "http://b:2"


def test_a_server_that_rejects_a_request_stays_in_rotation():
    s = Script([400])
    b = backend(s, base_urls=["http://a:1", "http://b:2"])
    with pytest.raises(BackendError, match="rejected"):
        b.generate_sync(req(item_id="x"))
    assert b.router.healthy("http://a:1")


def test_per_server_concurrency_limit():
    in_flight: dict[str, int] = {}
    peak: dict[str, int] = {}

    async def handler(request):
        host = request.url.host
        in_flight[host] = in_flight.get(host, 0) + 1
        peak[host] = max(peak.get(host, 0), in_flight[host])
        await asyncio.sleep(0.02)
        in_flight[host] -= 1
        return httpx.Response(200, json=ok_body())

    b = VLLMServerBackend(
        MODEL,
        base_urls=["http://a:1", "http://b:2"],
        concurrency=16,
        per_server_concurrency=2,
        transport=httpx.MockTransport(handler),
    )

    async def run():
        await asyncio.gather(*(b.generate(req(item_id=f"i{k % 4}")) for k in range(24)))
        await b.aclose()

    asyncio.run(run())
    assert peak == {"a": 2, "b": 2}


def test_cached_prompt_tokens_are_recorded_when_the_server_reports_them():
    def handler(request):
        body = ok_body()
        body["usage"]["prompt_tokens_details"] = {"cached_tokens": 5}
        return httpx.Response(200, json=body)

    r = VLLMServerBackend(MODEL, transport=httpx.MockTransport(handler)).generate_sync(req())
    assert r.meta["cached_tokens"] == 5 and r.prompt_tokens == 7
    plain = VLLMServerBackend(
        MODEL, transport=httpx.MockTransport(lambda q: httpx.Response(200, json=ok_body()))
    )
    assert "cached_tokens" not in plain.generate_sync(req()).meta


def test_malformed_json_and_shape_raise_backend_error():
    def bad(request):
        return httpx.Response(200, text="not json")

    with pytest.raises(BackendError, match="malformed JSON"):
        VLLMServerBackend(MODEL, transport=httpx.MockTransport(bad)).generate_sync(req())

    def wrong_shape(request):
        return httpx.Response(200, json={"choices": []})

    with pytest.raises(BackendError, match="unexpected chat completion shape"):
        VLLMServerBackend(MODEL, transport=httpx.MockTransport(wrong_shape)).generate_sync(req())


def test_concurrency_limit_is_respected():
    in_flight = 0
    peak = 0

    async def handler(request):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.02)
        in_flight -= 1
        return httpx.Response(200, json=ok_body())

    b = VLLMServerBackend(MODEL, concurrency=3, transport=httpx.MockTransport(handler))

    async def run():
        await asyncio.gather(*(b.generate(req()) for _ in range(12)))
        await b.aclose()

    asyncio.run(run())
    assert peak == 3


def test_payload_images_and_structured_output():
    img = Image.new("RGB", (8, 6), (1, 2, 3))
    r = GenerationRequest([Message("user", ["look", img])], json_schema={"type": "object"}, stop=("\n",))
    body = build_payload(r, "served")
    parts = body["messages"][0]["content"]
    assert parts[0] == {"type": "text", "text": "look"}
    url = parts[1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert parts[1]["uuid"] == image_digest(img)  # vLLM's processor and prefix caches key on it
    decoded = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert decoded.size == (8, 6) and decoded.getpixel((0, 0)) == (1, 2, 3)
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == {"type": "object"}
    assert body["stop"] == ["\n"]
    rx = build_payload(GenerationRequest([Message.text("user", "x")], regex="[0-9]+"), "s")
    assert rx["structured_outputs"] == {"regex": "[0-9]+"} and "response_format" not in rx
    with pytest.raises(ConfigError):
        build_payload(GenerationRequest([Message.text("user", "x")], regex="a", json_schema={}), "s")


def test_bad_config_is_a_config_error():
    with pytest.raises(ConfigError):
        VLLMServerBackend(MODEL, base_urls=[])
    with pytest.raises(ConfigError):
        VLLMServerBackend({"hub_id": "x"})


@pytest.mark.parametrize("content", [None, ""])
def test_an_empty_reply_is_a_backend_error_of_that_call(content):
    def empty(request):
        return httpx.Response(200, json=ok_body() | {"choices": [{"message": {"content": content}}]})

    with pytest.raises(BackendError, match=f"sent an empty reply \\(content {content!r}"):
        VLLMServerBackend(MODEL, transport=httpx.MockTransport(empty)).generate_sync(req())


def test_reasoning_without_an_answer_is_the_models_reply_not_an_empty_one():
    def thinking(request):
        return httpx.Response(
            200,
            json=ok_body()
            | {
                "choices": [
                    {"message": {"content": None, "reasoning_content": "hmm"}, "finish_reason": "length"}
                ]
            },
        )

    r = VLLMServerBackend(MODEL, transport=httpx.MockTransport(thinking)).generate_sync(req())
    assert (r.text, r.reasoning, r.finish_reason) == ("", "hmm", "length")


def test_a_reply_over_the_byte_cap_is_an_error_naming_the_cap():
    s = Script([])
    big = VLLMServerBackend(
        MODEL,
        max_reply_bytes=64,
        transport=httpx.MockTransport(lambda q: httpx.Response(200, json=ok_body("x" * 100))),
    )
    with pytest.raises(BackendError, match="larger than backend.max_reply_bytes=64 bytes"):
        big.generate_sync(req())
    assert backend(s, max_reply_bytes=200).generate_sync(req()).text == "hello"  # under the cap


class Trickle(httpx.AsyncByteStream):
    """A body that keeps coming, one byte every 50 ms: no single read ever waits long."""

    async def __aiter__(self):
        for byte in json.dumps(ok_body()).encode():
            await asyncio.sleep(0.05)
            yield bytes([byte])


def test_timeout_s_is_the_deadline_of_the_whole_request_not_of_each_read():
    b = VLLMServerBackend(
        MODEL,
        timeout_s=0.3,
        max_retries=1,
        backoff_base_s=0.0,
        transport=httpx.MockTransport(lambda q: httpx.Response(200, stream=Trickle())),
    )
    with pytest.raises(
        BackendTimeout, match="after 2 attempts.*no complete reply within backend.timeout_s=0.3 s"
    ):
        b.generate_sync(req())


def test_retry_after_of_a_busy_server_is_waited_out_up_to_the_cap(monkeypatch):
    slept: list[float] = []

    async def fake_sleep(d):
        slept.append(d)

    monkeypatch.setattr("ledgermind.backends.vllm_server.asyncio.sleep", fake_sleep)
    answers = [
        httpx.Response(429, headers={"Retry-After": "3"}),
        httpx.Response(503, headers={"Retry-After": "120"}),
        httpx.Response(503),
        httpx.Response(200, json=ok_body()),
    ]
    b = VLLMServerBackend(
        MODEL,
        max_retries=5,
        backoff_base_s=0.01,
        backoff_cap_s=10.0,
        transport=httpx.MockTransport(lambda q: answers.pop(0)),
    )
    assert b.generate_sync(req()).meta["attempts"] == 4
    assert slept[0] == 3.0 and slept[1] == 10.0 and slept[2] <= 0.04  # Retry-After, capped, plain backoff
