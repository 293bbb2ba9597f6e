"""Safe image loading shared by every perception tool.

Tools receive images from datasets, users and earlier tools (crops). A bad file must surface as a
one-line ``DataError`` subclass — which ``Tool.ainvoke`` turns into an error ``ToolOutput``
(trigger T1) — never as a crash, an out-of-memory kill or a silently wrong picture. Three
policies live here so that OCR, detection and crop-zoom all see the *same* pixels and the same
coordinate frame:

* decompression-bomb guard: the pixel count is checked from the header, before decoding;
* downscale policy: images larger than ``max_side`` are decoded reduced (JPEG draft mode) and
  resized; ``LoadedImage.scale`` maps boxes back to original-image coordinates;
* colour normalisation: every mode (1, L, P, LA, RGBA, CMYK, I;16, F …) becomes 8-bit RGB, with
  transparency composited on white (dark text on a transparent PNG stays readable), and the
  EXIF orientation applied (phone photos are stored rotated).
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from ledgermind.errors import DataError, FailureKind
from ledgermind.tools.base import BBox

ImageSource = str | Path | bytes | Image.Image


class ImageLoadError(DataError):
    """An image could not be turned into usable RGB pixels."""


class ImageNotFoundError(ImageLoadError):
    """The path does not exist or is not a file."""


class NotAnImageError(ImageLoadError):
    """The bytes are not in any image format Pillow understands."""


class CorruptImageError(ImageLoadError):
    """The header parsed but the pixel data is truncated or damaged."""


class ImageTooSmallError(ImageLoadError):
    """The image is too small to hold any readable content (e.g. a 1×1 tracking pixel).

    The image *was* read: nothing on it is legible, which is the tool's verdict (T1), not a broken input."""

    failure_kind = FailureKind.EVIDENCE


class ImageTooLargeError(ImageLoadError):
    """The header announces more pixels than the decompression-bomb guard allows."""


@dataclass(frozen=True)
class ImagePolicy:
    """Limits applied when loading. Defaults suit phone photos and document scans on a CPU box."""

    max_side: int = 4096  # longer side after loading; larger images are downscaled (OCR gains nothing above)
    max_pixels: int = 150_000_000  # header pixel count above which we refuse to decode (bomb guard)
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
    source: str

    @property
    def size(self) -> tuple[int, int]:
        return self.image.size

    def to_original(self, box: BBox) -> BBox:
        """Map a box in loaded-image pixels to original-image pixels."""
        s = self.scale
        w, h = self.original_size
        return BBox(box.x0 / s, box.y0 / s, box.x1 / s, box.y1 / s).clip(w, h)

    def to_loaded(self, box: BBox) -> BBox:
        """Map a box in original-image pixels to loaded-image pixels."""
        s = self.scale
        w, h = self.size
        return BBox(box.x0 * s, box.y0 * s, box.x1 * s, box.y1 * s).clip(w, h)


def load_image(source: ImageSource, policy: ImagePolicy | None = None) -> LoadedImage:
    """Open, validate, orient, colour-normalise and (if needed) downscale an image."""
    policy = policy or ImagePolicy()
    label = _describe(source)
    img = source.copy() if isinstance(source, Image.Image) else _open(source, label)
    _check_header_size(img, policy, label)
    original_size = _oriented_size(img)
    img = _decode(img, policy, label)
    img = ImageOps.exif_transpose(img) or img
    rgb = to_rgb(img)
    rgb, scale = _downscale(rgb, policy, original_size)
    return LoadedImage(image=rgb, original_size=original_size, scale=scale, source=label)


def to_rgb(img: Image.Image) -> Image.Image:
    """Convert any Pillow mode to 8-bit RGB; transparency is composited onto white."""
    if img.mode == "RGB":
        return img
    if img.mode == "P":
        img = img.convert("RGBA" if "transparency" in img.info else "RGB")
    if img.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        img = _high_depth_to_l(img)
    if img.mode in ("LA", "La", "PA", "RGBa"):
        img = img.convert("RGBA")
    if img.mode == "RGBA":
        background = Image.new("RGBA", img.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, img).convert("RGB")
    return img.convert("RGB")  # 1, L, CMYK, YCbCr, LAB, HSV


def to_bgr_array(img: Image.Image) -> np.ndarray:
    """OpenCV/rapidocr/Paddle expect BGR uint8 arrays."""
    return np.ascontiguousarray(np.asarray(to_rgb(img))[:, :, ::-1])


def _describe(source: ImageSource) -> str:
    if isinstance(source, (str, Path)):
        return str(source)
    if isinstance(source, bytes):
        return f"<{len(source)} bytes>"
    if isinstance(source, Image.Image):
        return f"<image {source.size[0]}x{source.size[1]} {source.mode}>"
    raise ImageLoadError(
        f"unsupported image input of type {type(source).__name__}; give a path, bytes or a PIL image"
    )


def _open(source: str | Path | bytes, label: str) -> Image.Image:
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise ImageNotFoundError(f"image not found: {path}")
        fp: io.BytesIO | Path = path
    else:
        fp = io.BytesIO(source)
    try:
        with warnings.catch_warnings():
            # our own max_pixels check replaces Pillow's warning; its hard error is caught below
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            return Image.open(fp)
    except Image.DecompressionBombError as exc:
        raise ImageTooLargeError(f"image {label} refused by the decompression-bomb guard: {exc}") from None
    except UnidentifiedImageError:
        raise NotAnImageError(f"not an image (unrecognised format): {label}") from None
    except OSError as exc:
        raise CorruptImageError(f"cannot open image {label}: {exc}") from None


def _check_header_size(img: Image.Image, policy: ImagePolicy, label: str) -> None:
    w, h = img.size
    if w * h > policy.max_pixels:
        raise ImageTooLargeError(
            f"image {label} is {w}x{h} = {w * h / 1e6:.0f} MP, above the {policy.max_pixels / 1e6:.0f} MP "
            "decompression-bomb limit (raise ImagePolicy.max_pixels if the file is trusted)"
        )
    if min(w, h) < policy.min_side:
        raise ImageTooSmallError(
            f"image {label} is {w}x{h}, smaller than the minimum side {policy.min_side} px: nothing to read"
        )


def _decode(img: Image.Image, policy: ImagePolicy, label: str) -> Image.Image:
    """Force the pixel decode now, so truncation surfaces here as a clear error."""
    w, h = img.size
    if img.format == "JPEG" and max(w, h) > 2 * policy.max_side:
        # JPEG draft decodes at 1/2, 1/4 or 1/8 scale: a 100 MP photo never hits memory in full
        img.draft(img.mode, (policy.max_side, policy.max_side))
    try:
        img.load()
    except Image.DecompressionBombError as exc:
        raise ImageTooLargeError(f"image {label} refused by the decompression-bomb guard: {exc}") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise CorruptImageError(f"image {label} is truncated or corrupt: {exc}") from None
    return img


_AXIS_SWAPPING_ORIENTATIONS = {5, 6, 7, 8}  # EXIF orientations that rotate by ±90°


def _oriented_size(img: Image.Image) -> tuple[int, int]:
    """Full-resolution size as the viewer sees it (after EXIF rotation), read before any draft decode."""
    w, h = img.size
    try:
        orientation = img.getexif().get(0x0112, 1)
    except Exception:
        orientation = 1
    return (h, w) if orientation in _AXIS_SWAPPING_ORIENTATIONS else (w, h)


def _downscale(
    img: Image.Image, policy: ImagePolicy, original_size: tuple[int, int]
) -> tuple[Image.Image, float]:
    longest = max(img.size)
    if longest > policy.max_side:
        factor = policy.max_side / longest
        new_size = (max(1, round(img.width * factor)), max(1, round(img.height * factor)))
        img = img.resize(new_size, Image.Resampling.LANCZOS, reducing_gap=3.0)
    return img, img.width / original_size[0]


def _high_depth_to_l(img: Image.Image) -> Image.Image:
    """Stretch a 16/32-bit or float image to 8 bits (a plain convert('L') clips 16-bit scans to white)."""
    arr = np.asarray(img, dtype=np.float64)
    lo, hi = float(np.nanmin(arr)), float(np.nanmax(arr))
    scaled = np.zeros_like(arr) if hi <= lo else (arr - lo) / (hi - lo) * 255.0
    return Image.fromarray(np.nan_to_num(scaled).astype(np.uint8), mode="L")
