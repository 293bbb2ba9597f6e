"""The one JSONL reader: every ``*.jsonl`` file the project reads goes through ``read_jsonl``.

Why one: a line cut by a kill (the last line of a file written with append + fsync) must be
treated the same everywhere, and a bad line must be reported the same everywhere, naming the
file and the line, instead of nine readers each deciding between a traceback and silence.

Every JSON text read from a file someone else may have written goes through ``loads``: its nesting
is bounded (``MAX_DEPTH``), since a line of ten thousand ``[`` is a ``RecursionError`` in the parser
or in whatever walks the value next, which no reader catches.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from ledgermind import bounded_read
from ledgermind.errors import DataError

MAX_DEPTH = 100  # run records nest a few levels; Python's recursion limit is 1000


def valid_text(text: str) -> str:
    """``text`` with lone UTF-16 surrogates replaced by U+FFFD.

    JSON may carry ``"\\udebc"`` escapes that decode to lone surrogates (a random or badly tokenised
    model emits them; a hand-made data file may hold half of an emoji's pair); such a string cannot
    be UTF-8 encoded, so sending it in a prompt or writing it to ``results.jsonl`` would fail far
    from its cause. Every reply and every item's text is made valid text where it enters the project.
    """
    if not text or text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def loads(text: str) -> Any:
    """``json.loads`` with nesting bounded by ``MAX_DEPTH``: deeper is a ``ValueError`` saying so
    (a ``json.JSONDecodeError`` for text that is not JSON)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    # brackets counted first: a flat record is never walked
    if text.count("[") + text.count("{") > MAX_DEPTH and not _depth_within(value):
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    return value


def _depth_within(value: Any) -> bool:
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list)):
            if depth > MAX_DEPTH:
                return False
            stack.extend((c, depth + 1) for c in (v.values() if isinstance(v, dict) else v))
    return True


class BadLine(str, Enum):
    """What a reader does with a line that is not valid JSON (other than a torn last line)."""

    RAISE = "raise"  # a ``DataError`` naming the file and the line: input a user must fix
    SKIP = "skip"  # leave it out: a results file after a crash, where a resume rewrites the item anyway
    KEEP = "keep"  # yield it with ``error`` set: a benchmark file, where one bad row is one error item


@dataclass(frozen=True)
class JsonlRow:
    """One parsed line and where it came from (for error messages that point at it)."""

    line_no: int
    value: Any
    text: str
    error: str | None = None  # ``BadLine.KEEP``: why the line is not what it should be (``value`` is None)


def read_jsonl(
    path: Path,
    *,
    bad: BadLine = BadLine.RAISE,
    torn_tail: bool = True,
    decode_errors: str = "strict",
    objects: bool = False,
    what: str = "valid JSON",
) -> Iterator[JsonlRow]:
    """Yield the parsed non-blank lines of ``path`` in order (a missing file, or one that is not a
    regular file, is a ``DataError``; a line over ``bounded_read.MAX_LINE_BYTES`` is a bad line).

    ``torn_tail``: a last line without its newline that is not valid JSON is what a kill mid-write
    leaves behind; it is skipped silently instead of being treated as ``bad``.
    ``decode_errors``: how undecodable bytes are handled, per line (``"replace"`` for results files,
    where one mangled byte must not hide every other item; ``"strict"``: the line is bad).
    ``objects``: a line must hold a JSON object (benchmark records); any other value is bad.
    ``what``: what a line should be, for the error (``"a readable result record"``).
    """
    path = Path(path)
    try:
        fh = bounded_read.open_regular(path)  # a FIFO or device is refused before a read could wait forever
    except FileNotFoundError:
        raise DataError(f"JSONL file not found: {path}") from None
    except OSError as e:
        raise DataError(f"{path}: cannot be read ({e.strerror or e})") from None
    with fh:
        for n, line in enumerate(bounded_read.bounded_lines(fh), 1):
            value: Any
            reason: str | None
            if line is None:  # never parsed nor kept: one line must not take the reader's memory
                value, text, reason = (
                    None,
                    "",
                    f"longer than {bounded_read.size_text(bounded_read.MAX_LINE_BYTES)}",
                )
            elif not line.strip():
                continue
            else:
                value, text, reason = _parse(line, decode_errors, objects)
            if reason is None:
                yield JsonlRow(n, value, text)
            elif torn_tail and line is not None and _unterminated(line) and value is _INVALID:
                return  # only the file's last line can lack its newline
            elif bad is BadLine.RAISE:
                raise bad_line(path, n, text, what, reason)
            elif bad is BadLine.KEEP:
                yield JsonlRow(n, None, text, str(bad_line(path, n, text, what, reason)))


def _unterminated(line: bytes) -> bool:
    """A line a kill cut: it ends neither in a newline nor, after trailing blanks, a carriage return."""
    return not line.endswith(b"\n") and not line.rstrip(b" \t").endswith(b"\r")


_INVALID = object()  # a line that is not JSON at all (a torn tail can only be that)


def _parse(line: bytes, decode_errors: str, objects: bool) -> tuple[Any, str, str | None]:
    """``(value, text, None)`` for a good line, else ``(…, text, reason)``."""
    try:
        text = line.decode("utf-8", decode_errors).strip()
    except UnicodeDecodeError as exc:
        return _INVALID, line.decode("utf-8", "replace").strip(), f"not UTF-8 at byte {exc.start}"
    try:
        value = loads(text)
    except json.JSONDecodeError as exc:
        return _INVALID, text, exc.msg
    except ValueError as exc:  # too deeply nested: valid JSON, never a torn tail
        return None, text, str(exc)
    if objects and not isinstance(value, dict):
        return value, text, f"a JSON {type(value).__name__}"
    return value, text, None


def bad_line(path: Path, line_no: int, text: str, what: str, reason: str | None = None) -> DataError:
    """The one-line error for a line that is not ``what`` (also for valid JSON of the wrong shape),
    with the reason when it is known."""
    because = f"{reason}: " if reason else ""
    return DataError(f"{path}: line {line_no} is not {what} ({because}{text.strip()[:60]!r})")
