"""Requests on the wire against a greedy server: byte-identical repeats and the census's count.

    python scripts/wire_check.py                                   # 8 gauges + 8 MMMU-Pro standard10
    python scripts/wire_check.py --benchmarks sample --limit 7     # the bundled sample set

Starts the request-logging fake OpenAI server (ledgermind.testing.fake_openai_server) in-process,
runs the agent through ``backend=vllm_server`` with ``cache.mode=off`` (every call reaches the
server) and prints, per benchmark, the requests received, how many were byte-identical repeats of
an earlier one (App. E.2: a re-invocation must change its request; want 0) and the census's
model-call count (want: equal to the requests received). Exit 1 when either property fails.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
from pathlib import Path

CONF = Path(__file__).resolve().parents[1] / "conf"


def check(benchmark: str, limit: int, url: str, out: Path, recorded: list, extra: list[str]) -> dict[str, int]:
    from hydra import compose, initialize_config_dir

    from ledgermind.experiment.app import run_experiment

    recorded.clear()
    overrides = [
        "backend=vllm_server", f"backend.base_urls=[{url}]", "backend.max_retries=0",
        "backend.served_model_name=fake-model", f"benchmark={benchmark}", f"limit={limit}", "logger=none",
        "progress=false", "cache.mode=off", f"output_dir={out / benchmark}", *extra,
    ]  # fmt: skip
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        metrics = run_experiment(compose("config", overrides=overrides))
    bodies = [json.dumps(b, sort_keys=True) for b in recorded]
    repeats = sum(n - 1 for n in collections.Counter(bodies).values() if n > 1)
    m = metrics["mechanisms"]
    return {"items": metrics["n_items"], "received": len(bodies), "identical": repeats,
            "census_model_calls": m["model_calls"], "skipped_identical": m["repair"]["skipped_identical"],
            "errors": metrics["errors"], "abstained": m["abstained"]}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--benchmarks", nargs="+", default=["gauges", "mmmu_pro_standard10"])
    p.add_argument("--limit", type=int, default=8)
    p.add_argument("overrides", nargs="*", help="extra Hydra overrides")
    args = p.parse_args(argv)
    from ledgermind.testing.fake_openai_server import FakeOpenAIServer

    ok = True
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(latency_s=0.0, record=True) as srv:
        for bench in args.benchmarks:
            row = check(bench, args.limit, srv.base_url, Path(tmp), srv.recorded, args.overrides)
            ok &= row["identical"] == 0 and row["census_model_calls"] == row["received"]
            print(bench, json.dumps(row), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
