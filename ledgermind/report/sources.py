"""What a report is built from: the files a finished (or partly finished) run left on disk.

A report must open any run a researcher still has, including runs written before a field
existed (no ``mechanisms``, no per-item ``error``, no ``.hydra`` config). Every reader here is
therefore tolerant: a missing file or key yields an empty value and a note on the page, never a
traceback. Trajectories are kept as plain dicts for the same reason: the report shows what was
recorded, it does not need the dataclasses to round-trip.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from ledgermind.benchmarks.item import Item
from ledgermind.errors import UserError, first_line
from ledgermind.runs.files import METRICS_FILE, RunFileError
from ledgermind.runs.items import load_items
from ledgermind.runs.reader import RunDir
from ledgermind.runs.results import ItemResult


@dataclass
class RunData:
    """One run directory, read back."""

    run_dir: Path
    results: list[ItemResult]
    trajectories: dict[str, dict[str, Any]]  # item id -> trajectory dict (items the agent finished)
    metrics: dict[str, Any]
    items: dict[str, Item]  # the dataset side (options, images), when the benchmark could be reloaded
    notes: list[str] = field(default_factory=list)  # what could not be read, shown on the run page

    def image_roots(self) -> list[Path]:
        """Where this run's images may be read from: the run itself and the directories of the
        items' own images (the registered loader confines those to the data directory)."""
        return [self.run_dir, *{p.parent for info in self.items.values() for p in info.images}]

    @property
    def variant(self) -> str:
        return str(self.identity.get("variant") or self.run_dir.name)

    @property
    def identity(self) -> dict[str, Any]:
        return dict(self.metrics.get("identity") or {})


def load_run(run_dir: Path) -> RunData:
    run = RunDir(run_dir)
    notes: list[str] = []
    results = run.results()
    metrics = _noted(run.metrics, notes)
    if metrics is None and not (run.path / METRICS_FILE).exists():
        notes.append("the run has no metrics.json (unfinished?)")
    read = {r.id: _noted(partial(run.trajectory, r.id), notes) for r in results}
    trajectories = {i: t for i, t in read.items() if t}
    items = load_item_infos(run, {r.id for r in results}, notes)
    return RunData(run.path, results, trajectories, metrics or {}, items, notes)


def _noted(read: Callable[[], dict[str, Any] | None], notes: list[str]) -> dict[str, Any] | None:
    """A JSON file of the run, or None with a note on the page when it cannot be read (not valid
    JSON, a wrong-typed field, a link out of the folder)."""
    try:
        return read()
    except RunFileError as e:
        notes.append(f"{e.path.name}: {e.reason}; skipped")
        return None


def load_item_infos(run: RunDir, ids: set[str], notes: list[str]) -> dict[str, Item]:
    """Reload the run's benchmark from its recorded config to get options and image paths.

    Trajectories do not store the dataset side of an item. When the benchmark cannot be reloaded
    (moved data, an older config) the report still renders, with images found from the tool
    inputs recorded in the ledger and without the options.
    """
    if not ids:
        return {}
    from omegaconf.errors import OmegaConfBaseException

    try:
        cfg = run.config()
        if cfg is None:
            return {}
        items = load_items(cfg, None, trusted=False)  # a run folder is data: registered benchmarks only
    except (UserError, OmegaConfBaseException, OSError, ValueError, KeyError, ImportError) as e:
        first = first_line(e)
        notes.append(f"the benchmark could not be reloaded ({first}); options and some images are not shown")
        return {}
    return {i.id: i for i in items if i.id in ids}


IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff"})
_PATH_REPR = re.compile(r"^(?:\w*Path)\('(.+)'\)$")


def input_image_path(value: Any) -> Path | None:
    """The image path a tool was called with, as the ledger recorded it (``PosixPath('…')`` or a str)."""
    if not isinstance(value, str) or not value:
        return None
    if m := _PATH_REPR.match(value):
        return Path(m.group(1))
    looks_like_path = not value.startswith("<") and Path(value).suffix.lower() in IMAGE_SUFFIXES
    return Path(value) if looks_like_path else None  # not e.g. "<PIL.Image.Image …>" (an in-memory crop)
