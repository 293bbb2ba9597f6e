"""What a report is built from: the files a finished (or partly finished) run left on disk.

A report must open any run a researcher still has, including runs written before a field
existed (no ``mechanisms``, no per-item ``error``, no ``.hydra`` config). Every reader here is
therefore tolerant: a missing file or key yields an empty value and a note on the page, never a
traceback. Trajectories are kept as plain dicts for the same reason: the report shows what was
recorded, it does not need the dataclasses to round-trip.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ledgermind.errors import DataError, UserError
from ledgermind.experiment.results import METRICS_FILE, RESULTS_FILE, ItemResult, find_trajectory, read_results


@dataclass(frozen=True)
class ItemInfo:
    """The dataset side of an item (question, options, images) when the benchmark can be reloaded."""

    question: str = ""
    options: list[str] | None = None
    images: list[Path] = field(default_factory=list)
    difficulty: str | None = None


@dataclass
class RunData:
    """One run directory, read back."""

    run_dir: Path
    results: list[ItemResult]
    trajectories: dict[str, dict[str, Any]]  # item id -> trajectory dict (items the agent finished)
    metrics: dict[str, Any]
    items: dict[str, ItemInfo]
    notes: list[str] = field(default_factory=list)  # what could not be read, shown on the run page

    def image_roots(self) -> list[Path]:
        """Where this run's images may be read from: the run itself and the directories of the
        items' own images (the registered loader confines those to the data directory)."""
        return [self.run_dir, *{p.parent for info in self.items.values() for p in info.images}]

    @property
    def variant(self) -> str:
        return str(self.metrics.get("identity", {}).get("variant") or self.run_dir.name)

    @property
    def identity(self) -> dict[str, Any]:
        return dict(self.metrics.get("identity") or {})


def is_run_dir(path: Path) -> bool:
    return (path / RESULTS_FILE).exists() or (path / METRICS_FILE).exists()


def find_runs(path: Path) -> list[Path]:
    """``path`` itself when it is a run, else the runs below it (a multirun); a clear error if none."""
    path = Path(path)
    if not path.is_dir():
        raise DataError(f"not a directory: {path}")
    if is_run_dir(path):
        return [path]
    runs = sorted({p.parent for p in path.rglob(RESULTS_FILE)} | {p.parent for p in path.rglob(METRICS_FILE)})
    runs = [r for r in runs if "report" not in r.relative_to(path).parts]
    if not runs:
        raise DataError(f"no runs under {path} (no {RESULTS_FILE} or {METRICS_FILE} found)")
    return runs


def load_run(run_dir: Path) -> RunData:
    run_dir = Path(run_dir)
    notes: list[str] = []
    results = read_results(run_dir)
    metrics = _read_json(run_dir / METRICS_FILE, notes, missing="the run has no metrics.json (unfinished?)")
    trajectories: dict[str, dict[str, Any]] = {}
    for r in results:
        p = find_trajectory(run_dir, r.id)
        if p is not None:
            t = _read_json(p, notes, missing="")
            if t:
                trajectories[r.id] = t
    items = load_item_infos(run_dir, {r.id for r in results}, notes)
    return RunData(run_dir, results, trajectories, metrics, items, notes)


def _read_json(path: Path, notes: list[str], *, missing: str) -> dict[str, Any]:
    if not path.exists():
        if missing:
            notes.append(missing)
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        notes.append(f"{path.name} is not valid JSON ({e.msg if hasattr(e, 'msg') else e}); skipped")
        return {}
    return data if isinstance(data, dict) else {}


def load_item_infos(run_dir: Path, ids: set[str], notes: list[str]) -> dict[str, ItemInfo]:
    """Reload the run's benchmark from ``.hydra/config.yaml`` to get options and image paths.

    Trajectories do not store the dataset side of an item. When the benchmark cannot be reloaded
    (moved data, an older config) the report still renders, with images found from the tool
    inputs recorded in the ledger and without the options.
    """
    cfg_file = run_dir / ".hydra" / "config.yaml"
    if not cfg_file.exists() or not ids:
        return {}
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    from ledgermind.experiment.app import load_items

    try:
        cfg = OmegaConf.load(cfg_file)
        items = load_items(cfg, None, trusted=False)  # a run folder is data: registered benchmarks only
    except (UserError, OmegaConfBaseException, OSError, ValueError, KeyError, ImportError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        notes.append(f"the benchmark could not be reloaded ({first}); options and some images are not shown")
        return {}
    return {
        i.id: ItemInfo(i.question, list(i.options) if i.options else None, [Path(p) for p in i.images], i.difficulty)
        for i in items
        if i.id in ids
    }


IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff"})
_PATH_REPR = re.compile(r"^(?:\w*Path)\('(.+)'\)$")


def input_image_path(value: Any) -> Path | None:
    """The image path a tool was called with, as the ledger recorded it (``PosixPath('…')`` or a str)."""
    if not isinstance(value, str) or not value:
        return None
    m = _PATH_REPR.match(value)
    if m:
        return Path(m.group(1))
    looks_like_path = not value.startswith("<") and Path(value).suffix.lower() in IMAGE_SUFFIXES
    return Path(value) if looks_like_path else None  # not e.g. "<PIL.Image.Image …>" (an in-memory crop)
