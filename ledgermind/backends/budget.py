"""One client-side image rule for every backend: image count and pixel limits, applied before sending.

Why on the client: a vLLM server answers an over-long image list with HTTP 400 and a 400-megapixel
page with a 500 (retried, then failed), while transformers accepts both and a decompression bomb
kills the whole process. The same request must mean the same thing on every backend, so
``build_backend`` wraps each backend in ``BudgetedBackend`` and the rule lives here once:

* **pixels**: an image is decoded as ``ledgermind/image_decode.py`` decodes it for perception
  (capped at ``bomb_pixels`` decoded pixels: above it the item is an error naming the cap; EXIF
  orientation applied; every mode and bit depth as 8-bit RGB) and downscaled (aspect kept,
  LANCZOS) to at most ``max_pixels``. An image file of at most 8 bits per channel, upright and
  within ``max_pixels`` is sent as it is (the server decodes the same pixels). Pillow's global
  limit is never changed (other threads rely on it).
* **count**: with more than ``max_images`` images (``model.max_images``, the server's
  ``--limit-mm-per-prompt``), the first ``max_images - 1`` stay as they are and all the rest are
  tiled left to right into one image (each scaled to a common height), which is how MMMU-Pro's
  own tooling puts several images into a model that takes fewer. The merged image takes the
  place of the first merged one; the text (``Image N:`` labels) is left as it is.

What was done is returned as notes and put into ``Reply.meta["image_budget"]`` so a trajectory
can show it. A request that needs no change is passed through untouched (same cache key).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from PIL import Image

from ledgermind.backends.base import Backend, GenerationRequest, Message, Reply, WrappingBackend
from ledgermind.errors import ConfigError, DataError
from ledgermind.image_decode import (
    MAX_DECODED_PIXELS,
    Decoded,
    decode_image,
    is_plain,
    open_image,
    orientation,
)

DEFAULT_MAX_PIXELS = 4096 * 4096  # 16.8 MP: more than any vision encoder's native budget
TILE_HEIGHT = 768


@dataclass(frozen=True)
class ImageBudget:
    max_images: int
    max_pixels: int = DEFAULT_MAX_PIXELS
    bomb_pixels: int = MAX_DECODED_PIXELS  # the cap on decoded pixels per image

    def __post_init__(self) -> None:
        if self.max_images < 1 or self.max_pixels < 1 or self.bomb_pixels < self.max_pixels:
            raise ConfigError(
                f"invalid image budget {self}: need max_images >= 1 and bomb_pixels >= max_pixels >= 1"
            )

    @classmethod
    def from_model(cls, model: Mapping[str, Any]) -> ImageBudget:
        def count(key: str, default: int) -> int:
            value = model.get(key) or default
            try:
                return int(value)
            except (TypeError, ValueError):
                raise ConfigError(f"model.{key} must be an integer, got {value!r}") from None

        return cls(
            max_images=count("max_images", 1),
            max_pixels=count("max_image_pixels", DEFAULT_MAX_PIXELS),
            bomb_pixels=count("bomb_image_pixels", MAX_DECODED_PIXELS),
        )

    def key(self) -> dict[str, int]:
        return {"max_images": self.max_images, "max_pixels": self.max_pixels, "bomb_pixels": self.bomb_pixels}


def image_size(img: Image.Image | Path) -> tuple[int, int]:
    """Width and height from the header only (no pixel decoding); (0, 0) when the file is unreadable:
    a size is provenance, and the request that sends the image fails and says why."""
    if isinstance(img, Image.Image):
        return img.size
    try:
        with open_image(img) as im:
            return im.size
    except DataError:
        return 0, 0


def sent_image_pixels(messages: list[Message]) -> list[int]:
    """width*height of every image part of a request, in order (header only)."""
    return [w * h for w, h in (image_size(p) for m in messages for p in m.images())]


def fit_pixels(img: Image.Image | Path, budget: ImageBudget, notes: list[str]) -> Image.Image | Path:
    """The image itself when any decoder shows it as it is and it fits; else its decoded pixels."""
    if isinstance(img, Image.Image):
        size, form = img.size, _form(img)
    else:
        with open_image(img) as im:
            size, form = im.size, _form(im)
    if form is None and size[0] * size[1] <= budget.max_pixels:
        return img
    decoded = _decoded(img, budget)
    if form is not None:
        notes.append(f"decoded {form} as upright 8-bit RGB")
    if decoded.image.size != decoded.original_size:
        (w, h), (nw, nh) = decoded.original_size, decoded.image.size
        notes.append(f"downscaled {w}x{h} -> {nw}x{nh}")
    return decoded.image


def _form(img: Image.Image) -> str | None:
    """What a server's plain decode would get wrong (mode, EXIF orientation); None: nothing."""
    return None if is_plain(img) else f"{img.mode} (EXIF orientation {orientation(img)})"


def _decoded(img: Image.Image | Path, budget: ImageBudget) -> Decoded:
    return decode_image(
        img, max_pixels=budget.bomb_pixels, cap_key="model.bomb_image_pixels", max_area=budget.max_pixels
    )


def tile(images: list[Image.Image | Path], budget: ImageBudget) -> Image.Image:
    """Images side by side at a common height, the result within ``max_pixels``."""
    opened = [_decoded(i, budget).image for i in images]
    height = min(TILE_HEIGHT, max(im.height for im in opened))
    scaled = [
        im.resize((max(1, round(im.width * height / im.height)), height), Image.Resampling.LANCZOS)
        for im in opened
    ]
    canvas = Image.new("RGB", (sum(im.width for im in scaled), height), "white")
    x = 0
    for im in scaled:
        canvas.paste(im, (x, 0))
        x += im.width
    return _decoded(canvas, budget).image


def apply_budget(request: GenerationRequest, budget: ImageBudget) -> tuple[GenerationRequest, list[str]]:
    """The request within ``budget`` and what was changed (empty: the request is returned as is)."""
    notes: list[str] = []
    contents = [
        [p if isinstance(p, str) else fit_pixels(p, budget, notes) for p in m.content]
        for m in request.messages
    ]
    at = [
        (mi, pi) for mi, parts in enumerate(contents) for pi, p in enumerate(parts) if not isinstance(p, str)
    ]
    if len(at) > budget.max_images:
        keep = budget.max_images - 1
        merged = tile([contents[mi][pi] for mi, pi in at[keep:]], budget)  # type: ignore[misc]
        notes.append(
            f"tiled images {keep + 1}-{len(at)} of {len(at)} into one (max_images={budget.max_images})"
        )
        (mi, pi), *rest = at[keep:]
        contents[mi][pi] = merged  # in the place of the first merged image
        for mi, pi in reversed(rest):
            del contents[mi][pi]
    if not notes:
        return request, []
    messages = [Message(m.role, parts) for m, parts in zip(request.messages, contents, strict=True)]
    return replace(request, messages=messages), notes


class BudgetedBackend(WrappingBackend):
    """Applies ``apply_budget`` to every request of ``inner`` (built by ``build_backend``)."""

    def __init__(self, inner: Backend, budget: ImageBudget) -> None:
        super().__init__(inner)
        self.budget = budget

    async def generate(self, request: GenerationRequest) -> Reply:
        fitted, notes = apply_budget(request, self.budget)
        reply = await self.inner.generate(fitted)
        # the pixels of each image as actually sent (after downscaling / tiling): run provenance
        reply.meta = dict(reply.meta) | {"image_pixels": sent_image_pixels(fitted.messages)}
        if notes:
            reply.meta["image_budget"] = notes
        return reply
