"""Copies the images a report shows into ``report/img/`` and remembers their pixel size.

The report must open from disk with no network and survive the dataset moving later, so each
image is copied once (named by a hash of its content, so two runs of a multirun share a copy).
The natural size is needed to place evidence boxes: bboxes are in original-image pixels and the
page scales them with an SVG ``viewBox`` of exactly that size.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, UnidentifiedImageError


@dataclass(frozen=True)
class StoredImage:
    rel: str  # path relative to the report root, e.g. "img/ab12….png"
    width: int
    height: int


class ImageStore:
    """``add(path)`` → a ``StoredImage`` or None with a reason (missing or unreadable file)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._by_path: dict[Path, StoredImage | str] = {}

    def add(self, path: Path) -> StoredImage | str:
        path = Path(path)
        if path not in self._by_path:
            self._by_path[path] = self._store(path)
        return self._by_path[path]

    def _store(self, path: Path) -> StoredImage | str:
        if not path.is_file():
            return f"image not found: {path}"
        try:
            with Image.open(path) as im:
                width, height = im.size
                fmt = (im.format or "").lower()
        except (UnidentifiedImageError, OSError) as e:
            return f"image unreadable ({type(e).__name__}): {path.name}"
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:20]
        suffix = {"jpeg": ".jpg", "png": ".png", "gif": ".gif", "webp": ".webp", "bmp": ".bmp"}.get(fmt, ".img")
        rel = f"img/{digest}{suffix}"
        target = self.root / rel
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        return StoredImage(rel, width, height)
