"""Writes to shared caches: unique temporary names, and a failed write that costs nothing but a warning.

Why: a cache is an optimisation. Several processes of a sweep share one cache directory, which
may sit on a read-only mount (a warm cache shipped to a cluster) or a full disk. A fixed temporary
name (``.<key>.tmp``) lets two processes write the same file at once and one of them rename the
other's half-written bytes; a write that raises turns an optimisation into a failed tool call, an
item scored without its evidence. So cache writers go through ``atomic_write_bytes`` (a ``mkstemp``
name per write) inside ``BestEffort.write``: an ``OSError`` skips the write, and the first one of
each cache directory is reported in one line on stderr — once per process, however many writers
share the directory (the simulated backbone's eyes read through the agent's perception cache).
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = False) -> None:
    """Write ``data`` to ``path`` through a uniquely named temporary file in the same directory + rename
    (``durable``: synced to disk before the rename, for a run's own files; a cache entry need not be)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; a shared cache is read by other users' runs
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


_WARNED: set[tuple[str, Path]] = set()  # (what, directory) already reported in this process
_WARNED_LOCK = threading.Lock()


class BestEffort:
    """One cache's writes: an ``OSError`` skips the write and is reported once per directory and process."""

    def __init__(self, what: str, directory: Path) -> None:
        self.what, self.directory = what, Path(directory)

    def write(self, fn: Callable[[], None]) -> bool:
        """Run the write ``fn``; False (and one warning for the first failure) when the disk refused it."""
        try:
            fn()
            return True
        except OSError as exc:
            with _WARNED_LOCK:
                first = (self.what, self.directory) not in _WARNED
                _WARNED.add((self.what, self.directory))
            if first:
                print(
                    f"warning: {self.what} {self.directory} cannot be written ({type(exc).__name__}: {exc}); "
                    "running without storing new entries (reads still work)",
                    file=sys.stderr,
                    flush=True,
                )
            return False
