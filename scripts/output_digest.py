#!/usr/bin/env python
"""One canonical text of a run tree's outputs, to show that a refactor changed nothing (issue 28).

    python scripts/output_digest.py DIR [DIR ...] > digest.txt
    diff before.txt after.txt        # empty: the outputs are byte-identical up to timing

For every run directory below DIR (one with a ``results.jsonl``) it prints, in path order,
``results.jsonl`` and every ``trajectories/*.json`` with the per-call / per-item wall-clock fields
removed, ``metrics.json`` without its timing keys, and any ``table3.md`` / ``census.md`` verbatim.
Timing is the only thing a rerun of a fixed seed may change; everything else must not move.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# wall-clock fields: the only outputs a rerun of the same seed may change
TIMING_KEYS = frozenset({
    "latency_s", "latency_s_per_item", "wall_time_s", "wall_time_total_s", "elapsed_s", "timings",
})
VERBATIM = ("table3.md", "census.md")


def without_timing(value: Any) -> Any:
    """``value`` with every timing key removed, recursively."""
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def canonical(value: Any) -> str:
    return json.dumps(without_timing(value), sort_keys=True, ensure_ascii=False)


def digest(root: Path) -> Iterator[str]:
    """The canonical lines of every output file under ``root``, each prefixed by its path."""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if path.name == "results.jsonl" or (path.suffix == ".json" and path.parent.name == "trajectories"):
            text = path.read_text(encoding="utf-8")
            rows = [json.loads(line) for line in text.splitlines() if line.strip()] if path.suffix == ".jsonl" \
                else [json.loads(text)]
            yield from (f"{rel}: {canonical(r)}" for r in rows)
        elif path.name == "metrics.json":
            yield f"{rel}: {canonical(json.loads(path.read_text(encoding='utf-8')))}"
        elif path.name in VERBATIM:
            yield from (f"{rel}: {line}" for line in path.read_text(encoding="utf-8").splitlines())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dirs", type=Path, nargs="+")
    args = p.parse_args(argv)
    for d in args.dirs:
        if not d.is_dir():
            print(f"output_digest: error: {d} is not a directory", file=sys.stderr)
            return 2
        for line in digest(d):
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
