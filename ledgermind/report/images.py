"""Copies the images a report shows into ``report/img/`` and remembers their pixel size.

The report must open from disk with no network and survive the dataset moving later, so each
image is copied once (named by a hash of its content, so two runs of a multirun share a copy).
The natural size is needed to place evidence boxes: bboxes are in original-image pixels and the
page scales them with an SVG ``viewBox`` of exactly that size.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from ledgermind.bounded_read import irregular
from ledgermind.runs.atomic import atomic_write

SUFFIXES = {"jpeg": ".jpg", "png": ".png", "gif": ".gif", "webp": ".webp", "bmp": ".bmp"}  # by PIL format


@dataclass(frozen=True)
class StoredImage:
    rel: str  # path relative to the report root, e.g. "img/ab12….png"
    width: int
    height: int


class ImageStore:
    """``add(path)`` → a ``StoredImage`` or a one-line reason it is not shown.

    Image paths come from a run's trajectories, i.e. from a folder that may have been shared or
    downloaded: only files inside ``allowed`` roots (the run directories and the data directory)
    are ever read or copied, so a crafted trajectory cannot pull ``~/.ssh/id_rsa`` into a report.
    """

    def __init__(self, root: Path, allowed: list[Path] | None = None) -> None:
        self.root = Path(root)
        self.allowed = [Path(a).resolve() for a in (allowed or [])]
        self._by_path: dict[Path, StoredImage | str] = {}

    def add(self, path: Path) -> StoredImage | str:
        path = Path(path)
        if path not in self._by_path:
            self._by_path[path] = self._store(path)
        return self._by_path[path]

    def _store(self, path: Path) -> StoredImage | str:
        if not any(path.resolve().is_relative_to(a) for a in self.allowed):
            return f"image outside the run and data directories, not shown: {path.name}"
        if not path.is_file():  # a folder or a FIFO (which a read would wait on) is named for what it is
            return f"image {path} {why}" if (why := irregular(path)) else f"image not found: {path}"
        try:
            with Image.open(path) as im:
                width, height = im.size
                fmt = (im.format or "").lower()
        except Image.DecompressionBombError:
            return f"image too large to show (decompression-bomb guard): {path.name}"
        except (UnidentifiedImageError, OSError, ValueError) as e:
            return f"image unreadable ({type(e).__name__}): {path.name}"
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()[:20]
        rel = f"img/{digest}{SUFFIXES.get(fmt, '.img')}"
        target = self.root / rel
        if not target.exists():
            atomic_write(self.root, target, data)
        return StoredImage(rel, width, height)
