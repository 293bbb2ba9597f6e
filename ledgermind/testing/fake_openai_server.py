"""A GPU-like load generator: a local OpenAI-compatible chat server with a fixed latency.

Why: on a CPU box the runner's concurrency cannot be judged against a real model (the model is
the bottleneck), yet on one GPU a vLLM server answers N requests in about the time of one. This
server behaves like that limit: every request takes ``latency_s`` whatever the load, so items/min
measures only the runner (OCR, grounding, event-loop stalls, locks). It answers in the format the
request asks for — an instance of the ``response_format`` JSON schema, a string matching the
``structured_outputs`` regex, plain text otherwise — and counts the requests in flight.

With a ``ServerModel`` (``--prefix-cache-tokens``, ``--prefill-s-per-token`` …) it also behaves
like one vLLM server's cost: a per-server prefix cache (LRU over chained hashes of the prompt's
prefix — 16-token text blocks and whole images, as vLLM's automatic prefix caching reuses KV
blocks), a latency of ``latency_s`` + a cost per *uncached* prompt token + a cost per generated
token, and a batch limit (requests beyond it wait). It reports
``usage.prompt_tokens_details.cached_tokens`` as vLLM does with ``--enable-prompt-tokens-details``,
so a client's routing can be judged by its prefix-hit rate (``scripts/bench_runner.py --servers``).
An image is keyed by the part's ``uuid`` when the request gives one (vLLM keys its caches on it),
else by its data. The prefix cache outlives ``/stats/reset``: a sweep's jobs share one server's
cache as they would share a running vLLM, so the prefill that placement saves *across* jobs is
measured (``POST /prefix_cache/reset`` empties it, as a server restart would). ``/stats`` also
reports ``busy_s``, the modelled service seconds (what its batch slots were held for), from which
a benchmark bounds the wall time any client could reach on these servers.

Loopback only (it refuses other hosts), stdlib only (asyncio HTTP/1.1 with keep-alive), run in a
background thread (``FakeOpenAIServer``) or as ``python -m ledgermind.testing.fake_openai_server``.
Endpoints: ``POST /v1/chat/completions``, ``GET /v1/models``, ``GET /stats``, ``POST /stats/reset``,
``POST /prefix_cache/reset`` and, with ``record=True``, ``GET /recorded`` (the chat bodies
received since the last reset, for a replay client to send again).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import itertools
import json
import re
import re._parser as sre_parse
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from re._constants import MAXREPEAT
from typing import Any

LOOPBACK = "127.0.0.1"
MAX_BODY = 64 << 20  # a request body larger than this is refused (images are base64 in the body)
MAX_HEADER_LINES = 100


class UnsupportedFormat(ValueError):
    """The requested schema or regex uses a construct this fake cannot satisfy (answered with 400)."""


# ----------------------------------------------------------------------------- answers
def instance_of(schema: Mapping[str, Any], text: str = "A", depth: int = 0) -> Any:
    """A small instance that validates against ``schema``: first enum value, minimal lengths,
    one item per array (so claim lists are not empty), every declared property filled in."""
    if depth > 20:
        raise UnsupportedFormat("schema nested deeper than 20 levels")
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return instance_of(schema[key][0], text, depth + 1)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: instance_of(sub, text, depth + 1) for name, sub in props.items()}
    if kind == "array":
        lo, hi = int(schema.get("minItems", 1)), schema.get("maxItems")
        n = lo if hi is None else min(max(lo, 1), int(hi))
        return [instance_of(schema.get("items") or {"type": "string"}, text, depth + 1) for _ in range(n)]
    if kind == "string":
        if "pattern" in schema:
            return string_matching(schema["pattern"])
        lo = int(schema.get("minLength", 0))
        s = (text * max(1, lo))[: max(lo, len(text))]
        return s[: int(schema["maxLength"])] if "maxLength" in schema else s
    if kind in ("number", "integer"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        value = lo + (1 if "exclusiveMinimum" in schema else 0)
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    raise UnsupportedFormat(f"schema type {kind!r}")


def string_matching(pattern: str) -> str:
    """The shortest-ish string that ``re.fullmatch(pattern, s)`` accepts, built from the regex's parse tree."""
    try:
        tree = sre_parse.parse(pattern)
    except re.error as exc:
        raise UnsupportedFormat(f"invalid regex {pattern!r}: {exc}") from None
    out = _emit(tree)
    if re.fullmatch(pattern, out) is None:
        raise UnsupportedFormat(f"cannot build a string for regex {pattern!r}")
    return out


def _emit(tree: Any) -> str:
    parts: list[str] = []
    for op, av in tree:
        name = str(op)
        if name == "LITERAL":
            parts.append(chr(av))
        elif name == "NOT_LITERAL":
            parts.append("a" if av != ord("a") else "b")
        elif name == "ANY":
            parts.append("a")
        elif name == "IN":
            parts.append(_first_in(av))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, sub = av
            n = max(lo, 1) if hi == MAXREPEAT or hi >= 1 else 0
            parts.append(_emit(sub) * n)
        elif name == "SUBPATTERN":
            parts.append(_emit(av[-1]))
        elif name == "ATOMIC_GROUP":
            parts.append(_emit(av))
        elif name == "BRANCH":
            parts.append(_emit(av[1][0]))
        elif name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue
        else:
            raise UnsupportedFormat(f"regex construct {name}")
    return "".join(parts)


def _first_in(items: list[tuple[Any, Any]]) -> str:
    if items and str(items[0][0]) == "NEGATE":
        return "~"
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            return chr(av)
        if name == "RANGE":
            return chr(av[0])
        if name == "CATEGORY":
            return {"CATEGORY_DIGIT": "0", "CATEGORY_SPACE": " ", "CATEGORY_WORD": "a"}.get(str(av), "a")
    raise UnsupportedFormat("empty character class")


def answer_for(body: Mapping[str, Any], text: str) -> str:
    """The reply content in the format the request asked for."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema") or {}
        return json.dumps(instance_of(schema, text))
    if fmt.get("type") == "json_object":
        return "{}"
    regex = (body.get("structured_outputs") or {}).get("regex") or body.get("guided_regex")
    if regex:
        return string_matching(regex)
    return text


_OPTION = re.compile(r"^([A-J])\. ", re.MULTILINE)


def prompt_text(body: Mapping[str, Any]) -> str:
    """All text parts of a chat body's messages, in order."""
    out = []
    for msg in body.get("messages", []):
        content = msg.get("content")
        parts = content if isinstance(content, list) else [{"text": content or ""}]
        out += [p.get("text", "") for p in parts if isinstance(p, Mapping)]
    return "".join(out)


def first_option_answer(body: Mapping[str, Any]) -> str:
    """``"Answer: X"`` for the first option ``"X. text"`` listed in the prompt (``A`` if none):
    a request-driven reply for harness tests that score real MMMU-Pro items."""
    m = _OPTION.search(prompt_text(body))
    return f"Answer: {m.group(1) if m else 'A'}"


# ----------------------------------------------------------------------------- load accounting
@dataclass
class LoadStats:
    """Requests in flight, integrated over time so that the mean is time-weighted."""

    requests: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    _area: float = 0.0
    _since: float = field(default_factory=time.perf_counter)
    _last: float = field(default_factory=time.perf_counter)

    def _advance(self) -> None:
        now = time.perf_counter()
        self._area += self.in_flight * (now - self._last)
        self._last = now

    def enter(self) -> None:
        self._advance()
        self.requests += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def leave(self) -> None:
        self._advance()
        self.in_flight -= 1

    def snapshot(self) -> dict[str, float]:
        self._advance()
        span = self._last - self._since
        return {
            "requests": self.requests,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "mean_in_flight": self._area / span if span > 0 else 0.0,
            "seconds": span,
        }


# ----------------------------------------------------------------------------- one GPU server's cost
TEXT_BLOCK_CHARS = 64  # ≈ 16 tokens at 4 characters a token: vLLM's default KV block size


@dataclass(frozen=True)
class ServerModel:
    """The cost model of one server. ``prefix_cache_tokens`` 0: no prefix cache (every prompt token
    is prefilled). Costs are seconds; ``image_tokens`` is what one image costs in prompt tokens."""

    prefix_cache_tokens: int = 0
    prefill_s_per_token: float = 0.0
    decode_s_per_token: float = 0.0
    max_batch: int | None = None
    image_tokens: int = 1024


def prompt_blocks(messages: Any, image_tokens: int) -> Iterator[tuple[str, int]]:
    """(chained hash, tokens) of each block of the prompt, in order: the hash of block k covers
    blocks 0..k (a prefix), so a hit on block k means the whole prefix up to it is cached."""
    h = hashlib.sha256()
    for msg in messages:
        h.update(f"<{msg.get('role', '')}>".encode())
        content = msg.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": str(content or "")}]
        for part in parts:
            if part.get("type") == "image_url":
                h.update(b"<img>" + image_key(part))
                yield h.hexdigest(), image_tokens
                continue
            text = str(part.get("text", ""))
            for i in range(0, len(text), TEXT_BLOCK_CHARS):
                chunk = text[i : i + TEXT_BLOCK_CHARS]
                h.update(chunk.encode())
                yield h.hexdigest(), max(1, len(chunk) // 4)


def image_key(part: Mapping[str, Any]) -> bytes:
    """What the prefix cache knows an image by: the client's ``uuid`` (vLLM's stable id) or its data."""
    if part.get("uuid"):
        return b"uuid:" + str(part["uuid"]).encode()
    return hashlib.sha256(str((part.get("image_url") or {}).get("url", "")).encode()).digest()


class PrefixCache:
    """LRU over prefix-block hashes with a capacity in tokens (one server's KV cache)."""

    def __init__(self, capacity_tokens: int) -> None:
        self.capacity = capacity_tokens
        self._blocks: OrderedDict[str, int] = OrderedDict()
        self._size = 0

    def serve(self, blocks: list[tuple[str, int]]) -> int:
        """Cached tokens of this prompt (the longest cached prefix); then the prompt's blocks are cached."""
        cached = sum(tokens for _, tokens in itertools.takewhile(lambda b: b[0] in self._blocks, blocks))
        for key, tokens in blocks:
            if key in self._blocks:
                self._blocks.move_to_end(key)
            else:
                self._blocks[key] = tokens
                self._size += tokens
        while self._size > self.capacity and self._blocks:
            _, tokens = self._blocks.popitem(last=False)
            self._size -= tokens
        return cached


# ----------------------------------------------------------------------------- a broken server
@dataclass(frozen=True)
class Misbehaviour:
    """What a broken server does, for client tests: the first ``busy`` chat requests are refused
    with 429 and ``Retry-After: retry_after``; the first ``null_replies`` completions carry
    ``content: null``; ``trickle_s`` > 0 sends every chat response one byte at a time, that many
    seconds apart (each read makes progress, the reply never ends in time)."""

    busy: int = 0
    retry_after: str = "1"
    null_replies: int = 0
    trickle_s: float = 0.0


# ----------------------------------------------------------------------------- HTTP
class FakeOpenAIServer:
    """``with FakeOpenAIServer(latency_s=0.5) as srv: srv.base_url`` — serves in a daemon thread.

    Harness options: ``reply`` builds the text from the request body (default: ``reply_text``);
    ``strict_model`` answers 404 to a request for another model, as vLLM does; ``die_after=N``
    behaves like a server killed mid-run: after N answered completions the next request gets no
    response at all and the listener closes (clients see a transport error, then refusal);
    ``max_model_len`` is listed on ``/v1/models`` as vLLM lists its ``--max-model-len``;
    ``cost`` (a ``ServerModel``) adds the prefix cache, the token costs and the batch limit;
    ``misbehave`` (a ``Misbehaviour``) breaks it. ``arrivals`` holds the ``time.monotonic()`` of
    every chat request received, refused ones included.
    """

    def __init__(
        self,
        latency_s: float = 0.5,
        model: str = "fake-model",
        reply_text: str = "A",
        host: str = LOOPBACK,
        port: int = 0,
        record: bool = False,
        reply: Callable[[Mapping[str, Any]], str] | None = None,
        strict_model: bool = False,
        die_after: int | None = None,
        max_model_len: int | None = None,
        cost: ServerModel | None = None,
        misbehave: Misbehaviour | None = None,
    ) -> None:
        if host not in (LOOPBACK, "localhost"):
            raise ValueError(f"the fake server listens on loopback only, not {host!r}")
        if latency_s < 0:
            raise ValueError(f"latency_s must be >= 0, got {latency_s}")
        self.latency_s, self.model, self.reply_text = float(latency_s), model, reply_text
        self.host, self.port = LOOPBACK, int(port)
        self.stats = LoadStats()
        self.record = record
        self.recorded: list[Any] = []
        self.reply, self.strict_model, self.die_after = reply, strict_model, die_after
        self.completions = 0  # chat requests answered with 200
        self.max_model_len = max_model_len  # listed on /v1/models as vLLM does (None: not listed)
        self.cost = cost or ServerModel()
        self.misbehave = misbehave or Misbehaviour()
        self.arrivals: list[float] = []
        self.prefix_cache = PrefixCache(self.cost.prefix_cache_tokens)
        self.tokens = {"prompt": 0, "cached": 0, "completion": 0}
        self.busy_s = 0.0  # seconds of modelled service: a batch slot is held this long in all
        self._batch: asyncio.Semaphore | None = None  # made in the server's loop
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def root_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # lifecycle -------------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(target=self._serve_thread, name="fake-openai-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10) or self._error is not None:
            raise RuntimeError(f"fake OpenAI server did not start: {self._error}")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._server is not None and self._loop.is_running():
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop)
        if self._thread is not None:
            self._thread.join(timeout=10)

    async def _shutdown(self) -> None:
        """Close the listener and the open keep-alive connections, then stop the loop."""
        assert self._server is not None
        self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        asyncio.get_running_loop().stop()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _serve_thread(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            self._server = loop.run_until_complete(asyncio.start_server(self._handle, self.host, self.port))
            self.port = self._server.sockets[0].getsockname()[1]
        except BaseException as exc:
            self._error = exc
        finally:
            self._ready.set()
        if self._error is None:
            loop.run_forever()
        loop.close()

    # connection ----------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            # HTTP/1.1 keep-alive: one request after the other on this connection
            while (request := await _read_request(reader)) is not None:
                method, path, body = request
                if self._killed(method, path):
                    break  # no response; the listener is closed as well
                status, payload = await self._route(method, path, body)
                data = json.dumps(payload).encode()
                retry_after = f"Retry-After: {self.misbehave.retry_after}\r\n" if status == 429 else ""
                head = (
                    f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(data)}\r\n{retry_after}Connection: keep-alive\r\n\r\n"
                )
                trickle = self.misbehave.trickle_s if path.startswith("/v1/chat") else 0.0
                await _send(writer, head.encode() + data, trickle)
        except (ConnectionError, asyncio.IncompleteReadError, _BadRequest):
            pass
        finally:
            writer.close()

    def _killed(self, method: str, path: str) -> bool:
        chat = method == "POST" and path.startswith("/v1/chat")
        if not chat or self.die_after is None or self.completions < self.die_after:
            return False
        if self._server is not None:
            self._server.close()
        return True

    async def _route(self, method: str, path: str, body: bytes) -> tuple[int, Any]:
        path = path.split("?", 1)[0].rstrip("/")
        if method == "GET" and path == "/v1/models":
            card: dict[str, Any] = {"id": self.model, "object": "model", "owned_by": "fake"}
            if self.max_model_len is not None:
                card["max_model_len"] = self.max_model_len
            return 200, {"object": "list", "data": [card]}
        if method == "GET" and path == "/stats":
            tokens = {f"{k}_tokens": v for k, v in self.tokens.items()}
            return 200, {**self.stats.snapshot(), **tokens, "busy_s": self.busy_s}
        if method == "POST" and path == "/stats/reset":
            # counters from now on; the requests still in flight stay counted
            self.stats = LoadStats(in_flight=self.stats.in_flight, max_in_flight=self.stats.in_flight)
            self.recorded.clear()
            self.tokens, self.busy_s = dict.fromkeys(self.tokens, 0), 0.0
            return 200, {"ok": True}
        if method == "POST" and path == "/prefix_cache/reset":
            # forget every cached prefix (a restarted server); /stats/reset keeps them
            self.prefix_cache = PrefixCache(self.cost.prefix_cache_tokens)
            return 200, {"ok": True}
        if method == "GET" and path == "/recorded":
            return 200, self.recorded
        if method == "POST" and path == "/v1/chat/completions":
            return await self._chat(body)
        return 404, {"error": {"message": f"no route {method} {path}"}}

    async def _chat(self, raw: bytes) -> tuple[int, Any]:
        self.arrivals.append(time.monotonic())
        if len(self.arrivals) <= self.misbehave.busy:
            return 429, {"error": {"message": "server busy, retry later"}}
        self.stats.enter()
        try:
            try:
                body = json.loads(raw)
                if self.strict_model and body.get("model") != self.model:
                    return 404, {"error": {"message": f"The model `{body.get('model')}` does not exist."}}
                text = self.reply(body) if self.reply is not None else self.reply_text
                content = answer_for(body, text)
                blocks = list(prompt_blocks(body.get("messages", []), self.cost.image_tokens))
                if self.record:
                    self.recorded.append(body)
            except (ValueError, UnsupportedFormat, AttributeError, TypeError) as exc:
                return 400, {"error": {"message": f"bad request: {exc}"}}
            prompt, cached, completion = await self._serve(blocks, content)
            sent = None if self.completions < self.misbehave.null_replies else content
            self.completions += 1
            return 200, {
                "id": f"chatcmpl-fake-{self.stats.requests}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", self.model),
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": sent}, "finish_reason": "stop"}
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                    "prompt_tokens_details": {"cached_tokens": cached},
                },
            }
        finally:
            self.stats.leave()

    async def _serve(self, blocks: list[tuple[str, int]], content: str) -> tuple[int, int, int]:
        """Wait as the cost model says; (prompt, cached prompt, completion) tokens."""
        prompt = sum(t for _, t in blocks)
        completion = max(1, len(content) // 4)
        if self.cost.max_batch and self._batch is None:
            self._batch = asyncio.Semaphore(self.cost.max_batch)
        async with self._batch or contextlib.nullcontext():
            cached = self.prefix_cache.serve(blocks) if self.cost.prefix_cache_tokens else 0
            delay = (
                self.latency_s
                + (prompt - cached) * self.cost.prefill_s_per_token
                + completion * self.cost.decode_s_per_token
            )
            await asyncio.sleep(delay)
        self.busy_s += delay
        for key, n in (("prompt", prompt), ("cached", cached), ("completion", completion)):
            self.tokens[key] += n
        return prompt, cached, completion


async def _send(writer: asyncio.StreamWriter, data: bytes, trickle_s: float) -> None:
    """Write ``data`` at once, or one byte every ``trickle_s`` seconds."""
    for chunk in [data[i : i + 1] for i in range(len(data))] if trickle_s else [data]:
        writer.write(chunk)
        await writer.drain()
        if trickle_s:
            await asyncio.sleep(trickle_s)


class _BadRequest(Exception):
    pass


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, bytes] | None:
    line = await reader.readline()
    if not line:
        return None
    try:
        method, path, _ = line.decode("latin-1").split(" ", 2)
    except ValueError:
        raise _BadRequest(line[:80]) from None
    length = 0
    for _ in range(MAX_HEADER_LINES):
        header = await reader.readline()
        if header in (b"\r\n", b"\n", b""):
            break
        name, _, value = header.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    else:
        raise _BadRequest("too many header lines")
    if length > MAX_BODY:
        raise _BadRequest("body too large")
    body = await reader.readexactly(length) if length else b""
    return method.upper(), path, body


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--latency", type=float, default=0.5, help="seconds per request, whatever the load")
    p.add_argument("--model", default="fake-model")
    p.add_argument("--record", action="store_true", help="keep request bodies for GET /recorded")
    p.add_argument("--prefix-cache-tokens", type=int, default=0, help="prefix cache capacity (0: none)")
    p.add_argument("--prefill-s-per-token", type=float, default=0.0, help="cost of an uncached prompt token")
    p.add_argument("--decode-s-per-token", type=float, default=0.0, help="cost of a generated token")
    p.add_argument("--max-batch", type=int, default=None, help="requests served at once (more wait)")
    p.add_argument("--image-tokens", type=int, default=1024, help="prompt tokens of one image")
    p.add_argument("--first-option", action="store_true", help="answer 'Answer: X' for the first option")
    args = p.parse_args(argv)
    cost = ServerModel(**{f.name: getattr(args, f.name) for f in fields(ServerModel)})
    reply = first_option_answer if args.first_option else None
    server = FakeOpenAIServer(
        args.latency, args.model, port=args.port, record=args.record, cost=cost, reply=reply
    )
    with contextlib.suppress(KeyboardInterrupt), server:
        print(f"fake OpenAI server on {server.base_url} (latency {server.latency_s} s)", flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
