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
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, TextIO

from ledgermind.errors import ConfigError, DataError, UserError
from ledgermind.runs.atomic import atomic_write_json, atomic_write_text
from ledgermind.runs.files import (
    HYDRA_FILES,
    IDENTITY_FILE,
    LOCK_FILE,
    RESULTS_FILE,
    RUN_PATHS,
    RunFileError,
    read_json_object,
)
from ledgermind.runs.provenance import LOCATION_KEYS, sha256_json

# Top-level keys a resume may change without changing what is computed: which items (a resume
# may extend ``limit``), how fast, how it is shown, where it is logged, and this very switch.
RESUMABLE_KEYS = (*LOCATION_KEYS, "limit", "item_ids", "item_ids_file", "report", "resume")
# Backend keys that say where/how fast the model is reached, not which model answers.
RESUMABLE_BACKEND_KEYS = (
    "base_urls",
    "concurrency",
    "timeout_s",
    "connect_timeout_s",
    "max_retries",
    "backoff_base_s",
    "backoff_cap_s",
    "api_key_env",
    "gpu_memory_utilization",
)
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
        try:
            return cls(str(value or "auto"))
        except ValueError:
            raise ConfigError(f"resume must be one of {[m.value for m in cls]}, got {value!r}") from None


class RunDirBusy(UserError):
    """Another process holds the run directory."""


class IdentityMismatch(UserError):
    """The run directory holds results of another experiment."""


# ------------------------------------------------------------------------------ identity
def resume_config_hash(config: Mapping[str, Any]) -> str:
    """sha256 of the resolved config without the keys a resume may change."""
    rest = {k: v for k, v in config.items() if k not in RESUMABLE_KEYS}
    if isinstance(rest.get("backend"), Mapping):
        rest["backend"] = {k: v for k, v in rest["backend"].items() if k not in RESUMABLE_BACKEND_KEYS}
    return sha256_json(rest)


def resume_identity(identity: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a run identity (``RunIdentity.to_dict()``) that a resume must agree on."""
    record = {f: identity.get(f) for f in IDENTITY_FIELDS if f != "config_sha256"}
    record["config_sha256"] = resume_config_hash(config)
    return record


def first_difference(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """The first identity field on which two records differ (fields absent from ``old`` are skipped:
    a directory written by an older version recorded fewer)."""
    for f in IDENTITY_FIELDS:
        if f in old and sha256_json(old.get(f)) != sha256_json(new.get(f)):
            return f
    return None


def recorded_identity(out_dir: Path) -> dict[str, Any] | None:
    """What the directory says it holds (``run_identity.json``), or None when it has no readable one."""
    try:
        data = read_json_object(out_dir / IDENTITY_FILE)
    except RunFileError:
        return None
    if isinstance(data, dict) and isinstance(data.get("identity"), dict):
        return data["identity"]
    return None


def _show(v: Any) -> str:
    text = v if isinstance(v, str) else json.dumps(v, sort_keys=True, default=str)
    return text[:12] if isinstance(v, str) and len(v) == 64 else text[:80]


def check_identity(out_dir: Path, record: Mapping[str, Any]) -> None:
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
    field = first_difference(old, record)
    if field is None:
        return
    what = (
        "the config (a key other than limit/concurrency/item_ids/output settings)"
        if field == "config_sha256"
        else field
    )
    raise IdentityMismatch(
        f"{out_dir} holds another experiment: {what} was {_show(old.get(field))}, now {_show(record.get(field))}; "
        f"use another hydra.run.dir, or add resume=new to start a new directory beside it"
    )


def accept(out_dir: Path, record: Mapping[str, Any], hydra_files: Mapping[str, str]) -> None:
    """Record an accepted run (first run or same-identity resume): its identity and the ``.hydra``
    files of the config this process runs (``hydra_files``: name -> text, from memory)."""
    for name, text in hydra_files.items():
        if name in HYDRA_FILES:
            atomic_write_text(out_dir / ".hydra" / name, text)
    atomic_write_json(out_dir / IDENTITY_FILE, {"identity": dict(record)})


def holds_results(out_dir: Path) -> bool:
    """A non-empty ``results.jsonl``: the folder holds some experiment's answers (``RunDir.has_results``
    only asks whether a reader has a file to read)."""
    p = out_dir / RESULTS_FILE
    return p.is_file() and p.stat().st_size > 0


def fresh_sibling(out_dir: Path) -> Path:
    """``<dir>-2``, ``<dir>-3``, ...: the first that does not exist yet."""
    n = 2
    while (candidate := out_dir.with_name(f"{out_dir.name}-{n}")).exists():
        n += 1
    return candidate


def check_no_links(out_dir: Path) -> None:
    """A ``DataError`` naming the first run file that is a symbolic link (the directory itself may be one)."""
    for name in RUN_PATHS:
        p = out_dir / name
        if p.is_symlink():
            raise DataError(
                f"{p} is a symbolic link; a run folder's files must be its own (a resume would write through it): "
                "remove the link, or use another hydra.run.dir"
            )
    hydra = out_dir / ".hydra"
    for name in HYDRA_FILES:
        if (hydra / name).is_symlink():
            raise DataError(f"{hydra / name} is a symbolic link; remove it, or use another hydra.run.dir")


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
    out_dir: Path, record: Mapping[str, Any], mode: ResumeMode, hydra_files: Mapping[str, str] | None = None
) -> tuple[Path, RunLock]:
    """Lock the run directory, check that it holds this experiment (or nothing yet), then record it.

    Returns the directory the run writes to (a new sibling under ``resume=new`` when the old one
    holds another experiment) and the held lock. Nothing is written before the lock is held and
    the checks pass, so a refused run leaves the directory as it found it (the ``.lock`` file aside).
    """
    if (out_dir / LOCK_FILE).is_symlink():
        check_no_links(out_dir)
    lock = RunLock(out_dir).acquire()
    try:
        check_no_links(out_dir)
        check_identity(out_dir, record)
    except IdentityMismatch:
        lock.release()
        if mode is not ResumeMode.NEW:
            raise
        return claim(fresh_sibling(out_dir), record, mode, hydra_files)
    except BaseException:
        lock.release()
        raise
    accept(out_dir, record, hydra_files or {})
    return out_dir, lock
