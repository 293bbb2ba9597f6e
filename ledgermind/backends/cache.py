"""Durable response cache: each distinct request is answered once — per run, per sweep, or per machine.

The key is a sha256 over the canonical request (messages with image *content* hashes, decoding
parameters, structured-output constraints) and the cache identity: the backend kind, its config
and the model's config, each without the keys that say how to reach or schedule a model rather
than what it answers (``NOT_REPLY_SHAPING``: URLs, timeouts, retries, concurrency, routing, ...),
and the client-side image budget. Everything else is identity — the weights' origin and revision,
the served model name (a LoRA adapter is served under its own), dtype, quantisation, the
processor's pixel limits, a simulated backbone's fault rates and seed: a key left out answers one
configuration with another's replies, a key kept needlessly only costs a call. A file shared by
several runs (``cache.scope`` sweep/root) is also named by the backend's reply-shaping parameters
(``backend_signature``), so a sweep over them keeps one file each. Only deterministic requests
are cached (temperature 0; a sampled reply is one draw, not *the* answer).

Every stored reply carries the digest of the canonical request it answers, so a row that answers
another request (edited, copied or swapped by hand) is a miss with a warning naming the file,
never a silently wrong answer.

Why share it (``cache.scope``): the variants of a Table 3 sweep send many byte-identical requests
(the plan, the observations, every DIRECT-path call). One answer per distinct request costs the
GPU once and makes the variants exactly paired — on a real server the same request can come back
different under another batch composition, and that noise would show up as a spurious Δ.

Concurrent writers (two jobs of a parallel launcher, two sweeps) share one sqlite file in WAL mode
with a busy timeout; the first writer of a key wins (``INSERT OR IGNORE``) and a later writer of
the same key takes the stored reply, so every run of the sweep sees one answer. Jobs that run at
once miss the same request at the same moment, so a miss first *claims* its key (a ``pending`` row
with an owner token and time): a job that finds the key claimed waits for the owner's reply
instead of sending it again. A failure is never shared as an answer — a claim that goes without a
reply (the owner's call failed) is taken by a waiter, which sends the request itself. An owner
renews its claim every ``HEARTBEAT_S`` while its call runs, so a claim not renewed for
``CLAIM_STALE_S`` is a dead owner's (a job killed with SIGKILL, a preempted node) and is taken
over: a killed job holds up a sweep, or its own resume, for that long at most, however long a
live call may take. An owner names its host and process, so a claim of a process of this host
that no longer runs (killed, then resumed here) is taken over at once. WAL needs a local
(or at least POSIX-locking) filesystem: see docs/scaling.md for NFS. Each write is committed
(``synchronous=FULL``) before the reply is handed back, so a crash after an item never loses a
reply that item already used.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import re
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, replace
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from ledgermind.backends.base import Backend, GenerationRequest, Reply, WrappingBackend, map_parts
from ledgermind.backends.images import image_digest
from ledgermind.errors import ConfigError, UserError, option

log = logging.getLogger(__name__)

KEY_VERSION = 2  # bump when the canonical form changes (2: identity includes backend kind + image limits)
BUSY_TIMEOUT_S = 60.0  # a writer waits this long for another process's write lock
POLL_S, MAX_POLL_S = 0.01, 0.25  # a job waiting for another's reply looks again after this, doubling
HEARTBEAT_S = 5.0  # an owner renews its claim this often
CLAIM_STALE_S = 30.0  # a claim not renewed for this long is a dead owner's
# Keys (at any depth of the backend and model configs) that say how to reach or schedule a model,
# never what it answers. The one list: everything not named here is part of the cache identity.
NOT_REPLY_SHAPING = frozenset(
    {
        "base_urls",
        "api_key_env",
        "transport",
        "routing",
        "cooldown_s",
        "concurrency",
        "per_server_concurrency",
        "load_epsilon",
        "timeout_s",
        "connect_timeout_s",
        "max_retries",
        "backoff_base_s",
        "backoff_cap_s",
        "max_reply_bytes",
        "banner",
        "gpu_memory_utilization",  # engine memory and batch size: the same request, another batch
        "max_num_seqs",
        "max_num_batched_tokens",
        "vision_cache_dir",  # where the simulated backbone keeps its own deterministic reads
        "perception_cache",
    }
)
# a run's own cache file, inside its folder (a file of runs/files.RUN_PATHS)
RUN_CACHE_FILE = "responses.sqlite"
ROW_DIGEST = "request_sha256"  # the field of a stored row naming the request it answers
# sqlite error names that mean the file itself is damaged (anything else — I/O error, full disk,
# a lock held too long — is the machine's trouble and must never move a valid cache aside)
CORRUPT_ERRORS = frozenset({"SQLITE_NOTADB", "SQLITE_CORRUPT"})
_STORED_REPLY = TypeAdapter(Reply)


class CacheMode(str, Enum):
    OFF = "off"
    READWRITE = "readwrite"
    REPLAY = "replay"  # read only; a miss is an error


class CacheScope(str, Enum):
    """Who shares one cache file (``cache.scope``)."""

    RUN = "run"  # <output_dir>/responses.sqlite: resume only
    SWEEP = "sweep"  # <hydra sweep dir>/responses-<signature>.sqlite for every job of a multirun (a single run: RUN)
    ROOT = "root"  # <cache.root>/<model>.sqlite: every run of this model on this machine


class CacheMiss(UserError):
    """Replay mode found no recorded reply for a request (the run differs from the recording)."""


def reply_shaping(node: Any) -> Any:
    """``node`` without the keys of ``NOT_REPLY_SHAPING``, at any depth."""
    if isinstance(node, Mapping):
        return {k: reply_shaping(v) for k, v in node.items() if k not in NOT_REPLY_SHAPING}
    if isinstance(node, list | tuple):
        return [reply_shaping(v) for v in node]
    return node


def cache_identity(
    model_cfg: Mapping[str, Any], backend_cfg: Mapping[str, Any], backend_kind: str, budget: Any
) -> str:
    """Backend kind, backend and model configs as far as they shape replies, image budget: one string."""
    identity = {
        "backend": backend_kind,
        "backend_config": reply_shaping(backend_cfg),
        "model": reply_shaping(model_cfg),
        "image_budget": budget.key(),
    }
    return json.dumps(identity, sort_keys=True, default=str)


def backend_signature(backend_cfg: Mapping[str, Any] | None) -> str:
    """A short hash of the backend parameters that shape its replies (``reply_shaping``)."""
    shaping = json.dumps(reply_shaping(backend_cfg or {}), sort_keys=True, default=str)
    return hashlib.sha256(shaping.encode()).hexdigest()[:12]


def cache_path(
    cache_cfg: Mapping[str, Any],
    output_dir: str | Path,
    model_name: str = "model",
    backend_cfg: Mapping[str, Any] | None = None,
) -> Path:
    """The cache file of a run: ``cache.path`` when set, else by ``cache.scope`` (``CacheScope``).

    A shared file (sweep, root) is named by ``backend_signature``: runs whose backends would answer
    the same request differently never share one. The sweep directory comes from Hydra's runtime
    config; outside a multirun (a single run, a test composing the config) ``sweep`` falls back to
    the run's own file."""
    if cache_cfg.get("path"):
        return Path(str(cache_cfg["path"]))
    scope = option(CacheScope, str(cache_cfg.get("scope") or CacheScope.RUN.value), "cache.scope")
    signature = backend_signature(backend_cfg)
    if scope is CacheScope.ROOT:
        root = cache_cfg.get("root")
        if not root:
            raise ConfigError("cache.scope=root needs cache.root (a directory)")
        model = re.sub(r"[^A-Za-z0-9._-]+", "_", model_name) or "model"
        return Path(str(root)) / f"{model}-{signature}.sqlite"
    sweep = sweep_dir() if scope is CacheScope.SWEEP else None
    if sweep is None:
        return Path(str(output_dir)) / RUN_CACHE_FILE
    return sweep / f"responses-{signature}.sqlite"


def sweep_dir() -> Path | None:
    """The sweep directory of a Hydra multirun; None outside one (a single run, no Hydra app)."""
    try:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        hc = HydraConfig.get()
    except (ImportError, ValueError):  # not inside a Hydra app
        return None
    return Path(str(hc.sweep.dir)) if hc.mode == RunMode.MULTIRUN else None


def request_key(request: GenerationRequest, model_identity: str, digests: list[str] | None = None) -> str:
    """sha256 of the canonical request (module docstring); ``digests``: the images' content hashes
    in order, when the caller has them already."""
    shas = iter(digests) if digests is not None else None
    messages = map_parts(
        request.messages,
        lambda text: text,
        lambda p: {"image_sha256": next(shas) if shas else image_digest(p)},
    )
    canonical = {
        "v": KEY_VERSION,
        "model": model_identity,
        "messages": messages,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "stop": list(request.stop),
        "seed": request.seed,
        "json_schema": request.json_schema,
        "regex": request.regex,
    }
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class MisfiledRow(ValueError):
    """A well-formed stored reply that answers another request than the key it is stored under."""


def reply_from_row(payload: str, key: str) -> Reply:
    """A stored reply, type-checked field by field (``Reply``'s strict pydantic config): a row of
    the wrong JSON shape (``{"text": 5}``, a list, an unknown field) raises ``ValueError``, one
    stored for another request ``MisfiledRow`` — the caller treats either as a miss, because a
    retry of the item would read the same row again and could never recover."""
    data = json.loads(payload)
    digest = data.pop(ROW_DIGEST, None) if isinstance(data, dict) else None
    reply = _STORED_REPLY.validate_json(json.dumps(data))  # JSON mode: strict yet from an object
    if digest != key:
        raise MisfiledRow(f"the reply stored under {key[:12]}… answers request {str(digest)[:12]}…")
    return reply


def is_busy(exc: sqlite3.Error) -> bool:
    """Another connection holds the lock (``SQLITE_BUSY*``, ``SQLITE_LOCKED*``): retry; the file
    and the disk are fine. An error Python raised itself carries no SQLite name and is not busy."""
    return getattr(exc, "sqlite_errorname", "").startswith(("SQLITE_BUSY", "SQLITE_LOCKED"))


class ResponseCache:
    """A sqlite table ``key -> reply`` shared by threads and by processes.

    The cache only saves work, so damage to it never fails an item: a file that is not a
    database is moved aside (``<file>.corrupt``) and rebuilt, an unreadable or mistyped row is a
    miss (the fresh reply replaces it). A disk that fails (I/O error, full, locked for longer than
    the busy timeout) is *not* damage: the file is left alone and the run continues without it
    (reads miss, writes are skipped) — each reported once, in one line. ``recover=False`` (exact
    replay, where the cache *is* the data) makes an unusable file an error.

    ``origin`` labels the rows this process writes (the run's directory), so a hit says whether
    another run wrote it (``shared``); ``owner`` names this connection's claims.
    """

    def __init__(self, path: str | Path, *, recover: bool = True, origin: str = "") -> None:
        self.path = Path(path)
        self.origin = origin
        self.recover = recover
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex}"
        self._lock = threading.Lock()
        self._warned: set[str] = set()
        self._db: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = self._open()
        except (sqlite3.Error, OSError) as exc:
            if not recover:
                raise ConfigError(
                    f"response cache {self.path} is unreadable ({exc}); replay needs an intact file"
                ) from None
            if getattr(exc, "sqlite_errorname", "") in CORRUPT_ERRORS:
                self._db = self._rebuild(exc)
            else:
                self._warn("open", f"cannot open ({exc}); running without it this run")

    @property
    def usable(self) -> bool:
        return self._db is not None

    def _rebuild(self, exc: Exception) -> sqlite3.Connection | None:
        aside = self.path.with_name(self.path.name + ".corrupt")
        try:
            self.path.replace(aside)
            for suffix in ("-wal", "-shm"):
                self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)
            self._warn("open", f"the file is unreadable ({exc}); moved to {aside.name}, starting empty")
            return self._open()
        except (OSError, sqlite3.Error) as again:
            self._warn("open", f"cannot rebuild ({again}); running without it this run")
            return None

    def _open(self) -> sqlite3.Connection:
        """Open, retrying while another process holds the lock.

        SQLite's busy timeout does not cover every open: two processes that switch a fresh file
        to WAL at the same moment can get "database is locked" at once (SQLite refuses to wait
        where waiting could deadlock). Measured: 2 of 150 rounds of three concurrent opens. The
        lock is gone a moment later, so a short backoff up to the busy timeout opens it."""
        deadline, delay = time.monotonic() + BUSY_TIMEOUT_S, 0.01
        while True:
            try:
                return self._connect()
            except sqlite3.OperationalError as exc:
                if not is_busy(exc) or time.monotonic() + delay > deadline:
                    raise
            time.sleep(delay)
            delay = min(2 * delay, 0.5)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_S)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL, "
                "model TEXT NOT NULL, stage TEXT NOT NULL, created REAL NOT NULL, origin TEXT NOT NULL DEFAULT '')"
            )
            # a read-only recording still replays (and claims nothing)
            with contextlib.suppress(sqlite3.Error):
                db.execute(
                    "CREATE TABLE IF NOT EXISTS pending (key TEXT PRIMARY KEY, owner TEXT NOT NULL, claimed REAL NOT NULL)"
                )
        except sqlite3.Error:
            db.close()
            raise
        return db

    def _warn(self, kind: str, message: str) -> None:
        """One line per kind of trouble and file, however often it happens."""
        if kind not in self._warned:
            self._warned.add(kind)
            log.warning("response cache %s: %s", self.path, message)

    def lookup(self, key: str) -> tuple[Reply, str] | None:
        """(reply, origin of its row) or None; a damaged, mistyped or misfiled row is a miss (and
        is removed, unless this file is a recording replayed as it is)."""
        if self._db is None:
            return None
        try:
            with self._lock:
                row = self._db.execute("SELECT reply, origin FROM replies WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            self._warn("read", f"cannot read ({type(exc).__name__}: {exc}); treated as a miss")
            return None
        if row is None:
            return None
        try:
            return reply_from_row(row[0], key), str(row[1] or "")
        except MisfiledRow as exc:
            self._warn("misfiled", f"{exc}; treated as a miss")
        except (ValueError, TypeError) as exc:
            self._warn("row", f"unreadable entry ({type(exc).__name__}: {exc}); treated as a miss")
        if self.recover:  # a failed delete: the next put is then ignored, a later read misses again
            self._best_effort("DELETE FROM replies WHERE key = ?", key)
        return None

    def put(self, key: str, reply: Reply, stage: str = "") -> Reply:
        """Store ``reply`` unless another writer stored this key first; returns the stored reply
        (the first writer's), so every run sharing the file uses one answer per request.
        Best-effort: a failed write is reported once and the fresh reply is returned."""
        if self._db is None:
            return reply
        payload = json.dumps({**asdict(reply), ROW_DIGEST: key}, default=str)
        try:
            with self._lock:
                cur = self._db.execute(
                    "INSERT OR IGNORE INTO replies (key, reply, model, stage, created, origin) VALUES (?, ?, ?, ?, ?, ?)",
                    (key, payload, reply.model, stage, time.time(), self.origin),
                )  # autocommit (isolation_level=None): durable when execute returns
            if cur.rowcount == 0:
                stored = self.lookup(key)
                return stored[0] if stored else reply
        except (sqlite3.Error, UnicodeEncodeError) as exc:
            self._warn("write", f"cannot store a reply ({type(exc).__name__}: {exc}); not cached")
        return reply

    def claim(self, key: str, stale_s: float) -> bool:
        """Claim ``key`` for this connection's send: True when nobody else holds it (no claim, one
        older than ``stale_s``, or one of a process of this host that no longer runs). An unusable
        file, or a claim that cannot be written, is True — this job sends, as it would without the
        claims — reported once."""
        if self._db is None:
            return True
        now = time.time()
        try:
            with self._lock:
                # a read first: polls take no write lock
                row = self._db.execute("SELECT claimed, owner FROM pending WHERE key = ?", (key,)).fetchone()
                fresh = row is not None and row[0] >= now - stale_s
                dead = fresh and _gone_from_this_host(row[1])
                if fresh and not dead:
                    return False
                cur = self._db.execute(
                    "INSERT INTO pending (key, owner, claimed) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE "
                    "SET owner = excluded.owner, claimed = excluded.claimed "
                    "WHERE pending.claimed < ? OR pending.owner = ?",
                    (key, self.owner, now, now - stale_s, row[1] if dead else None),
                )  # one statement: of two jobs taking over one stale or dead claim, one wins
            return cur.rowcount > 0
        except sqlite3.Error as exc:
            self._warn(
                "claim",
                f"cannot claim a request ({type(exc).__name__}: {exc}); jobs at once may send it twice",
            )
            return True

    def renew(self, key: str) -> None:
        """Say this connection's call of ``key`` is still running (its claim must not go stale;
        unrenewed, a waiter sends the request too)."""
        self._best_effort(
            "UPDATE pending SET claimed = ? WHERE key = ? AND owner = ?", time.time(), key, self.owner
        )

    def release(self, key: str) -> None:
        """Drop this connection's claim of ``key`` (after its reply is stored, or its call failed;
        a claim left behind goes stale)."""
        self._best_effort("DELETE FROM pending WHERE key = ? AND owner = ?", key, self.owner)

    def _best_effort(self, sql: str, *params: Any) -> None:
        """One write whose failure costs only time (a missed renewal, a claim or row left behind)."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error), self._lock:
                self._db.execute(sql, params)

    def close(self) -> None:
        if self._db is not None:
            with self._lock:
                self._db.close()
            self._db = None


def _gone_from_this_host(owner: str) -> bool:
    """Whether a claim's owner (``host:pid:token``) was a process of this host that no longer runs.
    Another host's owner, this process, a live or unknowable process: False (its claim stands until
    it goes unrenewed). A zombie (killed, not yet reaped) is gone."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # not ours to signal: it runs
        return False
    with contextlib.suppress(OSError):
        return "\nState:\tZ" in Path(f"/proc/{pid}/status").read_text()
    return False


class CachedBackend(WrappingBackend):
    """Wraps any backend with a ``ResponseCache``. Not registered: built by ``build_backend``.

    A hit is returned with ``cached=True`` and ``meta["cache"]`` = ``"shared"`` when another run
    wrote the row (``"run"``: this run, e.g. before a resume), which the census counts. Concurrent
    identical requests of this process are sent once (the others await the first); of other jobs
    sharing the file, through its claims (``ResponseCache.claim``): a reply another job sent while
    this one waited is a shared hit."""

    def __init__(
        self, inner: Backend, cache: ResponseCache, mode: CacheMode | str, model_identity: str
    ) -> None:
        super().__init__(inner)
        self.cache, self.mode, self.model_identity = cache, CacheMode(mode), model_identity
        self.hits = self.shared_hits = self.misses = 0
        self.heartbeat_s, self.claim_s = HEARTBEAT_S, CLAIM_STALE_S
        self._inflight: dict[tuple[int, str], asyncio.Future[Reply]] = {}

    async def generate(self, request: GenerationRequest) -> Reply:
        if not request.deterministic:
            if self.mode is CacheMode.REPLAY:
                raise CacheMiss(
                    f"replay mode cannot answer a sampled request (temperature={request.temperature})"
                )
            return await self.inner.generate(request)
        key = request_key(request, self.model_identity)
        if (hit := self._hit(self.cache.lookup(key))) is not None:
            return hit
        slot = (id(asyncio.get_running_loop()), key)
        if slot in self._inflight:  # the same request is on its way: share its answer
            try:
                shared = await asyncio.shield(self._inflight[slot])
            except asyncio.CancelledError:
                # this call's own cancellation goes on; the sender's means this call sends itself
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise
                shared = None
            if shared is not None:
                return self._as_hit(shared, shared.meta.get("cache", "run"))
        if self.mode is CacheMode.REPLAY:
            self.misses += 1
            raise CacheMiss(
                f"replay mode: no recorded reply for stage {request.stage!r} (key {key[:12]}…) in "
                f"{self.cache.path}; the run differs from the recording, or use cache=readwrite"
            )
        return await self._send(request, key, slot)

    async def _send(self, request: GenerationRequest, key: str, slot: tuple[int, str]) -> Reply:
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._inflight[slot] = future
        try:
            reply = self._hit(await self._claim(key)) or await self._send_claimed(request, key)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning when nobody waits
            raise
        finally:
            self._inflight.pop(slot, None)
        future.set_result(reply)
        return reply

    async def _claim(self, key: str) -> tuple[Reply, str] | None:
        """Another job's stored reply to this request, or None once this job holds its claim."""
        delay = POLL_S
        while True:
            claimed = self.cache.claim(key, self.claim_s)
            found = self.cache.lookup(key)  # after the claim: an owner stores its reply, then releases
            if found is not None and claimed:
                self.cache.release(key)
            if found is not None or claimed:
                return found
            await asyncio.sleep(delay)
            delay = min(2 * delay, MAX_POLL_S)

    async def _send_claimed(self, request: GenerationRequest, key: str) -> Reply:
        self.misses += 1
        heartbeat = asyncio.ensure_future(self._renew(key))
        try:
            return self.cache.put(key, await self.inner.generate(request), stage=request.stage)
        finally:  # stored, or failed: a waiting job then sends it itself
            heartbeat.cancel()
            self.cache.release(key)

    async def _renew(self, key: str) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_s)
            self.cache.renew(key)

    def _hit(self, found: tuple[Reply, str] | None) -> Reply | None:
        if found is None:
            return None
        reply, origin = found
        return self._as_hit(reply, "shared" if origin != self.cache.origin else "run")

    def _as_hit(self, reply: Reply, origin: str) -> Reply:
        self.hits += 1
        self.shared_hits += origin == "shared"
        return replace(reply, cached=True, meta={**reply.meta, "cache": origin})

    async def preflight(self) -> None:
        if self.mode is not CacheMode.REPLAY:  # exact replay never reaches the model
            await self.inner.preflight()

    async def aclose(self) -> None:
        await self.inner.aclose()
        self.cache.close()
