"""One canonical text of a run tree's outputs, to show that a refactor changed nothing.

    python scripts/output_digest.py DIR [DIR ...] > digest.txt
    diff before.txt after.txt        # empty: the outputs are byte-identical up to timing

For every run directory below DIR it prints, in path order, ``results.jsonl`` (rows by id: items
finish in any order under concurrency), every ``trajectories/*.json``, ``metrics.json`` and any
``table3.md`` / ``census.md``, with the wall-clock fields and the checkout's git state removed and, in trajectories, tool-call
ids renumbered in order of appearance (``ocr#166`` counts the process's earlier calls). Timing
and that counter are the only things a rerun of a fixed seed may change; nothing else may move.

``--without-cache`` also drops the response cache's markers (a call's ``cached`` flag and
``meta.cache``, the census's ``mechanisms.cache`` counters): a sweep with the per-run cache and one
with the sweep-shared cache (``cache.scope=run`` vs ``sweep``) must then give the same digest —
the shared cache changes which run paid for a request, never its answer.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ledgermind.jsonl import read_jsonl
from ledgermind.runs.files import METRICS_FILE, RESULTS_FILE, TRAJECTORY_DIR

# wall-clock fields: the only outputs a rerun of the same seed may change
TIMING_KEYS = frozenset(
    {
        "latency_s",
        "latency_s_per_item",
        "wall_time_s",
        "wall_time_total_s",
        "elapsed_s",
        "timings",
        "created_at",
    }
)
_CALL_ID = re.compile(r'"([a-z_]+)#(\d+)"')
VERBATIM = ("table3.md", "census.md")


def dropping(value: Any, drop: Callable[[str, str], bool], parent: str = "") -> Any:
    """``value`` without the keys for which ``drop(key, parent key)`` holds, recursively."""
    if isinstance(value, dict):
        return {k: dropping(v, drop, k) for k, v in value.items() if not drop(k, parent)}
    if isinstance(value, list):
        return [dropping(v, drop, parent) for v in value]
    return value


def is_cache_marker(key: str, parent: str) -> bool:
    """The response cache's markers: a call's ``cached`` flag, ``meta.cache``, ``mechanisms.cache``."""
    return key == "cached" or (key == "cache" and parent in ("meta", "mechanisms"))


def canonical(value: Any) -> str:
    return json.dumps(dropping(value, lambda k, _: k in TIMING_KEYS), sort_keys=True, ensure_ascii=False)


def renumbered_call_ids(text: str) -> str:
    """``"ocr#166"`` → ``"ocr#1"``…, numbered by first appearance within ``text``."""
    seen: dict[str, str] = {}

    def repl(m: re.Match[str]) -> str:
        return '"' + seen.setdefault(m.group(0), f"{m.group(1)}#{len(seen) + 1}") + '"'

    return _CALL_ID.sub(repl, text)


def digest(root: Path, cache_markers: bool = True) -> Iterator[str]:
    """The canonical lines of every output file under ``root``, each prefixed by its path."""
    keep = (lambda v: v) if cache_markers else (lambda v: dropping(v, is_cache_marker))
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if path.name == RESULTS_FILE:
            rows = [keep(row.value) for row in read_jsonl(path)]
            yield from (f"{rel}: {canonical(r)}" for r in sorted(rows, key=lambda r: str(r.get("id"))))
        elif path.suffix == ".json" and path.parent.name == TRAJECTORY_DIR:
            yield f"{rel}: {renumbered_call_ids(canonical(keep(json.loads(path.read_text(encoding='utf-8')))))}"
        elif path.name == METRICS_FILE:
            metrics = keep(json.loads(path.read_text(encoding="utf-8")))
            if isinstance(identity := metrics.get("identity"), dict):
                identity.pop("git", None)  # names the checkout, not a result: the commit and its dirty flag
            yield f"{rel}: {canonical(metrics)}"
        elif path.name in VERBATIM:
            yield from (f"{rel}: {line}" for line in path.read_text(encoding="utf-8").splitlines())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dirs", type=Path, nargs="+")
    p.add_argument(
        "--without-cache", action="store_true", help="drop the response cache's markers and counters"
    )
    args = p.parse_args(argv)
    for d in args.dirs:
        if not d.is_dir():
            print(f"output_digest: error: {d} is not a directory", file=sys.stderr)
            return 2
        for line in digest(d, cache_markers=not args.without_cache):
            print(line)
    return 0
