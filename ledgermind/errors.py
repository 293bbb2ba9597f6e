"""Exception hierarchy.

User-caused problems (bad config, missing data, server down) are subclasses of ``UserError`` so
that entry points can print them as one clear line instead of a stack trace. Failures inside one
item (a tool crash, an unparsable reply) are *not* raised past the item: they become tool
anomalies and repair events in that item's trajectory.
"""

from __future__ import annotations

import difflib
import errno
from enum import Enum
from typing import Any, TypeVar


def first_line(exc: BaseException, default: str | None = None) -> str:
    """The first line of ``exc``'s message, for the one-line errors users see; an empty message is
    ``default`` (the exception's type name when not given), never an ``IndexError`` of its own."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__ if default is None else default


class LedgerMindError(Exception):
    """Base class of every error this package raises on purpose."""


class UserError(LedgerMindError):
    """Something the user can fix: a path, a config value, a server address, a missing extra."""


class ConfigError(UserError):
    """An invalid or inconsistent configuration value."""


E = TypeVar("E", bound=Enum)


def option(cls: type[E], value: Any, key: str) -> E:
    """``value`` as a member of the closed set ``cls``, or one line naming the key, the allowed
    values and the closest one: a config option is typed by hand more often than not."""
    try:
        return cls(value)
    except ValueError:
        allowed = [str(m.value) for m in cls]
        close = difflib.get_close_matches(str(value), allowed, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"{key} must be one of {allowed}, got {value!r}{hint}") from None


class DataError(UserError):
    """Missing or malformed input data (dataset files, images)."""


class MissingExtraError(UserError):
    """An optional dependency group is not installed (e.g. ``pip install ledgermind[vllm]``)."""

    def __init__(self, feature: str, extra: str, module: str) -> None:
        super().__init__(
            f"{feature} needs the optional dependency '{module}', which is not installed: "
            f"pip install 'ledgermind[{extra}]'"
        )


class ProvenanceError(LedgerMindError):
    """An attempt to put content into the ledger without tool provenance (violates invariant I1)."""


class LedgerError(LedgerMindError):
    """An invalid ledger operation (unknown id, illegal lifecycle transition, dependency cycle)."""


class ToolError(LedgerMindError):
    """A tool failed. Tools catch this themselves and return an error ``ToolOutput`` (trigger T1)."""


class BackendError(LedgerMindError):
    """The model backend failed after its retries (server down, 4xx, malformed response)."""


class PreflightError(UserError):
    """A backend cannot serve the run (server unreachable, wrong model served); checked before any item."""


class BackendTimeout(BackendError):
    """The model backend did not answer within its timeout."""


def user_error_in(exc: BaseException) -> UserError | None:
    """The ``UserError`` behind ``exc``, if any: Hydra's ``instantiate`` wraps what a constructor
    raised (``InstantiationException: Error in call to target ... ConfigError(...)``), so entry
    points look through the cause chain before deciding an error is a bug."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, UserError):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


class FailureKind(str, Enum):
    """Why a step of one item failed: decided once, at the item boundary (``classify_failure``).

    Only ``EVIDENCE`` is part of the method (a tool legitimately found nothing on this input:
    trigger T1, repaired). The others mean the answer was produced without the item's full
    evidence or model: the item is an error with its cause, left out of accuracy and retried on
    resume — never a wrong answer.
    """

    INFRASTRUCTURE = "infrastructure"  # disk, permission, cache, an engine, a tool's remote service
    DATA = "data"  # this item's input (an unreadable image, a bad row)
    MODEL = "model"  # the backend failed after its retries
    EVIDENCE = "evidence"  # the tool ran and found nothing usable (T1 tool anomaly)


# errno values that say the machine's storage failed, not the input (a full disk, a read-only mount).
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EIO, errno.EACCES, errno.EPERM})


def classify_failure(exc: BaseException) -> FailureKind:
    """The failure class of an exception a tool or engine raised.

    An exception class may declare its own (``failure_kind``: an image too small to hold text is
    evidence, not a broken input). Otherwise: a backend error is the model's; a ``DataError`` (an
    image that cannot be read) is the input's; an ``OSError`` (disk full, read-only cache,
    permission, a dead socket), ``MemoryError`` or a ``UserError`` raised while an engine loads
    (a missing extra, a bad setting) is the machine's; anything else is the tool's own verdict on
    this input.
    """
    declared = getattr(exc, "failure_kind", None)
    if isinstance(declared, FailureKind):
        return declared
    if isinstance(exc, BackendError):
        return FailureKind.MODEL
    if isinstance(exc, DataError):
        return FailureKind.DATA
    if isinstance(exc, (OSError, MemoryError, UserError)):
        return FailureKind.INFRASTRUCTURE
    return FailureKind.EVIDENCE


# sqlite reports the same storage failures in its own words (``sqlite3.OperationalError``)
SQLITE_DISK_MESSAGES = ("database or disk is full", "disk I/O error", "attempt to write a readonly database")


def is_disk_failure(exc: BaseException) -> bool:
    """A failure of the storage itself (full, read-only, quota, I/O, permission), from the OS or sqlite."""
    if isinstance(exc, OSError):
        return exc.errno in DISK_ERRNOS
    return type(exc).__name__ == "OperationalError" and any(m in str(exc) for m in SQLITE_DISK_MESSAGES)
