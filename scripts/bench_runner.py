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

``--servers N`` starts N fake servers with the GPU cost model, each in its own process (a prefix
cache per server, ``--server-latency`` + a cost per uncached prompt token + a cost per generated
token per request, ``--per-server`` requests served at once: the ``--server-*`` options) and runs
one Table 3 sweep (``--server-variants``, default every variant, over ``--server-items`` items,
sharing one response cache as ``cache.scope=sweep`` does; its jobs one after the other as Hydra's
basic launcher runs them, or with ``--jobs concurrent`` all at once as a parallel launcher does)
on one server, then on all N (every item in flight, or ``--server-inflight``; the one-server sweep
keeps 1/N of that in flight, the same per server, so that under a static placement each server
has its own items queued and none idles while another's queue is long) routed in rotation,
least-loaded (each job balances its own items) and by rendezvous placement (every job agrees).
Each sweep starts from empty prefix caches that persist across its jobs, as running servers do,
so the prefill that placement saves across jobs shows. Per sweep: items/s and its ratio to N ×
the one-server items/s, the prompt tokens prefilled and the prefix-hit rate (from the servers'
``usage.prompt_tokens_details.cached_tokens``), and two lower bounds on its wall time from the
servers' modelled service seconds (``routed_sweep``). Two sweeps against an instant server come
first: one fills the perception cache, the other times the runner alone — the part of every
sweep that more servers cannot shorten. ``--bound-items`` simulates the ratio at the bounds for
other item counts from the one-server sweep's per-item work (``bound_ratios``). The modelled
costs are tens to hundreds of ms per request so that the runner's own CPU stays small against
them; where it does not (a loaded machine), the runner-alone time says so. Extra Hydra overrides
go after ``--``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

import httpx
import numpy as np
from hydra.errors import HydraException
from omegaconf import DictConfig

from ledgermind.backends.placement import place
from ledgermind.errors import UserError, first_line
from ledgermind.experiment.variants import names as variant_names
from ledgermind.markdown import md_table
from ledgermind.runs.reader import RunDir
from ledgermind.testing.counting_ocr import CountingRapidOCREngine
from ledgermind.testing.fake_runs import fake_run_overrides, run_composed
from ledgermind.testing.throughput_limit import replay_requests

COUNTING_OCR = "ledgermind.testing.counting_ocr.CountingRapidOCREngine"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", action="append", help="a running server (repeat for several); default: fake")
    p.add_argument("--latency", type=float, default=0.5, help="fake server seconds per request")
    p.add_argument("--model", default="tiny_qwen2_vl", help="conf/model option (the fake ignores it)")
    p.add_argument("--benchmark", default="mmmu_pro_standard10", help="conf/benchmark option")
    p.add_argument("--items", type=int, default=48, help="first N items of the benchmark")
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8, 16], help="levels to compare")
    p.add_argument("--sweep", nargs="*", default=["full", "no_ecc"], help="OCR-per-variant sweep ('' skips)")
    p.add_argument("--sweep-only", action="store_true", help="only the sweep table")
    p.add_argument("--servers", type=int, default=0, help="N fake servers: a sweep per routing (0: skip)")
    p.add_argument("--servers-only", action="store_true", help="only the multi-server table")
    p.add_argument(
        "--routings", nargs="+", default=["rotation", "least_loaded", "rendezvous"], help="N-server sweeps"
    )
    p.add_argument(
        "--jobs",
        choices=["sequential", "concurrent"],
        default="sequential",
        help="the sweep's jobs: one by one or all at once",
    )
    p.add_argument(
        "--bound-items", type=int, nargs="*", default=[], help="simulate the bounds at these sizes"
    )
    p.add_argument("--bound-epsilon", type=float, nargs="+", default=[0.1, 0.0], help="load_epsilon of that")
    p.add_argument("--bound-draws", type=int, default=400, help="port sets (and item draws) simulated")
    p.add_argument("--server-variants", default=",".join(variant_names()), help="ablations of that sweep")
    p.add_argument("--server-items", type=int, default=48, help="items of the multi-server sweep")
    p.add_argument("--per-server", type=int, default=2, help="requests a server serves at once")
    p.add_argument("--server-inflight", type=int, help="items in flight on N servers (default: all items)")
    p.add_argument("--server-latency", type=float, default=0.15, help="fixed seconds of a request")
    p.add_argument("--server-prefill-ms", type=float, default=0.75, help="ms per uncached prompt token")
    p.add_argument("--server-decode-ms", type=float, default=7.5, help="ms per generated token")
    p.add_argument("--server-image-tokens", type=int, default=1024, help="prompt tokens of one image")
    p.add_argument("--server-cache-tokens", type=int, default=200_000, help="prefix cache per server")
    p.add_argument("overrides", nargs="*", help="extra Hydra overrides (after --)")
    return p.parse_args(argv)


def _key(override: str) -> str:
    return override.split("=", 1)[0].lstrip("+~")


def merge_overrides(defaults: list[str], user: list[str]) -> list[str]:
    """User overrides win; choosing another group option (``backend=x``) also drops our ``backend.*``."""
    keys = {_key(o) for o in user}
    return [d for d in defaults if _key(d) not in keys and _key(d).split(".")[0] not in keys] + user


def level(overrides: list[str], concurrency: int, out_dir: Path) -> list[str]:
    """``overrides`` for a run of ``concurrency`` items in flight writing into ``out_dir``."""
    level = [f"concurrency={concurrency}", f"output_dir={out_dir}"]
    if not any(_key(o) == "backend" and o.split("=", 1)[1] != "vllm_server" for o in overrides):
        level.append(f"backend.concurrency={max(concurrency, 1)}")  # the client's request limit follows
    return [*overrides, *level]


def run_level(overrides: list[str], concurrency: int, out_dir: Path) -> dict:
    cpu0 = time.process_time()
    metrics = run_composed(level(overrides, concurrency, out_dir))
    wall = float(metrics["wall_time_s"])
    return {
        "concurrency": concurrency,
        "items": metrics["n_items"],
        "run_s": wall,
        "errors": metrics["errors"],
        "items_per_min": 60.0 * metrics["n_items"] / wall if wall else float("nan"),
        "calls": [r.model_calls for r in RunDir(out_dir).results()],
        "cpu_s": time.process_time() - cpu0,  # all threads of this process, setup included
    }


def item_parallel_bound_s(calls: list[int], concurrency: int, latency: float) -> float:
    """A lower bound on the wall time of any runner that keeps ``concurrency`` items in flight, each
    making its model calls one after the other: the longest item, or all calls spread over the slots."""
    return latency * max(max(calls, default=0), sum(calls) / concurrency)


@contextlib.contextmanager
def fake_server(latency: float, extra: list[str] | None = None) -> Iterator[str]:
    """A fake server in its own process (its CPU is not the runner's); its URL once it listens."""
    cmd = [
        sys.executable,
        "-m",
        "ledgermind.testing.fake_openai_server",
        "--record",
        "--latency",
        str(latency),
    ]
    path = os.pathsep.join([str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")])
    proc = subprocess.Popen(
        [*cmd, *(extra or [])], env={**os.environ, "PYTHONPATH": path}, stdout=subprocess.PIPE, text=True
    )
    try:
        ready = proc.stdout.readline()  # type: ignore[union-attr]  # "fake OpenAI server on URL (...)"
        if not ready.startswith("fake OpenAI server on "):
            raise RuntimeError(f"fake server did not start (exit {proc.wait()})")
        yield ready.split()[4]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def server_call(url: str, method: str, route: str) -> dict:
    resp = httpx.request(method, f"{url.removesuffix('/v1')}{route}", timeout=60)
    resp.raise_for_status()
    return resp.json()


def throughput_table(args: argparse.Namespace, base: list[str], url: str, tmp: Path, fake: bool) -> None:
    warm = [*base, f"perception.cache_dir={tmp / 'perception'}"]
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
            row |= {
                "in_flight": stats["mean_in_flight"] * stats["seconds"] / row["run_s"],
                "requests": stats["requests"],
            }
            if bodies:  # an agent that never calls the server leaves nothing to replay
                row["replay_items_per_min"] = (
                    60.0 * row["items"] / asyncio.run(replay_requests(url, bodies, c))
                )  # type: ignore[arg-type]
            row["bound_s"] = item_parallel_bound_s(row["calls"], c, args.latency)
        rows.append(row)
        print(f"concurrency {c}: {row['items_per_min']:.1f} items/min", file=sys.stderr)
    print(
        f"\nrunner vs server: {args.items} items of {args.benchmark}, perception cache warm, "
        f"{f'fake server latency {args.latency:.2f} s' if fake else url}\n"
    )
    head = "concurrency,items,run s,items/min,× c=first,mean in flight,requests,replay items/min,× replay"
    head += ",item-parallel bound s,bound / run,CPU s incl. setup,errors"
    nan, cells = float("nan"), []
    for r in rows:
        replay, bound = r.get("replay_items_per_min", nan), r.get("bound_s", nan)
        cells.append(
            [r["concurrency"], r["items"], f"{r['run_s']:.1f}", f"{r['items_per_min']:.1f}"]
            + [f"{r['items_per_min'] / rows[0]['items_per_min']:.2f}", f"{r.get('in_flight', nan):.2f}"]
            + [r.get("requests", "-"), f"{replay:.1f}", f"{r['items_per_min'] / replay:.2f}", f"{bound:.1f}"]
            + [f"{bound / r['run_s']:.2f}", f"{r['cpu_s']:.1f}", r["errors"]]
        )
    print("\n".join(md_table(head.split(","), cells, rest="---")))
    print(
        f"\nmodel calls per item: {sorted(rows[0]['calls'])} (the replay client has no per-item order to respect; "
        "the item-parallel bound is the best an item-concurrent runner can do)"
    )
    if any(r["errors"] for r in rows):
        print("note: items with errors finish fast and inflate items/min", file=sys.stderr)


def sweep_table(args: argparse.Namespace, base: list[str], tmp: Path) -> None:
    """Each variant builds its own tools and engine (as in a multirun); only the disk cache is shared."""
    rows = []
    for variant in [v for v in args.sweep if v]:
        CountingRapidOCREngine.reset()
        ocr = [f"perception.cache_dir={tmp / 'sweep-perception'}", f"perception.ocr._target_={COUNTING_OCR}"]
        row = run_level([*base, f"+ablation={variant}", *ocr], 8, tmp / f"sweep-{variant}")
        rows.append((variant, row, CountingRapidOCREngine.calls, CountingRapidOCREngine.seconds))
    print(f"\nsweep: {args.items} items, concurrency 8, perception cache cold before the first variant\n")
    head = ["variant", "run s", "items/min", "OCR recognitions", "OCR s"]
    cells = [
        (v, f"{row['run_s']:.1f}", f"{row['items_per_min']:.1f}", n, f"{s:.2f}") for v, row, n, s in rows
    ]
    print("\n".join(md_table(head, cells, rest="---")))


def cost_args(args: argparse.Namespace) -> list[str]:
    cost = {
        "prefix-cache-tokens": args.server_cache_tokens,
        "image-tokens": args.server_image_tokens,
        "prefill-s-per-token": args.server_prefill_ms / 1000,
        "decode-s-per-token": args.server_decode_ms / 1000,
        "max-batch": args.per_server,
    }
    return [arg for name, value in cost.items() for arg in (f"--{name}", str(value))]


def run_together(jobs: list[list[str]]) -> tuple[float, list[dict]]:
    """Every job at once, as a parallel launcher runs a sweep's jobs: each in its own thread with its
    own event loop, backend (client, router, response-cache connection) and agent. The configs are
    composed first (Hydra's compose is process-global). A barrier holds each job after its set-up
    (config, items, backend, agent): the span timed is from the moment every job is ready to the
    end of the last job's last item, as a job's ``wall_time_s`` is its items' span. Returns the span
    and each job's ``metrics.json``."""
    from ledgermind.experiment.app import configured_agent_factory, run_experiment
    from ledgermind.pipeline.config import compose

    cfgs = [compose(job) for job in jobs]
    gate, starts = threading.Barrier(len(cfgs)), [0.0] * len(cfgs)

    def run(i: int) -> dict:
        def gated(cfg: DictConfig, backend: Any) -> Any:
            agent = configured_agent_factory(cfg)(cfg, backend)
            gate.wait()
            starts[i] = time.perf_counter()
            return agent

        try:
            return run_experiment(cfgs[i], agent_factory=gated)
        except BaseException:
            gate.abort()  # the other jobs stop waiting (BrokenBarrierError) rather than hang
            raise

    with ThreadPoolExecutor(len(cfgs)) as pool:
        metrics = list(pool.map(run, range(len(cfgs))))
    return max(t + m["wall_time_s"] for t, m in zip(starts, metrics, strict=True)) - min(starts), metrics


def routed_sweep(
    base: list[str],
    urls: list[str],
    routing: str,
    slots: tuple[int, int],
    variants: list[str],
    out: Path,
    together: bool = False,
) -> dict:
    """One sweep of ``variants`` over ``urls`` (each job a run sharing one response cache, as
    ``cache.scope=sweep`` does; one job after the other, or all at once with ``together``), from
    servers whose prefix caches start empty and persist across the jobs; the servers' token
    counters give the prefill paid and saved.

    Two lower bounds on the sweep's wall time come from the servers' modelled service seconds
    (``busy_s``): ``balanced`` — every server's batch slots busy until the work ends — and
    ``busiest`` — the most loaded server busy until it ends; one after the other, per job (a job
    ends with its busiest server), all at once over the whole sweep. The sweep's time above
    ``busiest`` is idle server time: items that wait for the runner (its CPU), for a busy server
    while another is free (the runner's concurrency), or for a job's last chain (its tail).
    """
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
            "backend.connect_timeout_s=60",  # a busy machine must not fail a server over (and move its items)
            "cache.mode=readwrite",
            f"cache.path={out / 'responses.sqlite'}",
        ],
    )
    jobs = [level([*over, f"+ablation={v}"], concurrency, out / v) for v in variants]
    cpu0 = time.process_time()
    if together:
        run_s, metrics = run_together(jobs)
        busy = [[server_call(u, "GET", "/stats")["busy_s"] for u in urls]]  # the sweep is one span
    else:
        metrics, busy = [], []
        for job in jobs:
            before = [server_call(url, "GET", "/stats")["busy_s"] for url in urls]
            metrics.append(run_composed(job))
            busy.append(
                [server_call(u, "GET", "/stats")["busy_s"] - b for u, b in zip(urls, before, strict=True)]
            )
        run_s = sum(float(m["wall_time_s"]) for m in metrics)
    stats = [server_call(url, "GET", "/stats") for url in urls]
    prompt, cached = (sum(int(st[k]) for st in stats) for k in ("prompt_tokens", "cached_tokens"))
    items = sum(m["n_items"] for m in metrics)
    return {
        "routing": routing if len(urls) > 1 else "-",
        "servers": len(urls),
        "concurrency": concurrency,
        "run_s": run_s,
        "items_per_s": items / run_s if run_s else float("nan"),
        "paid": prompt - cached,
        "hit": cached / max(prompt, 1),
        "requests": [int(st["requests"]) for st in stats],
        "balanced_s": sum(map(sum, busy)) / (len(urls) * per_server),
        "busiest_s": sum(map(max, busy)) / per_server,
        "cpu_s": time.process_time() - cpu0,  # all threads of this process, set-up included
        "job_s": {v: float(m["wall_time_s"]) for v, m in zip(variants, metrics, strict=True)},
        "errors": sum(m["errors"] for m in metrics),
    }


def item_work_s(out: Path, variants: list[str], args: argparse.Namespace) -> list[list[float]]:
    """Per item, each job's modelled server seconds at the ``--server-*`` prices: its calls that
    reached a server (not answered by the response cache), less the prompt tokens the server's
    prefix cache held, as the fake server charges them."""
    work: dict[str, list[float]] = {}
    for j, v in enumerate(variants):
        run = RunDir(out / v)
        for t in run.trajectories([r.id for r in run.results()]):
            w = work.setdefault(t["item_id"], [0.0] * len(variants))
            for c in (c for c in t["model_calls"] if not c["cached"] and not c["error"]):
                uncached = c["prompt_tokens"] - c["meta"].get("cached_tokens", 0)
                ms = uncached * args.server_prefill_ms + c["completion_tokens"] * args.server_decode_ms
                w[j] += args.server_latency + ms / 1000
    return list(work.values())


def bound_ratios(work: list[list[float]], servers: int, items: int, epsilon: float, draws: int) -> np.ndarray:
    """The ratio at the bounds of rendezvous placement, jobs one after the other and all at once,
    for ``draws`` sweeps of ``items`` items drawn from ``work`` (each item's seconds per job) on
    servers at random ports (the ports decide where the heavy items land): total work ÷ (servers ×
    the bound), the bound being the sum over jobs of each job's busiest server, or the busiest
    server over all jobs. Shape (draws, 2)."""
    rng = np.random.default_rng(0)
    ratios = np.empty((draws, 2))
    for d in range(draws):
        ports = rng.choice(np.arange(1024, 65536), servers, replace=False)
        urls = [f"http://127.0.0.1:{p}/v1" for p in ports]
        keys = [f"{k:016x}" for k in rng.integers(0, 2**63, items)]
        owner = place(keys, urls, epsilon)
        load = np.zeros((servers, len(work[0])))
        for key, i in zip(keys, rng.integers(0, len(work), items), strict=True):
            load[urls.index(owner[key][0])] += work[i]
        ratios[d] = load.sum() / (servers * np.array([load.max(0).sum(), load.sum(1).max()]))
    return ratios


def bounds_table(work: list[list[float]], args: argparse.Namespace) -> None:
    print(
        f"\nratio at the bounds, {args.bound_draws} draws of the ports and of items from the one-server "
        f"sweep's per-item work (rendezvous, {args.servers} servers): mean (10th–90th percentile)\n"
    )
    rows = []
    for items in args.bound_items:
        for eps in args.bound_epsilon:
            r = bound_ratios(work, args.servers, items, eps, args.bound_draws)
            spans = zip(r.mean(0), *np.percentile(r, [10, 90], 0))
            rows.append([items, eps, *(f"{m:.2f} ({lo:.2f}–{hi:.2f})" for m, lo, hi in spans)])
    head = ["items a job", "ε", "jobs one after the other", "jobs all at once"]
    print("\n".join(md_table(head, rows, rest="---")))


def servers_table(
    args: argparse.Namespace, base: list[str], tmp: Path, urls: list[str], instant: str
) -> None:
    """The same sweep on one server, then on N servers under each routing policy; first twice
    against an instant server: to fill the perception cache, then to time the runner alone."""
    items, c, n = args.server_items, args.per_server, len(urls)
    variants = [v for v in args.server_variants.split(",") if v]
    warm = merge_overrides(base, [f"limit={items}"])  # the config's perception cache: the warm-up fills it
    slots = (args.server_inflight or items, c)  # one server: the same items in flight per server
    unlimited, together = (slots[0], slots[0]), args.jobs == "concurrent"
    routed_sweep(warm, [instant], "rendezvous", unlimited, variants, tmp / "servers-warmup")
    sweep = functools.partial(routed_sweep, warm, variants=variants, together=together)
    alone = sweep([instant], "rendezvous", unlimited, out=tmp / "runner-alone")
    one = sweep(urls[:1], "rendezvous", (max(1, slots[0] // n), c), out=tmp / "one")
    rows = [one, *(sweep(urls, r, slots, out=tmp / f"servers-{r}") for r in args.routings)]
    work = item_work_s(tmp / "one", variants, args)
    print(
        f"\n{n} fake servers vs one: a {len(variants)}-variant sweep ({', '.join(variants)}; its jobs "
        f"{'all at once' if together else 'one after the other'}) over {items} items of "
        f"{args.benchmark}, one response cache per sweep, prefix caches empty at the start of each sweep and kept "
        f"across its jobs; {c} requests served at once per server (more wait), {args.server_latency} s + "
        f"{args.server_prefill_ms} ms/uncached prompt token + {args.server_decode_ms} ms/generated token per "
        f"request, image = {args.server_image_tokens} tokens, prefix cache {args.server_cache_tokens} tokens/server; "
        f"the runner alone (instant server, {slots[0]} items in flight a job): {alone['run_s']:.1f} s, "
        f"{alone['items_per_s']:.1f} items/s\n"
    )
    print(
        "| servers | routing | items in flight a job | sweep s | items/s | ÷ (N × one server) | prefill paid | prefix-hit rate "
        "| requests per server | balanced bound s | busiest-server bound s | ratio at the bounds | runner CPU s | errors |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['servers']} | {r['routing']} | {r['concurrency']} | {r['run_s']:.1f} | {r['items_per_s']:.2f} | "
            f"{r['items_per_s'] / (r['servers'] * one['items_per_s']):.2f} | {r['paid']} | {100 * r['hit']:.1f} % | "
            f"{' / '.join(map(str, r['requests']))} | {r['balanced_s']:.1f} | {r['busiest_s']:.1f} | "
            f"{one['balanced_s'] / (r['servers'] * r['busiest_s']):.2f} | {r['cpu_s']:.1f} | {r['errors']} |"
        )
    placed = rows[-1]  # the last routing (rendezvous) against the others
    print(
        f"\n{placed['routing']}: {placed['items_per_s'] / (n * one['items_per_s']):.2f} of {n} × one server measured, "
        f"{one['balanced_s'] / (n * placed['busiest_s']):.2f} at the bounds, "
        f"{one['run_s'] / (n * alone['run_s']):.2f} at the runner alone's {alone['run_s']:.1f} s (no N-server sweep is faster)"
    )
    per_job = (f"{v} {one['job_s'][v] / (n * s):.2f}" for v, s in placed["job_s"].items())
    print(f"per job (one server's seconds ÷ (N × these)): {', '.join(per_job)}")
    for other in rows[1:-1]:
        saved = other["paid"] - placed["paid"]
        print(
            f"{placed['routing']} vs {other['routing']}: {saved} prefill tokens saved "
            f"({100 * saved / max(other['paid'], 1):.1f} % of what {other['routing']} prefilled)"
        )
    print(
        f"the one-server sweep's work from its trajectories: {sum(map(sum, work)):.1f} s over {len(work)} items "
        f"(its server's busy_s: {one['balanced_s'] * c:.1f} s)"
    )
    if args.bound_items:
        bounds_table(work, args)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        with (
            tempfile.TemporaryDirectory(prefix="ledgermind-bench-") as tmp_name,
            contextlib.ExitStack() as stack,
        ):
            tmp, fake = Path(tmp_name), not args.url
            urls = args.url or [stack.enter_context(fake_server(args.latency))]
            real = [] if fake else ["backend.served_model_name=null"]  # a real server names its own model
            ours = [
                *fake_run_overrides(urls, args.benchmark, args.items),
                f"model={args.model}",
                "cache.mode=off",
            ]
            base = merge_overrides(ours, [*real, *args.overrides])
            if args.servers and fake:
                servers = [
                    stack.enter_context(fake_server(args.server_latency, cost_args(args)))
                    for _ in range(args.servers)
                ]
                servers_table(args, base, tmp, servers, stack.enter_context(fake_server(0.0)))
            if args.servers_only:
                return 0
            if not args.sweep_only:
                throughput_table(args, base, urls[0], tmp, fake)
            if any(args.sweep):
                sweep_table(args, base, tmp)
    except (UserError, HydraException) as e:
        print(f"error: {first_line(e)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
