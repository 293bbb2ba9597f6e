"""Build the tiny random-weight Qwen2-VL test checkpoint (offline, seconds); prints its path.

.venv/bin/python scripts/make_tiny_model.py [OUT_DIR]   # default: $LEDGERMIND_CACHE/tiny-qwen2-vl
"""

from __future__ import annotations

import argparse
import time

from ledgermind.backends.tiny import TinySpec, build_tiny_qwen2_vl, tiny_model_dir


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out_dir", nargs="?", default=None, help=f"default: {tiny_model_dir()}")
    parser.add_argument("--seed", type=int, default=TinySpec.seed)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    path = build_tiny_qwen2_vl(args.out_dir, TinySpec(seed=args.seed))
    size_mb = sum(p.stat().st_size for p in path.iterdir()) / 1e6
    print(f"{path}  ({size_mb:.2f} MB, {time.perf_counter() - t0:.1f} s)")
