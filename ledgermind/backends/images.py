"""Image handling shared by backends and the cache: wire encoding, content hashing (decoding is
``ledgermind/image_decode.py``, the one path perception uses too)."""

from __future__ import annotations

import base64
import hashlib
import io
import mimetypes
from pathlib import Path

from PIL import Image

from ledgermind.bounded_read import open_regular
from ledgermind.errors import DataError
from ledgermind.image_decode import to_rgb


def data_url(img: Image.Image | Path) -> str:
    """The image as a base64 data URL. Files go as they are (no re-compression, so server and local
    backends decode identical pixels); PIL images as lossless PNG of their RGB pixels."""
    if isinstance(img, Image.Image):
        buf = io.BytesIO()
        to_rgb(img).save(buf, format="PNG")
        data, mime = buf.getvalue(), "image/png"
    else:
        data, mime = _file_bytes(img), mimetypes.guess_type(str(img))[0] or "image/png"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def image_digest(img: Image.Image | Path) -> str:
    """sha256 of the image content: file bytes for a path, mode+size+pixels for a PIL image."""
    if not isinstance(img, Image.Image):
        return hashlib.sha256(_file_bytes(img)).hexdigest()
    h = hashlib.sha256(f"{img.mode}:{img.size[0]}x{img.size[1]}:".encode())
    h.update(img.tobytes())  # hashed apart from the header: no copy of the pixels
    return h.hexdigest()


def _file_bytes(path: Path) -> bytes:
    """The file's bytes; only a regular file is read (a FIFO named like an image would be waited on)."""
    try:
        with open_regular(Path(path)) as fh:
            return fh.read()
    except OSError as exc:
        raise DataError(f"cannot read image {path}: {exc}") from exc
