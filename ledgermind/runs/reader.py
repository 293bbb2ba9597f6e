"""A finished (or partly finished) run folder, read back: the one model every reader uses.

Why one: the report, Table 3, rescore, the S-RFA audit and the simulator's sanity report all
read the same files (``results.jsonl``, ``metrics.json``, ``trajectories/``, ``.hydra/config.yaml``),
and a rule written out in each reader drifts (a retried item counted twice, an item rebuilt another
way). Here the rules are written once: the last results line of an id wins and a torn last line is
tolerated (``RunDir.results``), trajectories are found by ``safe_filename``
(``runs.trajectories.find_trajectory``), and the items are rebuilt from the recorded config
(``RunDir.config``) by ``runs.items.load_items(cfg, None, trusted=False)``: registered benchmarks
only, never a ``_target_`` the folder names, unless the user trusts it (``--trust-config``).

A folder may be someone else's, so reading it never acts: a second result line for a
finished item is refused, a wrong-typed record is skipped with a note and a wrong-typed
``metrics.json`` field is a ``RunFileError``, no file is read through a link out of the folder,
and the recorded config is loaded inert (``load_inert_config``: no resolver runs, no environment
variable but the data-location ones is read).

The folder's layout and JSON error policy are ``runs/files.py``; the writers ``runs/results.py``,
``runs/claim.py`` and ``runs/summary.py``; this module only reads.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from omegaconf import DictConfig, OmegaConf

from ledgermind.errors import DataError
from ledgermind.jsonl import BadLine, bad_line, read_jsonl
from ledgermind.records import decode, field_types
from ledgermind.runs.files import (
    IDENTITY_FILE,
    METRICS_FILE,
    RECORDED_CONFIG,
    REPORT_DIR,
    RESULTS_FILE,
    RunFileError,
    note,
    own_file,
    read_json_file,
    read_json_object,
    read_yaml,
)
from ledgermind.runs.results import ItemResult
from ledgermind.runs.summary import RunIdentity
from ledgermind.runs.trajectories import find_trajectory

R = TypeVar("R")


def find_runs(paths: Path | Iterable[Path]) -> list[Path]:
    """Each path itself when it is a run, else the runs below it (a multirun), in path order.

    A path that is not a directory, or holds no run, is a one-line ``DataError``."""
    found: list[Path] = []
    for p in [Path(paths)] if isinstance(paths, (str, Path)) else map(Path, paths):
        if not p.is_dir():
            raise DataError(f"not a directory: {p}")
        if (p / RESULTS_FILE).exists() or (p / METRICS_FILE).exists():
            found.append(p)
            continue
        below = sorted({f.parent for f in p.rglob(RESULTS_FILE)} | {f.parent for f in p.rglob(METRICS_FILE)})
        below = [r for r in below if REPORT_DIR not in r.relative_to(p).parts]
        if not below:
            raise DataError(f"no runs under {p} (no {RESULTS_FILE} or {METRICS_FILE} found)")
        found.extend(below)
    return found


# The JSON types of the metrics.json fields readers compute with: a wrong-typed value is the
# file's error, named in one line, never a crash in a reader. The identity's are its record's.
METRICS_TYPES: dict[str, Any] = {
    "accuracy": float,
    "n_items": int,
    "n_scored": int,
    "errors": int,
    "unparsed": int,
    "abstention_rate": float,
    "wall_time_s": float,
    "wall_time_total_s": float | None,
    "identity": dict[str, Any] | None,
    "mechanisms": dict[str, Any],
}


def check_metrics(path: Path, metrics: dict[str, Any]) -> dict[str, Any]:
    """``metrics`` if its known fields have their types, else ``RunFileError`` naming the first bad one."""
    identity = metrics["identity"] if isinstance(metrics.get("identity"), dict) else {}
    try:
        for holder, types in ((metrics, METRICS_TYPES), (identity, field_types(RunIdentity))):
            for key, tp in types.items():
                if key in holder:
                    decode(tp, holder[key], key)
    except ValueError as e:
        raise RunFileError(path, str(e)) from None
    return metrics


def _raw_row(d: Any) -> dict[str, Any]:
    """A results line as parsed, for readers that need a few fields: any object with a string ``id``."""
    if isinstance(d, dict) and isinstance(d.get("id"), str):
        return d
    raise ValueError("no string id")


# ------------------------------------------------------------------------------ inert configs
# Environment variables a recorded config may read on the reader's machine: where the reader keeps
# its data and caches (the project's own conf/ uses them for data paths), never a secret.
READABLE_ENV = ("LEDGERMIND_SHARED_DATA", "LEDGERMIND_CACHE", "XDG_CACHE_HOME", "HOME")
_RESOLVER = re.compile(r"(\\*)\$\{\s*([A-Za-z_][\w.]*)\s*:")  # backslashes before: an odd count escapes it
_SAFE_RESOLVERS = ("oc.select",)  # reads another key of the same file


def _env_of_run(name: str, default: Any = None) -> Any:
    """``${oc.env:NAME,default}`` in a recorded config: a data-location variable is read; any other
    (an API key) is never read: the default if the config gives one, else a marker."""
    if name in READABLE_ENV:
        return os.environ.get(name, default)
    return default if default is not None else f"<{name} not read from the environment>"


def inert_text(text: str) -> str:
    """A config string whose interpolations cannot act: ``oc.env`` goes through ``_env_of_run``,
    ``oc.select`` and references to other keys of the same file stay, any other resolver
    (``hydra:``, ``now:``, a registered one that runs code) is escaped to literal text."""

    def sub(m: re.Match[str]) -> str:
        slashes, name = m.group(1), m.group(2)
        if len(slashes) % 2:  # already escaped: literal text
            return m.group(0)
        if name == "oc.env":
            return slashes + "${ledgermind_env_of_run:"
        return m.group(0) if name in _SAFE_RESOLVERS else slashes + "\\" + m.group(0)[len(slashes) :]

    return _RESOLVER.sub(sub, text)


def _inert(value: Any) -> Any:
    if isinstance(value, str):
        return inert_text(value) if "${" in value else value
    if isinstance(value, dict):
        return {str(k): _inert(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_inert(v) for v in value]
    return value


def load_inert_config(path: Path) -> DictConfig | None:
    """A recorded ``config.yaml`` as inert data (plain YAML; ``inert_text`` on every string), or None
    when it is not a mapping. ``RunFileError`` when it is not YAML or uses an alias (``read_yaml``)."""
    if not OmegaConf.has_resolver("ledgermind_env_of_run"):
        OmegaConf.register_new_resolver("ledgermind_env_of_run", _env_of_run)
    data = read_yaml(path)
    return DictConfig(_inert(data)) if isinstance(data, dict) else None


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
        """One result per id; a truncated or corrupt line (a kill mid-write) is ignored.

        ``strict``: a corrupt line is a ``DataError`` naming it instead — for tools that rewrite the
        file (rescore), where skipping a line would silently drop an item.

        An id appears twice when an errored item was retried on resume: the *last* line wins (the
        retry supersedes the failure). A finished item is never redone, so a line after its finishing
        line is not the run's own: every reader refuses it with a ``DataError`` naming the line.
        """
        return self._result_lines(ItemResult.from_dict, strict=strict)

    def result_rows(self) -> dict[str, dict[str, Any]]:
        """``id -> `` the raw last row, for readers that need a few fields only (a row without every
        ``ItemResult`` field is still read)."""
        return {row["id"]: row for row in self._result_lines(_raw_row)}

    def _result_lines(self, as_record: Callable[[Any], R], *, strict: bool = False) -> list[R]:
        """The rules of ``results`` with the record type chosen by the reader: ``as_record`` turns a
        parsed line into a record, a ``ValueError`` saying why it is not one."""
        path = self.path / RESULTS_FILE
        if own_file(self.path, path) is None:
            return []
        what = "a readable result record"
        rows = read_jsonl(
            path,
            bad=BadLine.RAISE if strict else BadLine.SKIP,
            torn_tail=not strict,
            decode_errors="replace",
            what=what,
        )
        seen: dict[str, R] = {}
        finished: dict[str, int] = {}  # id -> the line that finished it
        for row in rows:
            try:
                record = as_record(row.value)
            except ValueError as e:
                if strict:
                    raise bad_line(path, row.line_no, row.text, what) from None
                note(f"{path} line {row.line_no}: not {what} ({e}); skipped")
                continue
            item_id = row.value["id"]
            if item_id in finished:  # pasted from another run, say: letting it win would relabel the item
                raise DataError(
                    f"{path} line {row.line_no}: a second result for item {item_id!r}, already finished on line "
                    f"{finished[item_id]}; a run never redoes a finished item, so this line is not the run's own: remove it"
                )
            if row.value.get("error") is None:
                finished[item_id] = row.line_no
            seen.pop(item_id, None)  # re-insert: order follows the latest line
            seen[item_id] = record
        return list(seen.values())

    def json_object(self, name: str) -> dict[str, Any] | None:
        """Any JSON object file of the folder (``metrics.json``, ``run_identity.json``, S-RFA's
        metrics), under the folder's one error policy (``runs.files.read_json_object``)."""
        return read_json_object(self.path, self.path / name)

    def metrics(self) -> dict[str, Any] | None:
        """``metrics.json`` (written when the run finished), or None for an unfinished run;
        ``RunFileError`` when it is not JSON, a link out of the folder, or a known field has the wrong type."""
        data = self.json_object(METRICS_FILE)
        return None if data is None else check_metrics(self.path / METRICS_FILE, data)

    def identity(self) -> dict[str, Any]:
        """The run identity ``metrics.json`` records (variant, model, benchmark, seed, ...); {} if none."""
        return dict((self.metrics() or {}).get("identity") or {})

    def run_identity(self, metrics: dict[str, Any]) -> RunIdentity:
        """The ``RunIdentity`` of this folder's ``metrics``; ``RunFileError`` when it records none usable."""
        try:
            return RunIdentity.from_dict(metrics.get("identity"))
        except ValueError as e:  # a metrics.json another tool wrote, or edited by hand
            raise RunFileError(self.path / METRICS_FILE, f"no usable run identity ({e})") from None

    def variant(self) -> str | None:
        """The variant the run computed: its identity (``metrics.json``; ``run_identity.json`` while it
        is unfinished), else the recorded config's ``ablation.name``; None when nothing says."""
        claimed = (self.json_object(IDENTITY_FILE) or {}).get("identity")
        for identity in (self.identity(), claimed if isinstance(claimed, dict) else {}):
            if isinstance(identity.get("variant"), str):
                return identity["variant"]
        cfg = self.config()
        name = None if cfg is None else OmegaConf.select(cfg, "ablation.name", default=None)
        return name if isinstance(name, str) else None

    def trajectory(self, item_id: str) -> dict[str, Any] | None:
        """The trajectory JSON object of one id (``find_trajectory``), or None when there is none;
        ``RunFileError`` when it is truncated, not an object, or a link out of the folder."""
        if (path := find_trajectory(self.path, item_id)) is None:
            return None
        data = read_json_file(path)
        if not isinstance(data, dict):
            raise RunFileError(path, "not a trajectory record (not a JSON object)")
        return data

    def trajectories(self, ids: Iterable[str]) -> Iterator[dict[str, Any]]:
        """Trajectory JSON of the given ids, skipping items that have none (the agent raised) and,
        with a one-line note each, records that cannot be read (a truncated file, a link out of the
        folder): one damaged record never stops the readers of the others."""
        for item_id in ids:
            try:
                data = self.trajectory(item_id)
            except RunFileError as e:
                note(f"{e}; item {item_id!r} is kept without its trajectory")
                continue
            if data is not None:
                yield data

    def config(self) -> DictConfig | None:
        """The config the run was composed from (``.hydra/config.yaml``), as inert data
        (``load_inert_config``: no interpolation can read a secret or run code), or None."""
        path = self.path / RECORDED_CONFIG
        return load_inert_config(path) if own_file(self.path, path) else None
