"""Image handling shared by backends and the cache: wire encoding, content hashing (decoding is
``ledgermind/image_decode.py``, the one path perception uses too)."""

from __future__ import annotations

import base64
import hashlib
import io
import mimetypes
from pathlib import Path

from PIL import Image

from ledgermind.errors import DataError
from ledgermind.image_decode import to_rgb


def encoded_bytes(img: Image.Image | Path) -> tuple[bytes, str]:
    """(bytes, mime) to send over the wire. Files go as they are (no re-compression, so server and
    local backends decode identical pixels); PIL images as lossless PNG of their RGB pixels."""
    if isinstance(img, Image.Image):
        buf = io.BytesIO()
        to_rgb(img).save(buf, format="PNG")
        return buf.getvalue(), "image/png"
    try:
        data = Path(img).read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read image {img}: {exc}") from exc
    mime = mimetypes.guess_type(str(img))[0] or "image/png"
    return data, mime


def data_url(img: Image.Image | Path) -> str:
    data, mime = encoded_bytes(img)
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def image_digest(img: Image.Image | Path) -> str:
    """sha256 of the image content: file bytes for a path, mode+size+pixels for a PIL image."""
    h = hashlib.sha256()
    if isinstance(img, Image.Image):
        h.update(f"{img.mode}:{img.size[0]}x{img.size[1]}:".encode())
        h.update(img.tobytes())
    else:
        try:
            h.update(Path(img).read_bytes())
        except OSError as exc:
            raise DataError(f"cannot read image {img}: {exc}") from exc
    return h.hexdigest()
