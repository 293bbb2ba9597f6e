#!/usr/bin/env python
"""Runner throughput: items per minute at several concurrency levels through one backend.

    python scripts/bench_runner.py --url http://127.0.0.1:8000/v1 --items 16 --concurrency 1 8
    python scripts/bench_runner.py --model qwen2_5_vl_7b --url http://gpu0:8000/v1 -- benchmark=mmmu_pro_standard10

Each level runs the same first N items in a fresh output dir (no resume, no response cache), so
the ratio measures what concurrent requests buy from the server's batching. Extra Hydra
overrides go after ``--``. Default URL: $LEDGERMIND_VLLM_URL, else http://127.0.0.1:8000/v1.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from hydra import compose, initialize_config_dir  # noqa: E402
from hydra.errors import HydraException  # noqa: E402

from ledgermind.errors import UserError  # noqa: E402
from ledgermind.experiment.app import run_experiment  # noqa: E402

CONF = Path(__file__).resolve().parents[1] / "conf"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", action="append", default=None, help="vLLM server base URL (repeat for several)")
    p.add_argument("--model", default="tiny_qwen2_vl", help="conf/model option served at --url")
    p.add_argument("--benchmark", default="mmmu_pro_standard10", help="conf/benchmark option")
    p.add_argument("--items", type=int, default=16, help="first N items of the benchmark")
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 8], help="levels to compare")
    p.add_argument("overrides", nargs="*", help="extra Hydra overrides (after --)")
    return p.parse_args(argv)


def _key(override: str) -> str:
    return override.split("=", 1)[0].lstrip("+~")


def merge_overrides(defaults: list[str], user: list[str]) -> list[str]:
    """User overrides win; choosing another group option (``backend=x``) also drops our ``backend.*``."""
    keys = {_key(o) for o in user}
    kept = [d for d in defaults if _key(d) not in keys and _key(d).split(".")[0] not in keys]
    return kept + user


def measure(overrides: list[str], concurrency: int, out_dir: Path) -> dict[str, float]:
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=[*overrides, f"concurrency={concurrency}", f"output_dir={out_dir}"])
    t0 = time.perf_counter()
    metrics = run_experiment(cfg)
    total = time.perf_counter() - t0
    n = metrics["n_items"]
    return {
        "concurrency": concurrency,
        "items": n,
        "run_s": metrics["wall_time_s"],
        "total_s": total,
        "items_per_min": 60.0 * n / metrics["wall_time_s"] if metrics["wall_time_s"] else float("nan"),
        "errors": metrics["errors"],
        "accuracy": metrics["accuracy"],
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    urls = args.url or [os.environ.get("LEDGERMIND_VLLM_URL", "http://127.0.0.1:8000/v1")]
    defaults = [
        f"model={args.model}",
        "backend=vllm_server",
        f"backend.base_urls=[{','.join(urls)}]",
        f"benchmark={args.benchmark}",
        f"limit={args.items}",
        "logger=none",
        "progress=false",
    ]
    overrides = merge_overrides(defaults, args.overrides)
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="ledgermind-bench-") as tmp:
            for c in args.concurrency:
                rows.append(measure(overrides, c, Path(tmp) / f"c{c}"))
                print(f"concurrency {c}: {rows[-1]['items_per_min']:.2f} items/min", file=sys.stderr)
    except (UserError, HydraException) as e:
        print(f"error: {str(e).strip().splitlines()[0]}", file=sys.stderr)
        return 2
    print(f"{'concurrency':>11} | {'items':>5} | {'run s':>8} | {'items/min':>9} | {'× vs first':>10} | errors")
    base = rows[0]["items_per_min"]
    for r in rows:
        print(
            f"{r['concurrency']:>11} | {r['items']:>5} | {r['run_s']:>8.1f} | {r['items_per_min']:>9.2f} | "
            f"{r['items_per_min'] / base:>10.2f} | {r['errors']}"
        )
    if any(r["errors"] for r in rows):
        print("note: items with errors finish fast and inflate items/min; check the server log", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
