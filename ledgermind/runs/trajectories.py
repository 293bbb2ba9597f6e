"""Where one item's trajectory lives in a run folder (``runs/reader.RunDir.trajectory`` reads it back).

``trajectories/<safe name>.json``: the id made safe for a file name (``safe_filename``, a hash
keeps distinct ids distinct).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ledgermind.runs.files import TRAJECTORY_DIR, own_file


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
