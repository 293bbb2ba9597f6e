"""The fake OpenAI-compatible load server, exercised through the real vllm_server client over loopback."""

from __future__ import annotations

import asyncio
import json
import re
import time

import httpx
import jsonschema
import pytest
from PIL import Image

from ledgermind.backends.base import GenerationRequest, Message
from ledgermind.backends.vllm_server import VLLMServerBackend
from ledgermind.errors import BackendError
from ledgermind.prompts import schemas
from ledgermind.testing.fake_openai_server import FakeOpenAIServer, UnsupportedFormat, string_matching
from ledgermind.testing.throughput_limit import replay_requests

MODEL = {"name": "fake", "path": "fake-model"}


@pytest.fixture(scope="module")
def server():
    """Instant replies: the tests that use it check what comes back, not when (timing tests start a
    server with a latency of their own)."""
    with FakeOpenAIServer(latency_s=0.0, reply_text="B") as srv:
        yield srv


def client(srv: FakeOpenAIServer, concurrency: int = 16) -> VLLMServerBackend:
    return VLLMServerBackend(
        MODEL,
        base_urls=[srv.base_url],
        served_model_name="fake-model",
        concurrency=concurrency,
        max_retries=0,
        timeout_s=10,
    )


def ask(**kw) -> GenerationRequest:
    img = Image.new("RGB", (32, 24), "navy")
    return GenerationRequest([Message("user", [img, "What is shown?"])], **kw)


@pytest.mark.parametrize(
    "schema",
    [schemas.CLAIMS, schemas.DECISION, schemas.READING, schemas.with_max_items(schemas.OBSERVATIONS, 3)],
)
def test_json_schema_replies_validate(server, schema):
    reply = asyncio.run(client(server).generate(ask(json_schema=schema)))
    value = json.loads(reply.text)
    jsonschema.validate(value, schema)
    arrays = [v for v in value.values() if isinstance(v, list)]
    assert all(len(a) >= 1 for a in arrays)  # non-empty lists, so claim stages have work to do


def test_regex_and_plain_replies(server):
    regex = r"(Answer: )?[A-J](\.|\))?\s\d{2,3}(kPa|psi)"
    b = client(server)
    assert re.fullmatch(regex, asyncio.run(b.generate(ask(regex=regex))).text)
    assert asyncio.run(b.generate(ask())).text == "B"


@pytest.mark.parametrize(
    "pattern", [r"[A-D]", r"\d+\.\d{1,2}", r"(yes|no)", r"[^0-9]{3}x?", r"\w+@\w+\.com", r"^a{2,4}$"]
)
def test_string_matching(pattern):
    assert re.fullmatch(pattern, string_matching(pattern))


def test_unsatisfiable_regex_is_a_400_then_a_backend_error(server):
    with pytest.raises(UnsupportedFormat):
        string_matching(r"(?<=a)b")
    with pytest.raises(BackendError, match="400"):
        asyncio.run(client(server).generate(ask(regex=r"(?<=a)b")))


@pytest.fixture
def slow_server():
    with FakeOpenAIServer(latency_s=0.3, reply_text="B") as srv:
        yield srv


def test_concurrent_requests_overlap_and_are_counted(slow_server):
    b = client(slow_server)

    async def burst(n: int):
        await asyncio.gather(*(b.generate(ask()) for _ in range(n)))

    httpx.post(f"{slow_server.base_url.removesuffix('/v1')}/stats/reset")
    t0 = time.perf_counter()
    asyncio.run(burst(8))
    wall = time.perf_counter() - t0
    stats = httpx.get(f"{slow_server.base_url.removesuffix('/v1')}/stats").json()
    assert stats["requests"] == 8 and stats["max_in_flight"] == 8
    assert 0.3 <= wall < 0.3 * 8 * 0.75  # the requests overlap (sequential would take 8 latencies)
    busy = stats["mean_in_flight"] * stats["seconds"]  # request-seconds integrated by the server
    assert 8 * 0.3 <= busy < 8 * 0.3 * 3

    httpx.post(f"{slow_server.base_url.removesuffix('/v1')}/stats/reset")
    for _ in range(2):
        asyncio.run(b.generate(ask()))
    stats = httpx.get(f"{slow_server.base_url.removesuffix('/v1')}/stats").json()
    assert stats["requests"] == 2 and stats["max_in_flight"] == 1 and stats["mean_in_flight"] <= 1.0


def test_models_route_and_loopback_only(server):
    data = httpx.get(f"{server.base_url}/models").json()
    assert [m["id"] for m in data["data"]] == ["fake-model"]
    assert httpx.get(f"{server.base_url}/nothing").status_code == 404
    with pytest.raises(ValueError, match="loopback"):
        FakeOpenAIServer(host="0.0.0.0")


def test_recorded_requests_replay_at_the_given_concurrency():
    # recorded on an instant server (when its replies come is not measured), replayed on a 0.2 s one
    with FakeOpenAIServer(latency_s=0.0, record=True) as recorder, FakeOpenAIServer(latency_s=0.2) as srv:
        root = recorder.base_url.removesuffix("/v1")
        b = client(recorder)
        for schema in (schemas.DECISION, None, None, None):
            asyncio.run(b.generate(ask(json_schema=schema)))
        bodies = httpx.get(f"{root}/recorded").json()
        assert len(bodies) == 4 and bodies[0]["response_format"]["json_schema"]["schema"] == schemas.DECISION
        httpx.post(f"{root}/stats/reset")
        assert httpx.get(f"{root}/recorded").json() == []
        wall = asyncio.run(replay_requests(srv.base_url, bodies, concurrency=4))
        stats = httpx.get(f"{srv.base_url.removesuffix('/v1')}/stats").json()
        assert stats["requests"] == 4 and stats["max_in_flight"] == 4 and 0.2 <= wall < 0.8
        assert asyncio.run(replay_requests(srv.base_url, bodies, concurrency=1)) >= 0.8
        with pytest.raises(httpx.HTTPStatusError):  # a replay that fails measures nothing
            asyncio.run(
                replay_requests(
                    srv.base_url,
                    [
                        {
                            "response_format": {
                                "type": "json_schema",
                                "json_schema": {"schema": {"type": "string", "pattern": "(?<=a)b"}},
                            }
                        }
                    ],
                    1,
                )
            )


def test_a_reply_with_a_lone_surrogate_escape_becomes_valid_text():
    """A random model's JSON can carry "\\udebc": the client must hand the agent encodable text
    (seen in a real run: the next prompt, or the trajectory file, failed to encode it)."""
    with FakeOpenAIServer(latency_s=0.0, reply=lambda body: "x\udebcy \ud83d\ude00") as srv:
        reply = asyncio.run(client(srv).generate(ask()))
    assert reply.text == "x\ufffdy \U0001f600"
    reply.text.encode("utf-8")  # would raise on a lone surrogate


def test_structured_replies_with_surrogate_escapes_parse_to_valid_text():
    """The same "\\udebc", written as a JSON escape inside a structured reply (seen in a real no_ledger
    run: the DC text could not be grounded), is valid text once parsed."""
    from ledgermind.claims import _try_json
    from ledgermind.pipeline.answer import parse_decision

    answer, cites = parse_decision('{"answer": "B\\udebc", "cites": ["OC-1"]}')
    assert answer == "B\ufffd" and cites == ["OC-1"]
    answer.encode("utf-8")
    assert _try_json('{"claims": [{"text": "x\\udebc"}]}') == {"claims": [{"text": "x\ufffd"}]}


# ----------------------------------------------------------------------------- prefix cache and cost model
def _with_image(color: str, question: str) -> GenerationRequest:
    return GenerationRequest([Message("user", [Image.new("RGB", (32, 24), color), question])])


def test_prefix_cache_reports_cached_tokens_as_vllm_does():
    from ledgermind.testing.fake_openai_server import ServerModel

    cost = ServerModel(prefix_cache_tokens=100_000, image_tokens=500)
    with FakeOpenAIServer(latency_s=0.0, cost=cost) as srv:
        b = client(srv)
        first = b.generate_sync(_with_image("navy", "What is the value of the tallest bar?"))
        again = b.generate_sync(
            _with_image("navy", "Which colour is the smallest slice?")
        )  # same image, new question
        other = b.generate_sync(
            _with_image("red", "What is the value of the tallest bar?")
        )  # other image first
        stats = httpx.get(f"{srv.root_url}/stats").json()
    assert first.meta["cached_tokens"] == 0 and other.meta["cached_tokens"] == 0
    assert again.meta["cached_tokens"] == 500 < again.prompt_tokens  # the image prefix, not the new question
    assert (
        stats["cached_tokens"] == 500
        and stats["prompt_tokens"] == first.prompt_tokens + again.prompt_tokens + other.prompt_tokens
    )


def test_prefix_cache_outlives_a_stats_reset_and_keys_images_by_their_uuid():
    """A sweep's jobs share a server's cache (counters reset per job, the cache does not), and an
    image is known by the uuid the client sends, as vLLM keys its caches on it."""
    from ledgermind.testing.fake_openai_server import ServerModel

    cost = ServerModel(prefix_cache_tokens=100_000, image_tokens=500)
    with FakeOpenAIServer(latency_s=0.0, cost=cost) as srv:
        b = client(srv)
        b.generate_sync(_with_image("navy", "first job"))
        httpx.post(f"{srv.root_url}/stats/reset")
        next_job = b.generate_sync(_with_image("navy", "next job"))
        httpx.post(f"{srv.root_url}/prefix_cache/reset")
        restarted = b.generate_sync(_with_image("navy", "next job"))
        body = {"model": "fake-model", "messages": [{"role": "user", "content": []}]}
        same_uuid = [
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}, "uuid": "one-image"}
            for data in ("AAAA", "BBBB")
        ]
        cached = []
        for part in same_uuid:  # other bytes, same uuid: one image to the cache
            body["messages"][0]["content"] = [part]
            reply = httpx.post(f"{srv.base_url}/chat/completions", json=body).json()
            cached.append(reply["usage"]["prompt_tokens_details"]["cached_tokens"])
        stats = httpx.get(f"{srv.root_url}/stats").json()
    assert next_job.meta["cached_tokens"] == 500 and restarted.meta["cached_tokens"] == 0
    assert cached == [0, 500]
    assert stats["requests"] == 4  # the counters were reset after the first job


def test_prefix_cache_evicts_the_least_recently_used_prefix():
    from ledgermind.testing.fake_openai_server import PrefixCache

    cache = PrefixCache(capacity_tokens=10)
    a, b = [("a1", 4), ("a2", 4)], [("b1", 4), ("b2", 4)]
    assert cache.serve(a) == 0 and cache.serve(a) == 8
    assert cache.serve(b) == 0  # 16 tokens > 10: a's blocks go first
    assert cache.serve(a) == 0 and cache.serve(a) == 8


def test_latency_model_charges_uncached_prompt_and_generated_tokens(monkeypatch):
    from ledgermind.testing import fake_openai_server as fake

    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def record(delay, *a, **kw):
        slept.append(delay)
        await real_sleep(0)

    monkeypatch.setattr(fake.asyncio, "sleep", record)
    cost = fake.ServerModel(
        prefix_cache_tokens=100_000, prefill_s_per_token=0.001, decode_s_per_token=0.01, image_tokens=500
    )
    with FakeOpenAIServer(latency_s=0.1, cost=cost, reply_text="ABCDEFGH") as srv:
        b = client(srv)
        cold = b.generate_sync(_with_image("navy", "q"))
        warm = b.generate_sync(_with_image("navy", "q"))
        busy_s = httpx.get(f"{srv.root_url}/stats").json()["busy_s"]
    # 0.1 s + 1 ms per uncached prompt token + 10 ms per generated token (8 characters: 2 tokens)
    assert slept[0] == pytest.approx(0.1 + cold.prompt_tokens * 0.001 + 0.02)
    assert slept[1] == pytest.approx(0.1 + (warm.prompt_tokens - warm.meta["cached_tokens"]) * 0.001 + 0.02)
    assert warm.meta["cached_tokens"] == warm.prompt_tokens
    assert busy_s == pytest.approx(slept[0] + slept[1])  # the modelled service seconds, reported on /stats


def test_batch_limit_queues_requests_beyond_it():
    from ledgermind.testing.fake_openai_server import ServerModel

    with FakeOpenAIServer(latency_s=0.2, cost=ServerModel(max_batch=2)) as srv:
        b = client(srv, concurrency=6)

        async def run():
            t0 = time.perf_counter()
            await asyncio.gather(*(b.generate(ask()) for _ in range(6)))
            await b.aclose()
            return time.perf_counter() - t0

        wall = asyncio.run(run())
    assert wall >= 0.55  # three waves of two, not one wave of six (0.2 s)
