#!/usr/bin/env python
"""Runner throughput against a GPU-like server: items/min, requests in flight, and the replay limit.

    python scripts/bench_runner.py                          # local fake server, 0.5 s latency
    python scripts/bench_runner.py --latency 0.5 --items 48 --concurrency 1 4 8 16
    python scripts/bench_runner.py --url http://gpu0:8000/v1 --model qwen2_5_vl_7b   # a real server
    python scripts/bench_runner.py --sweep-only              # OCR seconds per variant of a 2-variant sweep
    python scripts/bench_runner.py --servers 4 --servers-only  # 4 fake servers: a sweep under each routing

Without --url it starts ``ledgermind.testing.fake_openai_server`` on 127.0.0.1 in a subprocess:
every request takes --latency seconds whatever the load (the behaviour of a batching GPU server),
so the numbers measure the runner only. A warm-up pass fills the perception cache and records
the requests; each level then runs the same items in a fresh output dir (no response cache) and
a plain asyncio client replays the recorded requests at the same concurrency: "× replay" is the
runner's throughput over that limit. The sweep table runs two variants with a cold perception
cache and reports the OCR seconds of each (the second variant should have none).

``--servers N`` starts N fake servers with the GPU cost model (a prefix cache per server, a cost
per uncached prompt token and per generated token, a batch limit: ``--server-*`` options) and
runs the same sweep (``--server-variants``, default every Table 3 variant, one job after the
other sharing one response cache) four ways: on one server at ``--per-server`` items in flight,
then on all N at N × that, routed in rotation, least-loaded (each job balances its own items, as
one run does) and by rendezvous placement (every job agrees). Each sweep starts from empty
prefix caches that persist across its jobs, as running servers do, so the prefill that
placement saves across jobs shows. It reports items/min, the ratio to N × the one-server
throughput, the prompt tokens prefilled (not cached) and the prefix-hit rate (cached / prompt
tokens, from the servers' ``usage.prompt_tokens_details.cached_tokens``), and the prefill tokens
rendezvous saves against the other two. A first sweep fills the perception cache for every
variant. Extra Hydra overrides go after ``--``.

The multi-server table runs ``--server-items`` items (default: 8 per item slot of the N-server run,
8 × N × ``--per-server`` = 128 at 4 × 4), not ``--items``. Why: it measures how routing scales, so
the N-server run must be in steady state. At 48 items its 16 slots run 3 waves and the run ends when
the longest FULLPIPE chain ends (on average 2.6 × a DIRECT item, the longest 3.5 ×); list-scheduling the
measured item durations with this router bounds the ratio at 0.91 (48 items), 0.95 (96), 0.96 (128),
0.975 (192) — any runner overhead then pushes 48 items under 0.9 however well the items are routed.
The one-server run at 4 slots runs 4 × as many waves, so its own tail is small at any of these sizes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

import httpx
from hydra import compose, initialize_config_dir
from hydra.errors import HydraException

from ledgermind.backends.vllm_launch import free_port
from ledgermind.errors import UserError
from ledgermind.experiment.app import run_experiment
from ledgermind.experiment.variants import names as variant_names
from ledgermind.pipeline.config import register_schemas
from ledgermind.runs.results import read_results
from ledgermind.testing.counting_ocr import CountingRapidOCREngine
from ledgermind.testing.throughput_limit import replay_requests

CONF = Path(__file__).resolve().parents[1] / "conf"
COUNTING_OCR = "ledgermind.testing.counting_ocr.CountingRapidOCREngine"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--url", action="append", default=None, help="a running server (repeat for several); default: fake"
    )
    p.add_argument("--latency", type=float, default=0.5, help="fake server seconds per request")
    p.add_argument(
        "--model", default="tiny_qwen2_vl", help="conf/model option (only its name matters to the fake)"
    )
    p.add_argument("--benchmark", default="mmmu_pro_standard10", help="conf/benchmark option")
    p.add_argument(
        "--items",
        type=int,
        default=48,
        help="first N items of the benchmark (with 16, one 10-call chain bounds the whole run)",
    )
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8, 16], help="levels to compare")
    p.add_argument(
        "--sweep",
        nargs="*",
        default=["full", "no_ecc"],
        help="variants of the OCR-per-variant sweep ('' to skip)",
    )
    p.add_argument("--sweep-only", action="store_true", help="only the sweep table")
    p.add_argument(
        "--servers", type=int, default=0, help="N fake servers: a sweep under each routing policy (0: skip)"
    )
    p.add_argument("--servers-only", action="store_true", help="only the multi-server table")
    p.add_argument(
        "--server-variants",
        default=",".join(variant_names()),
        help="comma-separated ablations of the multi-server sweep (default: every conf/ablation variant)",
    )
    p.add_argument(
        "--server-items",
        type=int,
        default=None,
        help="items of the multi-server table (default: 8 per item slot, 8 × servers × per-server)",
    )
    p.add_argument("--per-server", type=int, default=4, help="items in flight per server (= its batch limit)")
    p.add_argument(
        "--server-inflight",
        type=int,
        default=None,
        help="items in flight of the N-server sweeps (default: N × --per-server, the servers' slots)",
    )
    p.add_argument(
        "--server-latency", type=float, default=0.1, help="fixed seconds per request of the cost model"
    )
    p.add_argument("--server-prefill-ms", type=float, default=0.5, help="ms per uncached prompt token")
    p.add_argument("--server-decode-ms", type=float, default=5.0, help="ms per generated token")
    p.add_argument("--server-image-tokens", type=int, default=1024, help="prompt tokens of one image")
    p.add_argument(
        "--server-cache-tokens", type=int, default=200_000, help="prefix cache capacity per server"
    )
    p.add_argument("overrides", nargs="*", help="extra Hydra overrides (after --)")
    return p.parse_args(argv)


def _key(override: str) -> str:
    return override.split("=", 1)[0].lstrip("+~")


def merge_overrides(defaults: list[str], user: list[str]) -> list[str]:
    """User overrides win; choosing another group option (``backend=x``) also drops our ``backend.*``."""
    keys = {_key(o) for o in user}
    kept = [d for d in defaults if _key(d) not in keys and _key(d).split(".")[0] not in keys]
    return kept + user


def run_level(overrides: list[str], concurrency: int, out_dir: Path) -> dict[str, float]:
    level = [f"concurrency={concurrency}", f"output_dir={out_dir}"]
    if not any(_key(o) == "backend" and o.split("=", 1)[1] != "vllm_server" for o in overrides):
        level.append(f"backend.concurrency={max(concurrency, 1)}")  # the client's request limit follows
    register_schemas()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=[*overrides, *level])
    cpu0 = time.process_time()
    metrics = run_experiment(cfg)
    cpu_s = time.process_time() - cpu0  # all threads of this process; not inflated by waiting for a core
    wall = float(metrics["wall_time_s"])
    calls = [r.model_calls for r in read_results(out_dir)]
    return {
        "concurrency": concurrency,
        "items": metrics["n_items"],
        "run_s": wall,
        "errors": metrics["errors"],
        "items_per_min": 60.0 * metrics["n_items"] / wall if wall else float("nan"),
        "calls": calls,
        "cpu_s": cpu_s,
    }


def item_parallel_bound_s(calls: list[int], concurrency: int, latency: float) -> float:
    """A lower bound on the wall time of any runner that keeps ``concurrency`` items in flight, each
    making its model calls one after the other: the longest item, or all calls spread over the slots."""
    return latency * max(max(calls, default=0), sum(calls) / concurrency)


# ----------------------------------------------------------------------------- the fake server
@contextlib.contextmanager
def fake_server(latency: float, extra: list[str] | None = None) -> Iterator[str]:
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "ledgermind.testing.fake_openai_server",
        "--port",
        str(port),
        "--latency",
        str(latency),
        "--record",
        *(extra or []),
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(CONF.parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(100):  # bounded: 10 s
            if proc.poll() is not None:
                raise RuntimeError(f"fake server exited: {proc.stderr.read().decode()[-500:]}")  # type: ignore[union-attr]
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                    break
            time.sleep(0.1)
        else:
            raise RuntimeError("fake server did not answer /v1/models within 10 s")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def server_call(url: str, method: str, route: str) -> object:
    root = url.removesuffix("/v1")
    resp = httpx.request(method, f"{root}{route}", timeout=60)
    resp.raise_for_status()
    return resp.json()


# ----------------------------------------------------------------------------- the two tables
def throughput_table(args: argparse.Namespace, base: list[str], url: str, tmp: Path, fake: bool) -> None:
    warm = [*base, f"perception.cache_dir={tmp / 'perception'}"]
    if fake:
        server_call(url, "POST", "/stats/reset")
    t0 = time.perf_counter()
    run_level(warm, 8, tmp / "warmup")
    print(f"warm-up (fills the perception cache): {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    bodies = server_call(url, "GET", "/recorded") if fake else []
    rows = []
    for c in args.concurrency:
        if fake:
            server_call(url, "POST", "/stats/reset")
        row = run_level(warm, c, tmp / f"c{c}")
        if fake:
            stats = server_call(url, "GET", "/stats")
            row["in_flight"] = stats["mean_in_flight"] * stats["seconds"] / row["run_s"]  # type: ignore[index]
            row["requests"] = stats["requests"]  # type: ignore[index]
            if bodies:  # an agent that never calls the server leaves nothing to replay
                replay_s = asyncio.run(replay_requests(url, bodies, c))  # type: ignore[arg-type]
                row["replay_items_per_min"] = 60.0 * row["items"] / replay_s
            row["bound_s"] = item_parallel_bound_s(row["calls"], c, args.latency)  # type: ignore[arg-type]
        rows.append(row)
        print(f"concurrency {c}: {row['items_per_min']:.1f} items/min", file=sys.stderr)
    print(
        f"\nrunner vs server: {args.items} items of {args.benchmark}, perception cache warm, "
        f"{f'fake server latency {args.latency:.2f} s' if fake else url}\n"
    )
    print(
        "| concurrency | items | run s | items/min | × c=first | mean in flight | requests | replay items/min | × replay "
        "| item-parallel bound s | bound / run | CPU s incl. setup | errors |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    first = rows[0]["items_per_min"]
    for r in rows:
        replay = r.get("replay_items_per_min", float("nan"))
        print(
            f"| {r['concurrency']} | {r['items']} | {r['run_s']:.1f} | {r['items_per_min']:.1f} | "
            f"{r['items_per_min'] / first:.2f} | {r.get('in_flight', float('nan')):.2f} | {r.get('requests', '-')} | "
            f"{replay:.1f} | {r['items_per_min'] / replay:.2f} | {r.get('bound_s', float('nan')):.1f} | "
            f"{r.get('bound_s', float('nan')) / r['run_s']:.2f} | {r['cpu_s']:.1f} | {r['errors']} |"
        )
    calls = rows[0]["calls"]
    print(
        f"\nmodel calls per item: {sorted(calls)} (the replay client has no per-item order to respect; "
        "the item-parallel bound is the best an item-concurrent runner can do)"
    )
    if any(r["errors"] for r in rows):
        print("note: items with errors finish fast and inflate items/min", file=sys.stderr)


def sweep_table(args: argparse.Namespace, base: list[str], tmp: Path) -> None:
    """Each variant builds its own tools and engine (as in a multirun); only the disk cache is shared."""
    cache = tmp / "sweep-perception"
    rows = []
    for variant in [v for v in args.sweep if v]:
        CountingRapidOCREngine.reset()
        overrides = [
            *base,
            f"+ablation={variant}",
            f"perception.cache_dir={cache}",
            f"perception.ocr._target_={COUNTING_OCR}",
        ]
        row = run_level(overrides, 8, tmp / f"sweep-{variant}")
        rows.append((variant, row, CountingRapidOCREngine.calls, CountingRapidOCREngine.seconds))
    print(f"\nsweep: {args.items} items, concurrency 8, perception cache cold before the first variant\n")
    print("| variant | run s | items/min | OCR recognitions | OCR s |")
    print("|---|---|---|---|---|")
    for variant, row, calls, secs in rows:
        print(f"| {variant} | {row['run_s']:.1f} | {row['items_per_min']:.1f} | {calls} | {secs:.2f} |")


def cost_args(args: argparse.Namespace) -> list[str]:
    return [
        "--prefix-cache-tokens",
        str(args.server_cache_tokens),
        "--prefill-ms-per-token",
        str(args.server_prefill_ms),
        "--decode-ms-per-token",
        str(args.server_decode_ms),
        "--max-batch",
        str(args.per_server),
        "--image-tokens",
        str(args.server_image_tokens),
    ]


ROUTINGS = ("rotation", "least_loaded", "rendezvous")  # the N-server sweeps, compared in this order


def routed_sweep(
    base: list[str], urls: list[str], routing: str, slots: tuple[int, int], variants: list[str], out: Path
) -> dict:
    """One sweep of ``variants`` over ``urls`` (each job a run, one after the other, sharing one
    response cache as ``cache.scope=sweep`` does), from servers whose prefix caches start empty and
    persist across the jobs; the servers' token counters give the prefill paid and saved."""
    for url in urls:
        server_call(url, "POST", "/prefix_cache/reset")
        server_call(url, "POST", "/stats/reset")
    concurrency, per_server = slots
    over = merge_overrides(
        base,
        [
            f"backend.base_urls=[{','.join(urls)}]",
            f"backend.routing={routing}",
            f"backend.per_server_concurrency={per_server}",
            "cache.mode=readwrite",
            f"cache.path={out / 'responses.sqlite'}",
        ],
    )
    jobs = [run_level([*over, f"+ablation={v}"], concurrency, out / v) for v in variants]
    stats = [server_call(url, "GET", "/stats") for url in urls]
    prompt = sum(int(st["prompt_tokens"]) for st in stats)  # type: ignore[index]
    cached = sum(int(st["cached_tokens"]) for st in stats)  # type: ignore[index]
    run_s, items = sum(j["run_s"] for j in jobs), sum(j["items"] for j in jobs)
    return {
        "routing": routing,
        "servers": len(urls),
        "concurrency": concurrency,
        "run_s": run_s,
        "items_per_min": 60.0 * items / run_s if run_s else float("nan"),
        "prompt": prompt,
        "cached": cached,
        "paid": prompt - cached,
        "requests": [int(st["requests"]) for st in stats],  # type: ignore[index]
        "cpu_s": sum(j["cpu_s"] for j in jobs),
        "errors": sum(j["errors"] for j in jobs),
    }


WAVES = 8  # items per item slot of the N-server run: enough for steady state (see the module docstring)


def server_items(args: argparse.Namespace) -> int:
    return args.server_items or WAVES * args.servers * args.per_server


def servers_table(args: argparse.Namespace, base: list[str], tmp: Path, urls: list[str]) -> None:
    """The same sweep on one server, then on N servers under each routing policy."""
    items, c, n = server_items(args), args.per_server, len(urls)
    variants = [v for v in args.server_variants.split(",") if v]
    own = [*merge_overrides(base, [f"limit={items}"]), f"perception.cache_dir={tmp / 'perception'}"]
    warm = merge_overrides(own, args.overrides)  # a perception.cache_dir given after -- is kept
    # fills the perception cache for every variant, so that no measured sweep pays for OCR
    routed_sweep(warm, urls, "rendezvous", (n * c, c), variants, tmp / "servers-warmup")
    one = routed_sweep(warm, urls[:1], "rendezvous", (c, c), variants, tmp / "one")
    slots = (args.server_inflight or n * c, c)
    rows = [one, *(routed_sweep(warm, urls, r, slots, variants, tmp / f"servers-{r}") for r in ROUTINGS)]
    print(
        f"\n{n} fake servers vs one: a {len(variants)}-variant sweep ({', '.join(variants)}) over {items} items of "
        f"{args.benchmark}, one response cache per sweep, prefix caches empty at the start of each sweep and kept "
        f"across its jobs; {c} items in flight per server (= batch limit), latency {args.server_latency} s + "
        f"{args.server_prefill_ms} ms/uncached prompt token + {args.server_decode_ms} ms/generated token, "
        f"image = {args.server_image_tokens} tokens, prefix cache {args.server_cache_tokens} tokens/server\n"
    )
    print(
        "| servers | routing | items in flight | sweep s | items/min | ÷ (N × one server) | prompt tokens "
        "| prefill paid | prefix-hit rate | requests per server | runner CPU s | errors |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = r["items_per_min"] / (r["servers"] * one["items_per_min"])
        print(
            f"| {r['servers']} | {r['routing'] if r['servers'] > 1 else '-'} | {r['concurrency']} | {r['run_s']:.1f} | "
            f"{r['items_per_min']:.1f} | {ratio:.2f} | {r['prompt']} | {r['paid']} | "
            f"{100 * r['cached'] / max(r['prompt'], 1):.1f} % | {r['requests']} | {r['cpu_s']:.1f} | {r['errors']} |"
        )
    placed = rows[-1]
    for other in rows[1:-1]:
        saved = other["paid"] - placed["paid"]
        print(
            f"rendezvous vs {other['routing']}: {saved} prefill tokens saved "
            f"({100 * saved / max(other['paid'], 1):.1f} % of what {other['routing']} prefilled)"
        )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    defaults = [
        f"model={args.model}",
        "backend=vllm_server",
        f"benchmark={args.benchmark}",
        f"limit={args.items}",
        "logger=none",
        "progress=false",
        "cache.mode=off",
        "backend.max_retries=0",
    ]
    try:
        with (
            tempfile.TemporaryDirectory(prefix="ledgermind-bench-") as tmp_name,
            contextlib.ExitStack() as stack,
        ):
            tmp = Path(tmp_name)
            fake = not args.url
            urls = args.url or [stack.enter_context(fake_server(args.latency))]
            served = ["backend.served_model_name=fake-model"] if fake else []  # the fake server's model id
            base = merge_overrides(
                [*defaults, *served, f"backend.base_urls=[{','.join(urls)}]"], args.overrides
            )
            if args.servers and fake:
                servers = [
                    stack.enter_context(fake_server(args.server_latency, cost_args(args)))
                    for _ in range(args.servers)
                ]
                servers_table(args, base, tmp, servers)
            if args.servers_only:
                return 0
            if not args.sweep_only:
                throughput_table(args, base, urls[0], tmp, fake)
            if any(args.sweep):
                sweep_table(args, base, tmp)
    except (UserError, HydraException) as e:
        print(f"error: {str(e).strip().splitlines()[0]}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
