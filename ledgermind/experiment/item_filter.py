"""Run exactly the items a user names: ``item_ids=[id1,id2]`` or ``item_ids_file=PATH``.

Why this exists: debugging a result starts with rerunning the one item that failed, on any
benchmark, without editing data files. The filter runs after the benchmark's loader, so it works
for every loader (registered or ``_target_``), and an id the benchmark does not have is a user
mistake reported in one line (exit 2), never a silently empty run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ledgermind.benchmarks.item import Item
from ledgermind.errors import ConfigError, DataError

SHOWN_IDS = 5  # how many known ids an unknown-id error lists as examples


def requested_ids(cfg: Mapping[str, Any]) -> list[str] | None:
    """The ids asked for by ``item_ids`` and/or ``item_ids_file`` (None: no filter)."""
    raw, path = cfg.get("item_ids"), cfg.get("item_ids_file")
    if raw is None and not path:
        return None
    raw = [raw] if isinstance(raw, str | int) else raw
    if raw is not None and not isinstance(raw, Sequence):
        raise ConfigError(f"item_ids must be a list of item ids, got {raw!r}")
    ids = [str(x) for x in raw or []] + (read_ids_file(Path(str(path))) if path else [])
    if not ids:
        raise ConfigError("item_ids / item_ids_file select no item (empty list)")
    return list(dict.fromkeys(ids))


def read_ids_file(path: Path) -> list[str]:
    """One id per line; blank lines and ``#`` comments are skipped."""
    try:
        text = path.expanduser().read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"item_ids_file {path} cannot be read: {exc.strerror or exc}") from None
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]


def select_items(items: Sequence[Item], ids: Sequence[str], benchmark: str = "the benchmark") -> list[Item]:
    """The items with these ids, in benchmark order; any unknown id is one ``DataError`` line."""
    known = {it.id for it in items}
    unknown = [i for i in ids if i not in known]
    if unknown:
        examples = ", ".join(it.id for it in list(items)[:SHOWN_IDS])
        raise DataError(
            f"unknown item id(s) {', '.join(map(repr, unknown))} in {benchmark} ({len(items)} items; e.g. {examples})"
        )
    wanted = set(ids)
    return [it for it in items if it.id in wanted]
