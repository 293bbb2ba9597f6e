"""The simulator's eyes: the project's own OCR on the image parts a request carries.

Why: a simulated model must read only what is in the pixels it receives. A crop that zooms on
small text lets it read that text; a request without images sees nothing. OCR is the expensive
part of a simulated run, so lines are cached by pixel content (memory and, optionally, disk;
the key includes the engine and its settings).
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

from PIL import Image

from ledgermind.diskio import BestEffort, atomic_write_bytes


def pixel_digest(img: Image.Image) -> str:
    rgb = img.convert("RGB") if img.mode != "RGB" else img
    return hashlib.sha256(f"{rgb.size}".encode() + rgb.tobytes()).hexdigest()


def engine_signature(engine: Any) -> str:
    """Engine class + its scalar settings: a different engine or threshold is a different cache."""
    settings = sorted((k, v) for k, v in vars(engine).items() if isinstance(v, (int, float, str, bool)))
    return hashlib.sha256(f"{type(engine).__qualname__}:{settings}".encode()).hexdigest()[:16]


def _file_key(image: Image.Image | Path | str) -> str:
    """A memo key for an unchanged file (path, size, mtime), so a cached file is not decoded again."""
    if isinstance(image, Image.Image):
        return ""
    try:
        st = Path(image).stat()
    except OSError:
        return ""
    return f"file:{Path(image).resolve()}:{st.st_size}:{st.st_mtime_ns}"


class Vision:
    """OCR lines of an image (path or PIL), cached by pixels."""

    def __init__(
        self,
        engine: Any | None = None,
        cache_dir: str | Path | None = None,
        shared_cache: str | Path | None = None,
    ) -> None:
        self._engine = engine
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else None
        self.shared_cache = shared_cache  # the run's perception cache (``perception.cache_dir``), if any
        self._shared_tool: Any = None
        self._memory: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()
        self._disk_writes = BestEffort("simulator vision cache", self.cache_dir) if self.cache_dir else None

    @property
    def engine(self) -> Any:
        if self._engine is None:
            from perception.ocr import default_engine

            self._engine = default_engine()
        return self._engine

    def lines(self, image: Image.Image | Path | str) -> tuple[str, ...]:
        from perception.image_io import ImagePolicy, load_image

        file_key = _file_key(image)
        with self._lock:
            if file_key in self._memory:
                return self._memory[file_key]
        loaded = load_image(image if isinstance(image, Image.Image) else Path(image), ImagePolicy())
        key = f"{engine_signature(self.engine)}-{pixel_digest(loaded.image)}"
        with self._lock:
            cached = self._memory.get(key)
        if cached is None:
            cached = self._disk_get(key)
            if cached is None:
                cached = self._shared_lines(image)
            if cached is None:
                cached = tuple(ln.text for ln in self.engine.recognize(loaded.image))
            self._disk_put(key, cached)
        with self._lock:  # an unchanged file is found by its path next time, without decoding it
            self._memory[key] = self._memory[file_key or key] = cached
        return cached

    def _shared_lines(self, image: Image.Image | Path | str) -> tuple[str, ...] | None:
        """Lines from the run's perception cache (the agent's own OCR tool, same engine and settings):
        the agent OCRs a question's images before the model looks at them, so the simulator's eyes
        need not read them a second time. None when there is no such cache."""
        if self.shared_cache in (None, "", "off"):
            return None
        if self._shared_tool is None:
            from perception.cache import CachedTool, PerceptionCache
            from perception.tools import OCRTool

            cache = PerceptionCache.from_setting(self.shared_cache)
            if cache is None:
                self.shared_cache = None
                return None
            self._shared_tool = CachedTool(OCRTool(self.engine), cache)
        out = self._shared_tool.invoke(image=image if isinstance(image, Image.Image) else Path(image))
        if out.error is not None:
            return None
        return tuple(o.text for o in out.observations)

    def _disk_get(self, key: str) -> tuple[str, ...] | None:
        """Lines stored on disk, or None (a miss: absent, unreadable, or not a list of strings)."""
        if self.cache_dir is None:
            return None
        f = self.cache_dir / f"{key}.json"
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
            return None  # a damaged or foreign entry is a miss, never lines to read
        return tuple(data)

    def _disk_put(self, key: str, lines: tuple[str, ...]) -> None:
        """Store lines once: an existing entry is never rewritten (a hit costs no write), the
        temporary name is unique per write (concurrent processes share the directory), and a
        read-only or full directory skips the write with one warning — it never fails a call."""
        if self.cache_dir is None or self._disk_writes is None:
            return
        target = self.cache_dir / f"{key}.json"
        if not target.is_file():
            data = json.dumps(list(lines)).encode("utf-8")
            self._disk_writes.write(lambda: atomic_write_bytes(target, data))
