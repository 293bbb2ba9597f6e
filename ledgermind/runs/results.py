"""Durable per-item output: ``results.jsonl`` lines (``ItemResult``) and the trajectory beside each.

A run may be killed at any moment (OOM, pre-emption, Ctrl-C). Every finished item is therefore
persisted the instant it finishes, and reading back (``runs/reader.RunDir.results``) tolerates the
one thing a kill can leave behind: a truncated last line. Resume is nothing more than "skip the ids
already in the file".
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ledgermind.bounded_read import read_regular
from ledgermind.jsonl import BadLine, loads, read_jsonl
from ledgermind.records import Record, codec, decode
from ledgermind.runs.atomic import atomic_write, atomic_write_json, json_text, open_append
from ledgermind.runs.files import RESULTS_FILE, TRAJECTORY_DIR, WALL_TIME_FILE, note
from ledgermind.runs.trajectories import find_trajectory, trajectory_path


def _as_written(name: str) -> dict[str, Any]:
    """Older runs of numeric benchmarks wrote a number here: it is read back as written."""
    return codec(lambda v: v, lambda v: decode(str | float | None, v, name))


@dataclass
class ItemResult(Record):
    """One line of ``results.jsonl``: everything Table 3 and the metrics need about one item."""

    id: str
    prediction: str | None = field(metadata=_as_written("prediction"))
    gold: str | None = field(metadata=_as_written("gold"))
    score: float  # 1/0 for exact scoring; partial credit {0, 0.5, 1} for judged open answers
    parsed: bool  # False: the answer parser found no answer (counted separately, scored wrong)
    path: str | None  # DIRECT / FULLPIPE / BASELINE / NO_LEDGER; None when the agent raised
    difficulty: str | None
    question_types: list[str] = field(default_factory=list)
    subject: str | None = None
    model_calls: int = 0
    tool_calls: int = 0
    tokens: int = 0
    latency_s: float = 0.0
    error: str | None = None
    # Request provenance totals (runs/provenance.py)
    truncated: bool = False  # some reply stopped at the token limit / inside a think block
    prompt_tokens: int = 0  # as the backend reported them
    images_sent: int = 0
    image_pixels: int = 0  # sum over requests of width*height of each image sent
    # sha256 of the item's content when it was solved (``Item.content_sha256``: question, options,
    # gold, image bytes): a resume keeps a verdict only for the very item it was given for
    item_sha256: str | None = None

    @property
    def correct(self) -> bool:
        return self.score >= 1.0


class ResultsWriter:
    """Appends result lines with flush + fsync so a killed run loses at most the item in flight."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = Path(out_dir)
        (self.out_dir / TRAJECTORY_DIR).mkdir(parents=True, exist_ok=True)
        self.path = self.out_dir / RESULTS_FILE
        repair_tail(self.path)
        self._fh = open_append(self.out_dir, self.path)

    def write(self, result: ItemResult, trajectory: Mapping[str, Any] | None) -> None:
        # Trajectory first: a results line is the "done" marker, so it must never point at a
        # trajectory file that does not exist yet.
        if trajectory is not None:
            atomic_write_json(self.out_dir, trajectory_path(self.out_dir, result.id), trajectory)
        self._fh.write(json_text(result.to_dict()) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self._fh.close()


class WallClock:
    """Wall time of every invocation that worked in this output dir (a resume is a new one).

    ``metrics.json`` reports the last invocation's time and the total. The file is rewritten
    after every finished item, so a killed invocation still counts up to its last item.
    """

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = Path(out_dir)
        self.path = self.out_dir / WALL_TIME_FILE
        self.t0 = time.monotonic()
        try:
            data = loads(read_regular(self.path).decode("utf-8"))
            self.previous = [float(x) for x in data.get("invocations_s", [])]
        except (OSError, ValueError, TypeError, AttributeError):
            self.previous = []

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.t0

    @property
    def total_s(self) -> float:
        return sum(self.previous) + self.elapsed_s

    def tick(self) -> None:
        atomic_write_json(
            self.out_dir, self.path, {"invocations_s": [*self.previous, round(self.elapsed_s, 3)]}
        )


def _as_result(d: Any) -> ItemResult | None:
    """The result record ``d`` holds (a JSON text is parsed first), or None when it holds none."""
    try:
        return ItemResult.from_dict(loads(d) if isinstance(d, str) else d)
    except ValueError:
        return None


def redo_damaged(out_dir: Path) -> None:
    """Remove from ``results.jsonl`` the lines a resume cannot keep, so their items are solved again:
    a line that is not a result record (torn by a crash in the middle of the file, edited by hand)
    and a finished item whose trajectory is gone (its census and trajectory metrics would be lost).
    Each kind is one note line. Left in place, a bad line would be skipped on every read and refused
    by every strict reader (rescore) forever, and a re-solved item would be a second finished line."""
    path = Path(out_dir) / RESULTS_FILE
    if not path.is_file():
        return
    torn, untraced = [], {}
    for row in read_jsonl(path, bad=BadLine.KEEP, torn_tail=False, decode_errors="replace"):
        record = None if row.error else _as_result(row.value)
        if record is None:
            torn.append(row.line_no)
        elif record.error is None and find_trajectory(out_dir, record.id) is None:
            untraced[row.line_no] = record.id
    if torn:
        note(
            f"{path} line(s) {', '.join(map(str, torn))}: not result records; removed, their items are solved again"
        )
    if untraced:
        ids = list(untraced.values())
        note(
            f"{out_dir}: {len(ids)} finished items have no trajectory ({', '.join(ids[:5])}); solving them again"
        )
    if torn or untraced:
        gone = {*torn, *untraced}
        lines = path.read_bytes().split(b"\n")
        kept = b"".join(ln + b"\n" for n, ln in enumerate(lines, 1) if n not in gone and ln.strip())
        atomic_write(out_dir, path, kept)


def repair_tail(path: Path) -> None:
    """Make the file end on a line boundary before anyone counts what is done.

    A kill can leave a last line without its newline. If it is a complete record it is kept (its
    newline is added); a partial record is cut, so the next append starts on a fresh line. Resume
    calls this *before* reading, so an item counted as done is never cut afterwards.
    """
    if not path.exists():
        return
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return
    start = data.rfind(b"\n") + 1  # 0 when the only line is partial
    with path.open("r+b") as fh:
        if _as_result(data[start:].decode("utf-8", "replace")) is not None:
            fh.seek(0, os.SEEK_END)
            fh.write(b"\n")
        else:
            fh.truncate(start)
        fh.flush()
        os.fsync(fh.fileno())
