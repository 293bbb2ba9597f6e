"""A finished (or partly finished) run folder, read back: the one model every reader uses.

Why one: the report, Table 3, rescore, the S-RFA audit and the simulator's sanity report all
read the same files (``results.jsonl``, ``metrics.json``, ``trajectories/``, ``.hydra/config.yaml``).
Written out in each, they drifted: one counted a retried item twice, one skipped the hashed
trajectory names, three rebuilt the items from the recorded config their own way. Here the
rules are written once: the last results line of an id wins and a torn last line is tolerated
(``results.read_results``), trajectories are found by ``safe_filename`` with an older run's
unhashed name still read (``results.find_trajectory``), and the items are rebuilt from the
recorded config through the registered benchmarks only, unless the user trusts the folder.

The files' formats and writers stay in ``experiment/results.py``; this module only reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from ledgermind.benchmarks.item import Item
from ledgermind.errors import DataError
from ledgermind.experiment.results import METRICS_FILE, RESULTS_FILE, ItemResult, find_trajectory, read_result_rows, read_results

RECORDED_CONFIG = Path(".hydra") / "config.yaml"
REPORT_DIR = "report"  # a built report lives inside the run folder; it never holds runs


class RunFileError(DataError):
    """A JSON file of the run that cannot be read (``reason`` says why, for readers that note it)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: not valid JSON ({reason})")
        self.path = path
        self.reason = reason


def is_run_dir(path: Path) -> bool:
    return (Path(path) / RESULTS_FILE).exists() or (Path(path) / METRICS_FILE).exists()


def find_runs(paths: Path | Iterable[Path]) -> list[Path]:
    """Each path itself when it is a run, else the runs below it (a multirun), in path order.

    A path that is not a directory, or holds no run, is a one-line ``DataError``."""
    found: list[Path] = []
    for p in [Path(paths)] if isinstance(paths, (str, Path)) else map(Path, paths):
        if not p.is_dir():
            raise DataError(f"not a directory: {p}")
        if is_run_dir(p):
            found.append(p)
            continue
        below = sorted({f.parent for f in p.rglob(RESULTS_FILE)} | {f.parent for f in p.rglob(METRICS_FILE)})
        below = [r for r in below if REPORT_DIR not in r.relative_to(p).parts]
        if not below:
            raise DataError(f"no runs under {p} (no {RESULTS_FILE} or {METRICS_FILE} found)")
        found.extend(below)
    return found


def read_json_object(path: Path) -> dict[str, Any] | None:
    """A JSON object file: None when it does not exist, ``RunFileError`` when it is not valid JSON
    (a value that is not an object reads as an empty one: the readers only look up keys)."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise RunFileError(path, e.msg) from None
    except UnicodeDecodeError as e:
        raise RunFileError(path, str(e)) from None
    return data if isinstance(data, dict) else {}


@dataclass(frozen=True)
class RunDir:
    """One run folder. Every accessor reads the disk when called (a run may still be writing)."""

    path: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))

    @property
    def has_results(self) -> bool:
        return (self.path / RESULTS_FILE).is_file()

    def results(self, *, strict: bool = False) -> list[ItemResult]:
        """One result per id, the last line winning (a retry supersedes the failure)."""
        return read_results(self.path, strict=strict)

    def result_rows(self) -> dict[str, dict[str, Any]]:
        """``id -> `` the raw last row (for readers of older runs whose rows lack an ``ItemResult`` field)."""
        return {row["id"]: row for row in read_result_rows(self.path)}

    def metrics(self) -> dict[str, Any] | None:
        """``metrics.json`` (written when the run finished), or None for an unfinished run."""
        return read_json_object(self.path / METRICS_FILE)

    def identity(self) -> dict[str, Any]:
        """The run identity ``metrics.json`` records (variant, model, benchmark, seed, ...); {} if none."""
        return dict((self.metrics() or {}).get("identity") or {})

    def trajectory(self, item_id: str) -> dict[str, Any] | None:
        """The trajectory record of one id (hashed name, or an older run's unhashed one), or None."""
        path = find_trajectory(self.path, item_id)
        return read_json_object(path) if path is not None else None

    def config(self) -> DictConfig | None:
        """The config the run was composed from (``.hydra/config.yaml``), or None."""
        path = self.path / RECORDED_CONFIG
        if not path.is_file():
            return None
        cfg = OmegaConf.load(path)
        return cfg if isinstance(cfg, DictConfig) else None

    def logger_node(self) -> dict[str, Any] | None:
        """The run's ``logger`` config node, unresolved (how the run was logged), or None."""
        cfg = self.config()
        node = cfg.get("logger") if cfg is not None else None
        return OmegaConf.to_container(node, resolve=False) if node is not None else None  # type: ignore[return-value]


def rebuild_items(cfg: DictConfig, *, trusted: bool = False) -> list[Item]:
    """All items of a run's benchmark, rebuilt from its recorded config (``RunDir.config``).

    A run folder is data: without ``trusted`` (``--trust-config``) only registered benchmarks are
    loaded, never a ``_target_`` the folder names."""
    from ledgermind.experiment.items import load_items

    return load_items(cfg, None, trusted=trusted)
