"""Every write into a run folder: whole files atomically, and never through a link.

A run folder is data someone else may have made (or where a user linked a file to share it): a
link in it must not carry a write — a table, a backup, an audit line, a report page — to a file
outside it. So every writer names its folder and the file inside it, and ``inside`` refuses when
that file, or a folder between the run folder and it, is a symbolic link (the run folder itself
may be one: the user chose it). A whole file goes through a temp file in its own directory +
rename, so a reader never sees half a file; a line-appended file is opened with ``O_NOFOLLOW``.

(Caches write through ``ledgermind.diskio.BestEffort``, whose failed write is only a warning: a
run's own files must not be lost silently, so a failed write here raises.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, TextIO

from ledgermind.diskio import atomic_write_bytes
from ledgermind.runs.files import RunFileError


def inside(root: Path, path: Path) -> Path:
    """``path`` (below the folder ``root``) with its folders created; ``RunFileError`` naming the
    first link on the way, before anything is written."""
    root, path = Path(root), Path(path)
    current = root
    for part in path.relative_to(root).parts:
        current = current / part
        if current.is_symlink():
            raise RunFileError(
                current, "is a symbolic link; nothing is written through it (it could lead out of the folder)"
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def atomic_write(root: Path, path: Path, data: str | bytes) -> None:
    """Write ``path`` inside the folder ``root`` via a temp file in the same directory + rename."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    atomic_write_bytes(inside(root, path), raw, durable=True)


def open_append(root: Path, path: Path) -> TextIO:
    """``path`` inside the folder ``root`` opened for appending lines (created if missing)."""
    # O_NOFOLLOW: a link made between the check and the open is an OSError, never followed
    fd = os.open(inside(root, path), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    return os.fdopen(fd, "a", encoding="utf-8")


def json_text(payload: Any, indent: int | None = None) -> str:
    """JSON that is always writable as UTF-8: readable text where possible, ``\\u`` escapes for a
    string that cannot be encoded (a lone surrogate from some tool or reply), never an error that
    would lose a finished item."""
    text = json.dumps(payload, ensure_ascii=False, indent=indent, default=str)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return json.dumps(payload, ensure_ascii=True, indent=indent, default=str)


def atomic_write_json(root: Path, path: Path, payload: Any) -> None:
    atomic_write(root, path, json_text(payload, indent=2))
