"""Reading a file someone else may have made: a regular file only, and never more than a bound.

Why: a run folder, a data file or a recorded config is data another person (or a damaged copy)
may have made. Opening a FIFO for reading waits for a writer that never comes, so a reader
named on such a folder (``ledgermind ls``, a report, a resume) would hang forever; a character
device (``/dev/zero``) never ends; a file of tens of gigabytes, or one line that long, is read
whole into memory and parsed. So every such reader opens through ``open_regular`` (non-blocking
open, then ``fstat``: anything but a regular file is refused before one byte is read) and reads
through ``read_regular`` (whole files, refused above ``MAX_FILE_BYTES``) or ``bounded_lines`` (lines,
each refused above ``MAX_LINE_BYTES`` without keeping it). The refusals are ``OSError``s, so
every reader's existing "cannot be read" path reports them with their cause.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

# The largest whole file a reader takes (a trajectory, metrics.json, a recorded config): the run's
# own are kilobytes to a few megabytes.
MAX_FILE_BYTES = 64 * 2**20
# The longest line a JSONL reader takes (a result record, a benchmark row): a run's are under a kilobyte.
MAX_LINE_BYTES = 64 * 2**20


class NotRegularFile(OSError):
    """The path is a FIFO, socket or device (or a directory): reading it could wait or never end."""


class TooLarge(OSError):
    """The file, or one of its lines, is larger than its reader's bound."""


def irregular(path: Path) -> str | None:
    """What ``path`` is when it exists and is no regular file (``"is a FIFO (named pipe), not a
    regular file"``), for a one-line refusal; None for a regular file or a missing path. ``lstat``
    is not used: a link is judged by what it leads to, as a read would."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # missing, or a dangling link: the reader's own open says why
        return None
    return None if stat.S_ISREG(mode) else _kind(mode)


def _kind(mode: int) -> str:
    for test, kind in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
    ):
        if test(mode):
            return f"is {kind}, not a regular file"
    return "is not a regular file"


def open_regular(path: Path) -> io.BufferedReader:
    """``path`` opened for binary reading; ``NotRegularFile`` before any read when it is not a
    regular file (the open itself never waits: ``O_NONBLOCK``)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(errno.EINVAL, _kind(mode), str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path) -> bytes:
    """The bytes of the regular file ``path``; ``TooLarge`` when it holds more than ``MAX_FILE_BYTES``
    (checked on what is read, so a file that grows meanwhile is bounded too)."""
    with open_regular(path) as fh:
        data = fh.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise TooLarge(errno.EFBIG, f"larger than {size_text(MAX_FILE_BYTES)}; not read", str(path))
    return data


def bounded_lines(fh: BinaryIO) -> Iterator[bytes | None]:
    """The lines of ``fh`` with their ``\\n`` (the last one may lack it); a line longer than
    ``MAX_LINE_BYTES`` is ``None``, skipped in chunks without being kept."""
    while True:
        line = fh.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if line.endswith(b"\n") or len(line) <= MAX_LINE_BYTES:  # the newline is not counted
            yield line
            continue
        while line and not line.endswith(b"\n"):  # the rest of the long line
            line = fh.readline(MAX_LINE_BYTES)
        yield None


def size_text(n: int) -> str:
    """A bound in words: whole MiB where it is one, else bytes."""
    return f"{n // 2**20} MiB" if n >= 2**20 and n % 2**20 == 0 else f"{n} bytes"
