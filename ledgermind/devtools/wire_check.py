"""Requests on the wire against a greedy server: byte-identical repeats and the census's count.

    python scripts/wire_check.py                                   # 8 gauges + 8 MMMU-Pro standard10
    python scripts/wire_check.py --benchmarks sample --limit 7     # the bundled sample set
    python scripts/wire_check.py --sweep-dir outputs/table3-sim/mmmu_pro   # a finished sweep (any backend)
    python scripts/wire_check.py --sweep --limit 8                 # 7-variant sweep, per-run vs shared cache
    python scripts/wire_check.py --sweep --servers 2 --scopes sweep --limit 30   # placement on two servers

``--sweep-dir`` reads every run below DIR (``trajectories/*.json``: each model call's request key
and whether the response cache answered it) and counts, across the whole sweep, the requests
made, the requests sent (not answered by the cache), the distinct requests, and the sent
requests that repeat one already sent by any run of the sweep (byte-identical on the wire: with
the sweep-shared cache, want 0). ``--sweep`` runs a 7-variant sweep (``ledgermind run -m``, the
basic launcher) against the request-logging fake server twice — ``cache.scope=run`` and
``cache.scope=sweep`` — and prints both counts plus the bodies the server received. With
``--servers N`` the sweep runs against N logging servers (``backend.base_urls``, the default
rendezvous placement) and each row also counts the requests per server and the first images
(a request's first image part: the item's image, or a crop of it) that reached more than one
server — want 0: every job sends an item to the same server, so each image is prefilled once.

Starts the request-logging fake OpenAI server (ledgermind.testing.fake_openai_server) in-process,
runs the agent through ``backend=vllm_server`` with ``cache.mode=off`` (every call reaches the
server) and prints, per benchmark, the requests received, how many were byte-identical repeats of
an earlier one (App. E.2: a re-invocation must change its request; want 0) and the census's
model-call count (want: equal to the requests received). Exit 1 when either property fails.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ledgermind.cli.commands import one_line_errors
from ledgermind.confutil import CONF_DIR
from ledgermind.experiment.variants import names as variant_names
from ledgermind.testing.fake_openai_server import FakeOpenAIServer, first_option_answer, image_key
from ledgermind.testing.fake_runs import fake_run_overrides, run_composed

REPO = CONF_DIR.parent


def check(benchmark: str, limit: int, srv: FakeOpenAIServer, out: Path, extra: list[str]) -> dict[str, int]:
    """One run of ``benchmark`` against the request-logging ``srv``: the requests it received, their
    byte-identical repeats and the census's model-call count."""
    srv.recorded.clear()
    overrides = [
        *fake_run_overrides([srv.base_url], benchmark, limit),
        "cache.mode=off",
        f"output_dir={out / benchmark}",
    ]
    metrics = run_composed([*overrides, *extra])
    wire = server_counts([srv.recorded])
    m = metrics["mechanisms"]
    return {
        "items": metrics["n_items"],
        "received": wire["received"],
        "identical": wire["identical_received"],
        "census_model_calls": m["model_calls"],
        "skipped_identical": m["repair"]["skipped_identical"],
        "errors": metrics["errors"],
        "abstained": m["abstained"],
    }


def sweep_counts(root: Path) -> dict[str, Any]:
    """Requests made / sent / distinct / repeated on the wire over every run below ``root``."""
    sent: list[str] = []
    made = hits = shared = runs = failed = 0
    for traj_dir in sorted(root.rglob("trajectories")):
        runs += 1
        for path in sorted(traj_dir.glob("*.json")):
            for call in json.loads(path.read_text()).get("model_calls", []):
                made += 1
                if call.get("cached"):
                    hits += 1
                    shared += (call.get("meta") or {}).get("cache") == "shared"
                elif call.get("error"):
                    failed += 1  # a server that failed (e.g. timed out) also moves its items elsewhere
                elif call.get("request_key"):
                    sent.append(call["request_key"])
    distinct = len(set(sent))
    return {
        "runs": runs,
        "made": made,
        "sent": len(sent),
        "cache_hits": hits,
        "shared_hits": shared,
        "distinct_sent": distinct,
        "identical_on_wire": len(sent) - distinct,
        "failed_calls": failed,
        "sent_per_made": round(len(sent) / made, 4) if made else None,
    }


def server_counts(recorded: list[list[Any]]) -> dict[str, Any]:
    """Bodies received by each server: how many, byte-identical repeats across all of them, and the
    first images (keyed as the server's prefix cache keys them) that reached more than one server."""
    bodies = [json.dumps(b, sort_keys=True) for received in recorded for b in received]
    servers_of: dict[bytes, set[int]] = collections.defaultdict(set)
    for index, received in enumerate(recorded):
        for body in received:
            parts = [
                p
                for m in body.get("messages", [])
                if isinstance(m.get("content"), list)
                for p in m["content"]
            ]
            first = next((p for p in parts if p.get("type") == "image_url"), None)
            if first is not None:
                servers_of[image_key(first)].add(index)
    return {
        "received": len(bodies),
        "identical_received": len(bodies) - len(set(bodies)),
        "requests_per_server": [len(received) for received in recorded],
        "first_images": len(servers_of),
        "first_images_on_several_servers": sum(len(s) > 1 for s in servers_of.values()),
    }


def run_sweep(out: Path, overrides: list[str]) -> None:
    """One Hydra multirun through ``ledgermind run -m`` (the basic launcher), in a subprocess."""
    cmd = [sys.executable, "-m", "ledgermind", "run", "-m", f"hydra.sweep.dir={out}", *overrides]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode not in (0, 3):  # 3: some items failed (counted in the runs)
        raise SystemExit(f"sweep failed (exit {proc.returncode}): {proc.stderr.strip()[-800:]}")


def sweep_check(args: argparse.Namespace) -> int:
    """Per-run vs sweep-shared cache on ``--servers`` request-logging fake servers."""
    ok = True
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        servers = [
            stack.enter_context(FakeOpenAIServer(latency_s=0.0, record=True, reply=first_option_answer))
            for _ in range(args.servers)
        ]
        totals: dict[str, list[int]] = {scope: [0] * len(servers) for scope in args.scopes}
        for bench in args.benchmarks:
            for scope in args.scopes:
                for srv in servers:
                    srv.recorded.clear()
                out = Path(tmp) / scope / bench
                run_sweep(
                    out,
                    [
                        *fake_run_overrides([srv.base_url for srv in servers], bench, args.limit),
                        "backend.connect_timeout_s=60",  # a busy machine must not fail a server over
                        "cache.mode=readwrite",
                        f"cache.scope={scope}",
                        f"+ablation={args.variants}",
                        *args.overrides,
                    ],
                )
                row = {**sweep_counts(out), **server_counts([s.recorded for s in servers])}
                totals[scope] = [
                    t + n for t, n in zip(totals[scope], row["requests_per_server"], strict=True)
                ]
                if scope == "sweep":
                    ok &= row["identical_received"] == 0 and row["identical_on_wire"] == 0
                ok &= row["first_images_on_several_servers"] == 0
                print(bench, f"cache.scope={scope}", json.dumps(row), flush=True)
        for scope, per_server in totals.items():
            spread = 1 - min(per_server) / max(per_server) if max(per_server) else 0.0
            print(
                f"all benchmarks, cache.scope={scope}: requests per server {per_server}, spread {spread:.1%}"
            )
    return 0 if ok else 1


@one_line_errors
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--benchmarks", nargs="+", default=["gauges", "mmmu_pro_standard10"])
    p.add_argument("--limit", type=int, default=8)
    p.add_argument("--sweep", action="store_true", help="a 7-variant sweep, per-run vs sweep-shared cache")
    p.add_argument(
        "--variants", default=",".join(variant_names()), help="ablations of --sweep (default: all)"
    )
    p.add_argument("--servers", type=int, default=1, help="logging fake servers of --sweep (placement)")
    p.add_argument(
        "--scopes", nargs="+", default=["run", "sweep"], help="cache.scope values --sweep compares"
    )
    p.add_argument("--sweep-dir", nargs="+", type=Path, help="count the requests of finished sweeps")
    p.add_argument("overrides", nargs="*", help="extra Hydra overrides")
    args = p.parse_args(argv)
    if args.sweep_dir:
        for root in args.sweep_dir:
            print(root, json.dumps(sweep_counts(root)), flush=True)
        return 0
    if args.sweep:
        return sweep_check(args)
    ok = True
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(latency_s=0.0, record=True) as srv:
        for bench in args.benchmarks:
            row = check(bench, args.limit, srv, Path(tmp), args.overrides)
            ok &= row["identical"] == 0 and row["census_model_calls"] == row["received"]
            print(bench, json.dumps(row), flush=True)
    return 0 if ok else 1
