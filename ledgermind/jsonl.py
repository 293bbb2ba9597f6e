"""The one JSONL reader: every ``*.jsonl`` file the project reads goes through ``read_jsonl``.

Why one: a line cut by a kill (the last line of a file written with append + fsync) must be
treated the same everywhere, and a bad line must be reported the same everywhere, naming the
file and the line, instead of nine readers each deciding between a traceback and silence.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from ledgermind.errors import DataError


class BadLine(str, Enum):
    """What a reader does with a line that is not valid JSON (other than a torn last line)."""

    RAISE = "raise"  # a ``DataError`` naming the file and the line: input a user must fix
    SKIP = "skip"  # leave it out: a results file after a crash, where a resume rewrites the item anyway


@dataclass(frozen=True)
class JsonlRow:
    """One parsed line and where it came from (for error messages that point at it)."""

    line_no: int
    value: Any
    text: str


def read_jsonl(
    path: Path,
    *,
    bad: BadLine = BadLine.RAISE,
    torn_tail: bool = True,
    decode_errors: str = "strict",
    what: str = "valid JSON",
) -> Iterator[JsonlRow]:
    """Yield the parsed non-blank lines of ``path`` in order.

    ``torn_tail``: a last line without its newline that is not valid JSON is what a kill mid-write
    leaves behind; it is skipped silently instead of being treated as ``bad``.
    ``decode_errors``: how undecodable bytes are handled (``"replace"`` for results files, where
    one mangled byte must not hide every other item).
    ``what``: what a line should be, for the error (``"a readable result record"``).
    """
    path = Path(path)
    raw = path.read_bytes()
    lines = raw.decode("utf-8", decode_errors).splitlines()
    ends_with_newline = raw.endswith((b"\n", b"\r"))
    for n, line in enumerate(lines, 1):
        text = line.strip()
        if not text:
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            if torn_tail and n == len(lines) and not ends_with_newline:
                return
            if bad is BadLine.SKIP:
                continue
            raise bad_line(path, n, text, what) from None
        yield JsonlRow(n, value, text)


def bad_line(path: Path, line_no: int, text: str, what: str) -> DataError:
    """The one-line error for a line that is not ``what`` (also for valid JSON of the wrong shape)."""
    return DataError(f"{path}: line {line_no} is not {what} ({text.strip()[:60]!r})")
