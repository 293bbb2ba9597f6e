"""Image loading for every perception tool: one downscale policy and one coordinate frame.

Tools receive images from datasets, users and earlier tools (crops). A bad file must surface as a
one-line ``DataError`` subclass — which ``Tool.ainvoke`` turns into an error ``ToolOutput``
(trigger T1) — never as a crash, an out-of-memory kill or a silently wrong picture. Decoding
(the cap on decoded pixels, EXIF orientation, every mode and bit depth to 8-bit RGB, the reduced
JPEG decode) is ``ledgermind/image_decode.py``, the same path the model's images take; here OCR,
detection and crop-zoom add the longest-side policy and ``LoadedImage.scale``, which maps boxes
back to original-image coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

from ledgermind.errors import FailureKind
from ledgermind.image_decode import (
    MAX_DECODED_PIXELS,
    ImageLoadError,
    ImageSource,
    decode_image,
    describe,
    to_rgb,
)
from ledgermind.tools.base import BBox


class ImageTooSmallError(ImageLoadError):
    """The image is too small to hold any readable content (e.g. a 1×1 tracking pixel).

    The image *was* read: nothing on it is legible, which is the tool's verdict (T1), not a broken input."""

    failure_kind = FailureKind.EVIDENCE


@dataclass(frozen=True)
class ImagePolicy:
    """Limits applied when loading. Defaults suit phone photos and document scans on a CPU box."""

    max_side: int = 4096  # longer side after loading; larger images are downscaled (OCR gains nothing above)
    max_pixels: int = MAX_DECODED_PIXELS  # cap on decoded pixels per image (decompression-bomb guard)
    min_side: int = 8  # shorter side below which there is nothing to read

    def __post_init__(self) -> None:
        if self.min_side < 1 or self.max_side < self.min_side or self.max_pixels < 1:
            raise ValueError(f"inconsistent image policy {self}")


@dataclass(frozen=True)
class LoadedImage:
    """RGB pixels plus the map back to the original file's coordinate frame.

    ``scale`` = loaded size / original size (≤ 1). Tools report boxes in *original* coordinates
    so that ledger bboxes (b_e) stay comparable across tools and across downscale policies.
    """

    image: Image.Image
    original_size: tuple[int, int]
    scale: float

    @property
    def size(self) -> tuple[int, int]:
        return self.image.size

    def to_original(self, box: BBox) -> BBox:
        """Map a box in loaded-image pixels to original-image pixels."""
        return BBox(*(v / self.scale for v in box.as_list())).clip(*self.original_size)

    def to_loaded(self, box: BBox) -> BBox:
        """Map a box in original-image pixels to loaded-image pixels."""
        return BBox(*(v * self.scale for v in box.as_list())).clip(*self.size)


def load_image(source: ImageSource, policy: ImagePolicy | None = None) -> LoadedImage:
    """Decode (capped, oriented, 8-bit RGB), check the size, downscale to ``max_side``."""
    policy = policy or ImagePolicy()
    label = describe(source)
    decoded = decode_image(
        source, max_pixels=policy.max_pixels, cap_key="perception.image.max_pixels", max_side=policy.max_side
    )
    w, h = decoded.original_size
    if min(w, h) < policy.min_side:
        raise ImageTooSmallError(
            f"image {label} is {w}x{h}, smaller than the minimum side {policy.min_side} px: nothing to read"
        )
    return LoadedImage(decoded.image, decoded.original_size, scale=decoded.image.width / w)


def to_bgr_array(img: Image.Image) -> np.ndarray:
    """OpenCV/rapidocr/Paddle expect BGR uint8 arrays."""
    return np.ascontiguousarray(np.asarray(to_rgb(img))[:, :, ::-1])
