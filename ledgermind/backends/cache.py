"""Durable response cache: resume without recompute, and exact replay of a recorded run.

The key is a sha256 over the canonical request (messages with image *content* hashes, decoding
parameters, structured-output constraints) and the cache identity: the weights' origin, the
backend kind, and everything that changes how images reach the model (the processor's pixel
limits ``model.vllm_args.mm_processor_kwargs``, ``limit_mm_per_prompt`` and the client-side image
budget). A reply made under one image budget is therefore never replayed for another. Only
deterministic (temperature 0) requests are cached: a sampled reply is one draw, not *the* answer.
Each write is committed (``synchronous=FULL``) before the reply is handed back, so a crash after
an item never loses a reply that item already used.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
from dataclasses import asdict
from enum import Enum
from pathlib import Path
from typing import Any

from ledgermind.backends.base import Backend, GenerationRequest, Reply
from ledgermind.backends.images import image_digest
from ledgermind.errors import ConfigError, UserError

log = logging.getLogger(__name__)

KEY_VERSION = 2  # bump when the canonical form changes (2: identity includes backend kind + image limits)


class CacheMode(str, Enum):
    OFF = "off"
    READWRITE = "readwrite"
    REPLAY = "replay"  # read only; a miss is an error


class CacheMiss(UserError):
    """Replay mode found no recorded reply for a request (the run differs from the recording)."""


def cache_identity(ref: Any, backend_kind: str, budget: Any) -> str:
    """Model origin + backend kind + image limits (see module docstring), as one stable string."""
    limits = {
        "mm_processor_kwargs": dict(ref.vllm_args.get("mm_processor_kwargs") or {}),
        "limit_mm_per_prompt": dict(ref.vllm_args.get("limit_mm_per_prompt") or {}),
        "budget": budget.key(),
    }
    return f"{ref.identity}|{backend_kind}|{json.dumps(limits, sort_keys=True)}"


def canonical_request(
    request: GenerationRequest, model_identity: str, digests: list[str] | None = None
) -> dict[str, Any]:
    """``digests``: the images' content hashes in order, when the caller has them already."""
    shas = iter(digests) if digests is not None else None
    messages = [
        {
            "role": m.role,
            "content": [
                p if isinstance(p, str) else {"image_sha256": next(shas) if shas else image_digest(p)}
                for p in m.content
            ],
        }
        for m in request.messages
    ]
    return {
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


def request_key(request: GenerationRequest, model_identity: str, digests: list[str] | None = None) -> str:
    canon = json.dumps(canonical_request(request, model_identity, digests), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()


class ResponseCache:
    """A sqlite table ``key -> reply``; safe to share between threads of one process.

    The cache only saves work, so damage to it never fails an item: a file that is not a
    database is moved aside (``<file>.corrupt``) and rebuilt, an unreadable row is a miss (the
    fresh reply replaces it), a failed write is skipped — each reported once, in one line.
    ``recover=False`` (exact replay, where the cache *is* the data) makes a damaged file an error.
    """

    def __init__(self, path: str | Path, *, recover: bool = True) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._warned: set[str] = set()
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as exc:
            if not recover:
                raise ConfigError(f"response cache {self.path} is unreadable ({exc}); replay needs an intact file") from None
            aside = self.path.with_name(self.path.name + ".corrupt")
            self.path.replace(aside)
            for suffix in ("-wal", "-shm"):
                self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)
            self._warn("open", f"response cache {self.path} is unreadable ({exc}); moved to {aside.name}, starting empty")
            self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL, "
                "model TEXT NOT NULL, stage TEXT NOT NULL, created REAL NOT NULL)"
            )
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def _warn(self, kind: str, message: str) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            log.warning("%s", message)

    def get(self, key: str) -> Reply | None:
        try:
            with self._lock:
                row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
            return Reply(**json.loads(row[0])) if row else None
        except (sqlite3.DatabaseError, ValueError, TypeError) as exc:  # a damaged row or page: a miss
            self._warn("row", f"response cache {self.path}: unreadable entry ({type(exc).__name__}: {exc}); treated as a miss")
            return None

    def put(self, key: str, reply: Reply, stage: str = "") -> None:
        payload = json.dumps(asdict(reply), default=str)
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO replies (key, reply, model, stage, created) VALUES (?, ?, ?, ?, ?)",
                    (key, payload, reply.model, stage, time.time()),
                )  # autocommit (isolation_level=None): durable when execute returns
        except (sqlite3.DatabaseError, UnicodeEncodeError) as exc:
            self._warn("write", f"response cache {self.path}: cannot store a reply ({type(exc).__name__}: {exc}); not cached")

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


class CachedBackend(Backend):
    """Wraps any backend with a ``ResponseCache``. Not registered: built by ``build_backend``."""

    def __init__(self, inner: Backend, cache: ResponseCache, mode: CacheMode | str, model_identity: str) -> None:
        self.inner = inner
        self.cache = cache
        self.mode = CacheMode(mode)
        if self.mode is CacheMode.OFF:
            raise ConfigError("CachedBackend with mode=off: use the inner backend directly")
        self.model_identity = model_identity
        self.name = inner.name
        self.supports_structured_output = inner.supports_structured_output
        self.hits = 0
        self.misses = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    async def generate(self, request: GenerationRequest) -> Reply:
        if not request.deterministic:
            if self.mode is CacheMode.REPLAY:
                raise CacheMiss(f"replay mode cannot answer a sampled request (temperature={request.temperature})")
            return await self.inner.generate(request)
        key = request_key(request, self.model_identity)
        hit = self.cache.get(key)
        if hit is not None:
            self.hits += 1
            hit.cached = True
            return hit
        self.misses += 1
        if self.mode is CacheMode.REPLAY:
            raise CacheMiss(
                f"replay mode: no recorded reply for stage {request.stage!r} (key {key[:12]}…) in "
                f"{self.cache.path}; the run differs from the recording, or use cache=readwrite"
            )
        reply = await self.inner.generate(request)
        self.cache.put(key, reply, stage=request.stage)
        return reply

    async def preflight(self) -> None:
        if self.mode is not CacheMode.REPLAY:  # exact replay never reaches the model
            await self.inner.preflight()

    async def aclose(self) -> None:
        await self.inner.aclose()
        self.cache.close()
