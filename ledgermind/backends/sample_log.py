"""The logged sample of a model call: the messages it sent, text verbatim, images by reference.

Why: a trajectory kept only the request hash (the response-cache key), so nobody could read what a
model was asked; lmms-eval users expect ``--log_samples``. Images are referenced by the same content
hash the cache key uses (``images.image_digest``) and their size, not embedded: the item's images
are on disk already, and a crop is reproducible from the ledger entry that made it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from ledgermind.backends.base import Message, map_parts
from ledgermind.backends.budget import image_size
from ledgermind.backends.chat import text_part
from ledgermind.backends.images import image_digest
from ledgermind.errors import DataError


def image_digests(messages: Sequence[Message]) -> list[str]:
    """Content hash of every image part, in order (computed once, shared with the cache key)."""
    return [image_digest(p) for m in messages for p in m.images()]


def _digest_or_empty(img: Image.Image | Path) -> str:
    """An unreadable image is the backend's failure to report, not the log's: its hash is left empty."""
    try:
        return image_digest(img)
    except DataError:
        return ""


def logged_messages(
    messages: Sequence[Message], digests: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """``[{role, content: [{type: text, text} | {type: image, sha256, width, height}]}]`` (JSON-safe).

    The sizes are those of the images as the agent built the request; ``ModelCall.image_pixels``
    holds them after the image budget (a downscale shows as a difference).
    """
    shas = iter(
        digests if digests is not None else [_digest_or_empty(p) for m in messages for p in m.images()]
    )

    def logged_image(p: Image.Image | Path) -> dict[str, Any]:
        w, h = image_size(p)
        return {"type": "image", "sha256": next(shas), "width": w, "height": h}

    return map_parts(messages, text_part, logged_image)
