"""Whole-file writes of run files: a reader never sees half a file, and text always encodes.

(Caches write through ``ledgermind.diskio``, whose failed write is only a warning: a run's own
files must not be lost silently, so a failed write here raises.)
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def atomic_write_text(path: Path, text: str) -> None:
    """Write via a temp file in the same directory + rename: readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; results are meant to be shared
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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


def atomic_write_json(path: Path, payload: Any) -> None:
    atomic_write_text(path, json_text(payload, indent=2))
