"""Regenerate the bundled sample set: ``python scripts/make_sample_set.py [OUT_DIR]``.

Draws the sample images and writes ``items.jsonl`` (default: ``ledgermind/benchmarks/sample/``).
The output is deterministic; a test checks that the committed files match it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ledgermind.benchmarks.bundled_sample import SAMPLE_DIR, generate_sample_set


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", nargs="?", type=Path, default=SAMPLE_DIR)
    args = ap.parse_args(argv)
    records = generate_sample_set(args.out_dir)
    size = sum(p.stat().st_size for p in args.out_dir.glob("*.png"))
    print(f"wrote {len(records)} items and {size / 1024:.0f} KB of PNG to {args.out_dir}")
