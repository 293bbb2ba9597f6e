"""A run directory belongs to one experiment: its identity, its lock, and how to resume it.

Why this exists: resume is "skip the ids already in ``results.jsonl``", which is only right if
the directory holds results *of the same experiment*. Rerunning into a finished ``full``
directory with ``+ablation=no_ecc`` would print "5 done, 0 to go" and relabel the old results,
and two runs into one directory would both run every item. So a run directory records what it computes
(``run_identity.json``: the fields Table 3 compares plus a hash of the config without the keys a
resume may change) and is held by one process at a time (an ``fcntl`` lock on ``.lock``). A
rerun with another identity stops with one line naming the field, unless ``resume=new`` asks for
a fresh directory beside it.

Nothing is written into the directory before the lock is held: Hydra writes no ``.hydra`` files
and no ``run.log`` (``hydra.output_subdir: null``, ``hydra/job_logging: ledgermind``); ``claim``
writes the ``.hydra`` files from the config this process runs (never a copy of what is on disk,
which another process may have written), so a second run launched into a held directory leaves
no trace in it. Only what the holder wrote is trusted: a directory with results but no readable
``run_identity.json`` is never adopted, and a run file that is a symbolic link is refused (a
resume would append through it to a file outside the folder).
"""

from __future__ import annotations

import fcntl
import itertools
import json
import os
import sqlite3
from collections.abc import Collection, Mapping
from contextlib import closing
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, TextIO

from ledgermind.backends.cache import NOT_REPLY_SHAPING, RUN_CACHE_FILE
from ledgermind.bounded_read import irregular
from ledgermind.errors import DataError, UserError, option
from ledgermind.jsonl import BadLine, read_jsonl
from ledgermind.pipeline.config import chosen_values
from ledgermind.runs.atomic import atomic_write, atomic_write_json
from ledgermind.runs.files import (
    HYDRA_FILES,
    IDENTITY_FILE,
    LOCK_FILE,
    RECORDED_CONFIG,
    RESULTS_FILE,
    RUN_LOG,
    RUN_PATHS,
    TRAJECTORY_DIR,
    RunFileError,
    parse_yaml,
    read_json_object,
    read_yaml,
)
from ledgermind.runs.provenance import LOCATION_KEYS, sha256_json

# Top-level keys a resume may change without changing what is computed: which items (a resume
# may extend ``limit``), how fast, how it is shown, where it is logged, and this very switch.
# Backend keys a resume may change are those that do not shape a reply (``NOT_REPLY_SHAPING``, the
# response cache's one list).
RESUMABLE_KEYS = (*LOCATION_KEYS, "limit", "item_ids", "item_ids_file", "report", "resume")
# The identity fields compared on resume, in the order a mismatch is reported.
IDENTITY_FIELDS = (
    "variant",
    "model",
    "backend",
    "benchmark",
    "seed",
    "model_revision",
    "prompts_sha256",
    "decoding",
    "image_budget",
    "config_sha256",
)


class ResumeMode(str, Enum):
    """``resume=``: what a run does when its directory already holds another experiment."""

    AUTO = "auto"  # same experiment: resume; another: stop (exit 2) naming the field
    NEW = "new"  # another experiment: start a new directory beside it (``<dir>-2``, ...)

    @classmethod
    def parse(cls, value: Any) -> ResumeMode:
        return option(cls, str(value or "auto"), "resume")


class RunDirBusy(UserError):
    """Another process holds the run directory."""


class IdentityMismatch(UserError):
    """The run directory holds results of another experiment."""


# ------------------------------------------------------------------------------ identity
def resume_identity(identity: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a run identity (``RunIdentity.to_dict()``) that a resume must agree on.

    Its ``config_sha256`` hashes the values the resolved config chooses (``chosen_values``: a new key
    whose default keeps the old behaviour leaves it as it was) without the keys a resume may change."""
    record = {f: identity.get(f) for f in IDENTITY_FIELDS if f != "config_sha256"}
    rest = chosen_values({k: v for k, v in config.items() if k not in RESUMABLE_KEYS})
    if isinstance(rest.get("backend"), Mapping):
        rest["backend"] = {k: v for k, v in rest["backend"].items() if k not in NOT_REPLY_SHAPING}
    return record | {"config_sha256": sha256_json(rest)}


def recorded_identity(out_dir: Path) -> dict[str, Any] | None:
    """What the directory says it holds (``run_identity.json``), or None when it has no readable one."""
    try:
        identity = (read_json_object(out_dir, out_dir / IDENTITY_FILE) or {}).get("identity")
    except RunFileError:
        return None
    return identity if isinstance(identity, dict) else None


def _show(v: Any) -> str:
    text = v if isinstance(v, str) else json.dumps(v, sort_keys=True, default=str)
    return text[:12] if isinstance(v, str) and len(v) == 64 else text[:80]


ABSENT = "(not set)"  # a key one config has and the other lacks


def _leaves(node: Any, prefix: str = "") -> dict[str, Any]:
    """``{"pipeline.gamma": 0.5, ...}``: every leaf of a config by its dotted key."""
    if not isinstance(node, Mapping) or not node:
        return {prefix: node}
    return {
        k: v
        for key, child in node.items()
        for k, v in _leaves(child, f"{prefix}.{key}" if prefix else str(key)).items()
    }


def _resumable(key: str) -> bool:
    top, _, rest = key.partition(".")
    return top in RESUMABLE_KEYS or (top == "backend" and rest.partition(".")[0] in NOT_REPLY_SHAPING)


def config_changes(out_dir: Path, new_config_yaml: str) -> str | None:
    """``key was X, now Y`` for the keys (outside those a resume may change) on which the folder's
    recorded ``.hydra/config.yaml`` and this run's config differ; None when that cannot be told.

    Both are compared as written (``${oc.env:…}`` unresolved, as the folder records it) while the
    config hash is taken resolved: with no key written differently, the keys that read the
    environment are named, since only they can resolve to another value."""
    path = out_dir / RECORDED_CONFIG
    try:
        old, new = read_yaml(path) if path.is_file() else None, parse_yaml(new_config_yaml)
    except RunFileError:
        return None
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return None
    before, after = _leaves(old), _leaves(new)
    keys = sorted(
        k
        for k in before.keys() | after.keys()
        if before.get(k, ABSENT) != after.get(k, ABSENT) and not _resumable(k)
    )
    if not keys:  # the same text: a key read from the environment is the one that can resolve anew
        env = [f"{k} ({v})" for k, v in sorted(after.items()) if "${oc.env:" in str(v) and not _resumable(k)]
        if not env:
            return None
        return (
            "the config reads as before, but a key read from the environment may now resolve to another value: "
            + ", ".join(env[:5])
        )
    shown = [f"{k} was {_show(before.get(k, ABSENT))}, now {_show(after.get(k, ABSENT))}" for k in keys[:5]]
    return "; ".join(shown) + (f" (and {len(keys) - 5} more keys)" if len(keys) > 5 else "")


def check_identity(out_dir: Path, record: Mapping[str, Any], new_config_yaml: str) -> None:
    """Raise ``IdentityMismatch`` (one line) if ``out_dir`` holds another experiment, or results
    whose experiment it cannot tell.

    A directory without results holds nothing yet (a run that stopped at preflight): any run may take it.
    With results, only the identity its holder wrote counts: a missing or unreadable
    ``run_identity.json`` (``metrics.json`` records no config hash, and anyone can write either) is a
    refusal, never an adoption.
    """
    if not holds_results(out_dir):
        return
    old = recorded_identity(out_dir)
    if old is None:
        state = "unreadable" if (out_dir / IDENTITY_FILE).exists() else "missing"
        raise IdentityMismatch(
            f"{out_dir} holds results but its {IDENTITY_FILE} is {state}, so which experiment they belong to "
            f"cannot be told; use another hydra.run.dir, or add resume=new to start a new directory beside it"
        )
    # the first field on which they differ; one absent from ``old`` is skipped (an older version recorded fewer)
    differs = (
        f for f in IDENTITY_FIELDS if f in old and sha256_json(old.get(f)) != sha256_json(record.get(f))
    )
    field = next(differs, None)
    if field is None:
        return
    change = f"{field} was {_show(old.get(field))}, now {_show(record.get(field))}"
    if field == "config_sha256":
        change = config_changes(out_dir, new_config_yaml) or (
            f"the config (a key other than limit/concurrency/item_ids/output settings): {change}"
        )
    raise IdentityMismatch(
        f"{out_dir} holds another experiment: {change}; "
        f"use another hydra.run.dir, or add resume=new to start a new directory beside it"
    )


def check_selection(out_dir: Path, selected: Collection[str]) -> None:
    """Raise ``IdentityMismatch`` when the folder holds results of items this run does not select
    (a smaller ``limit``, other ``item_ids``): its metrics would be rewritten over a subset of the
    items ``results.jsonl`` keeps. A larger selection resumes."""
    if not holds_results(out_dir):
        return
    rows = read_jsonl(out_dir / RESULTS_FILE, bad=BadLine.SKIP, decode_errors="replace")
    held = {r.value["id"] for r in rows if isinstance(r.value, dict) and isinstance(r.value.get("id"), str)}
    extra = sorted(held - set(selected))
    if extra:
        raise IdentityMismatch(
            f"{out_dir} holds results of {len(extra)} items this run does not select ({', '.join(extra[:3])}"
            f"{', ...' if len(extra) > 3 else ''}), so its metrics would cover a subset of them; select them "
            "again (the limit/item_ids that made it), use another hydra.run.dir, or add resume=new to start a "
            "new directory beside it"
        )


def release_unstarted(out_dir: Path) -> None:
    """Take back what claiming a run wrote when the run was refused before its first item (a dead
    server, weights out of reach): its identity, the ``.hydra`` record, the log and the lock, then the
    folder and its ``.hydra`` if that left them empty. Why: a refused run did nothing, and a folder that
    looks like a run (``ledgermind ls``, a later resume) would say it did. Only those named files are
    removed (the run's own cache too, when it holds no reply), never anything else a folder given with
    ``hydra.run.dir`` holds, and nothing once an item has a result."""
    if holds_results(out_dir):
        return
    record = [out_dir / IDENTITY_FILE, out_dir / LOCK_FILE, out_dir / RUN_LOG]
    cache = out_dir / RUN_CACHE_FILE
    if _holds_no_reply(cache):  # opened before the preflight refused; a reply from an earlier try stays
        record += [cache, *(cache.with_name(cache.name + s) for s in ("-wal", "-shm"))]
    for path in [*record, *(out_dir / ".hydra" / n for n in HYDRA_FILES)]:
        if path.is_file() and not path.is_symlink():
            path.unlink()
    for folder in (out_dir / ".hydra", out_dir):
        if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
            folder.rmdir()


def _holds_no_reply(cache: Path) -> bool:
    if not cache.is_file() or cache.is_symlink():
        return False
    try:
        with closing(sqlite3.connect(f"file:{cache}?mode=ro", uri=True)) as db:
            return int(db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]) == 0
    except sqlite3.Error:
        return False


def holds_results(out_dir: Path) -> bool:
    """A non-empty ``results.jsonl``: the folder holds some experiment's answers (``RunDir.has_results``
    only asks whether a reader has a file to read)."""
    p = out_dir / RESULTS_FILE
    return p.is_file() and p.stat().st_size > 0


def fresh_sibling(out_dir: Path) -> Path:
    """``<dir>-2``, ``<dir>-3``, ...: the first that does not exist yet."""
    siblings = (out_dir.with_name(f"{out_dir.name}-{n}") for n in itertools.count(2))
    return next(s for s in siblings if not s.exists())


def check_own_files(out_dir: Path) -> None:
    """A ``DataError`` naming the first run file (a trajectory included) that is a symbolic link (the
    directory itself may be one) or neither a file nor a folder: a FIFO, socket or device, which a resume would wait on (a
    FIFO's reader waits for a writer) or read without end."""
    own = [*(out_dir / n for n in RUN_PATHS), *(out_dir / ".hydra" / n for n in HYDRA_FILES)]
    trajectories = out_dir / TRAJECTORY_DIR
    if trajectories.is_dir() and not trajectories.is_symlink():  # an unfinished item's is written later
        own += sorted(trajectories.iterdir())
    for p in own:
        if p.is_symlink():
            raise DataError(
                f"{p} is a symbolic link; a run folder's files must be its own (a resume would write through it): "
                "remove the link, or use another hydra.run.dir"
            )
        if not p.is_dir() and (why := irregular(p)):
            raise DataError(
                f"{p} {why}; a run folder's files must be its own files: remove it, or use another hydra.run.dir"
            )


# ------------------------------------------------------------------------------ lock
@dataclass
class RunLock:
    """An exclusive ``fcntl`` lock on ``<dir>/.lock`` for the life of the process that took it.

    The kernel drops the lock when the process dies, so a killed run never leaves a stale lock.
    """

    out_dir: Path
    _fh: TextIO | None = None

    def acquire(self) -> RunLock:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        fh = (self.out_dir / LOCK_FILE).open("a+", encoding="utf-8")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "unknown"
            fh.close()
            raise RunDirBusy(
                f"{self.out_dir} is in use by another run (pid {holder}); wait for it to finish or use another hydra.run.dir"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self._fh = fh
        return self

    def release(self) -> None:
        if self._fh is not None:
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None


def claim(
    out_dir: Path,
    record: Mapping[str, Any],
    mode: ResumeMode,
    hydra_files: Mapping[str, str],
    selected: Collection[str],
) -> tuple[Path, RunLock]:
    """Lock the run directory, check that it holds this experiment (or nothing yet) and no item
    outside ``selected`` (the ids this run selects), then record it.

    Returns the directory the run writes to (a new sibling under ``resume=new`` when the old one
    holds another experiment) and the held lock. Nothing is written before the lock is held and
    the checks pass, so a refused run leaves the directory as it found it (the ``.lock`` file aside).
    """
    lock_file = out_dir / LOCK_FILE
    if lock_file.is_symlink() or irregular(lock_file):
        check_own_files(out_dir)
    lock = RunLock(out_dir).acquire()
    try:
        check_own_files(out_dir)
        check_identity(out_dir, record, hydra_files.get("config.yaml", ""))
        check_selection(out_dir, selected)
    except IdentityMismatch:
        lock.release()
        if mode is not ResumeMode.NEW:
            raise
        return claim(fresh_sibling(out_dir), record, mode, hydra_files, selected)
    except BaseException:
        lock.release()
        raise
    # accepted (first run or same-identity resume): its identity and the ``.hydra`` files of the config
    # this process runs (``hydra_files``: ``HYDRA_FILES`` name -> text, from memory)
    for name, text in hydra_files.items():
        atomic_write(out_dir, out_dir / ".hydra" / name, text)
    atomic_write_json(out_dir, out_dir / IDENTITY_FILE, {"identity": dict(record)})
    return out_dir, lock
