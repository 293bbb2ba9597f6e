"""Where one item's trajectory lives in a run folder, and reading it back.

``trajectories/<safe name>.json``: the id made safe for a file name (``safe_filename``, a hash
keeps distinct ids distinct).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ledgermind.runs.files import (
    TRAJECTORY_DIR,
    RunFileError,
    note,
    own_file,
    read_json_file,
)


def safe_filename(item_id: str) -> str:
    """The one file name of an id: readable, never escaping the directory, and injective.

    Ids come from datasets; ``q 1``, ``q_1`` and ``q/1`` must not share a trajectory or a report
    page, so the readable part carries a short hash of the exact id. Every reader and writer of
    per-item files goes through this function (or ``trajectory_path``).
    """
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", item_id).strip("._")[:160] or "item"
    digest = hashlib.sha256(item_id.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{readable}-{digest}"


def trajectory_path(out_dir: Path, item_id: str) -> Path:
    return Path(out_dir) / TRAJECTORY_DIR / f"{safe_filename(item_id)}.json"


def find_trajectory(out_dir: Path, item_id: str) -> Path | None:
    """The trajectory file of one id, or None; ``RunFileError`` when it links out of the folder."""
    return own_file(out_dir, trajectory_path(out_dir, item_id))


def read_trajectory_dict(out_dir: Path, item_id: str) -> dict[str, Any] | None:
    """The trajectory JSON object of one id (``find_trajectory``), or None when there is none;
    ``RunFileError`` when it is truncated, not an object, or a link out of the folder."""
    path = find_trajectory(out_dir, item_id)
    if path is None:
        return None
    data = read_json_file(path)
    if not isinstance(data, dict):
        raise RunFileError(path, "not a trajectory record (not a JSON object)")
    return data


def iter_trajectory_dicts(out_dir: Path, ids: Iterable[str]) -> Iterable[dict[str, Any]]:
    """Trajectory JSON of the given ids, skipping items that have none (the agent raised) and,
    with a one-line note each, records that cannot be read (a truncated file, a link out of the
    folder): one damaged record never stops the readers of the others."""
    for item_id in ids:
        try:
            data = read_trajectory_dict(out_dir, item_id)
        except RunFileError as e:
            note(f"{e}; item {item_id!r} is kept without its trajectory")
            continue
        if data is not None:
            yield data
