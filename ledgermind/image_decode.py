"""An image file decoded into the pixels every consumer sees: perception's tools and the model alike.

One path, so that OCR and the model never see two different pictures of one file (a plain
``convert("RGB")`` turns a 16-bit scan white and ignores EXIF rotation):

* **cap on decoded pixels**: the size a decode will produce is checked before any pixel is
  decoded; above ``max_pixels`` it is an ``ImageTooLargeError`` naming the cap (a decompression
  bomb, or simply more memory than one item may take). A JPEG larger than its target size is
  decoded reduced (draft: 1/2 to 1/8 scale), so a 144 MP photo costs its reduced pixels only and
  keeps its content; formats without a reduced decode (PNG, TIFF) are refused above the cap.
* **orientation**: the EXIF orientation is applied (phone photos are stored rotated).
* **mode and bit depth**: every mode becomes 8-bit RGB; 16/32-bit and float images are stretched
  over their range, transparency is composited on white (dark text on a transparent PNG stays
  readable).
* **budget**: the result is downscaled (LANCZOS) to a longest side and/or a pixel area.
"""

from __future__ import annotations

import io
import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from ledgermind.bounded_read import irregular
from ledgermind.errors import DataError

ImageSource = str | Path | bytes | Image.Image

# A decode above this many pixels is refused: 8192 x 8192, ~200 MB as RGB, 4x any model's or
# OCR's input budget. Pillow's own limit (~179 MP) allows a single image ~2.5 GB of working memory.
MAX_DECODED_PIXELS = 8192 * 8192
HIGH_DEPTH_MODES = ("I;16", "I;16B", "I;16L", "I", "F")
AXIS_SWAPPING_ORIENTATIONS = {5, 6, 7, 8}  # EXIF orientations that rotate by +-90 degrees


class ImageLoadError(DataError):
    """An image could not be turned into usable RGB pixels."""


class ImageNotFoundError(ImageLoadError):
    """The path does not exist or is not a file."""


class NotAnImageError(ImageLoadError):
    """The bytes are not in any image format Pillow understands."""


class CorruptImageError(ImageLoadError):
    """The header parsed but the pixel data is truncated or damaged."""


class ImageTooLargeError(ImageLoadError):
    """Decoding would produce more pixels than the cap allows."""


@dataclass(frozen=True)
class Decoded:
    """8-bit RGB pixels, upright, within the budget; ``original_size`` is the full-resolution size as
    a viewer sees it (after EXIF rotation), the frame boxes are reported in."""

    image: Image.Image
    original_size: tuple[int, int]


def describe(source: ImageSource) -> str:
    if isinstance(source, (str, Path)):
        return str(source)
    if isinstance(source, bytes):
        return f"<{len(source)} bytes>"
    if isinstance(source, Image.Image):
        return f"<image {source.size[0]}x{source.size[1]} {source.mode}>"
    raise ImageLoadError(
        f"unsupported image input of type {type(source).__name__}; give a path, bytes or a PIL image"
    )


def open_image(source: ImageSource) -> Image.Image:
    """The image with its header read and no pixel decoded (a PIL image is copied, never changed)."""
    label = describe(source)
    if isinstance(source, Image.Image):
        return source.copy()
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():  # a folder, a FIFO (which would be waited on), a device: never opened
            why = irregular(path)
            raise ImageNotFoundError(f"image {path} {why}" if why else f"image not found: {path}")
        fp: io.BytesIO | Path = path
    else:
        fp = io.BytesIO(source)
    try:
        with warnings.catch_warnings():
            # the cap below replaces Pillow's warning; its hard error (above ~179 MP) is caught here
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            return Image.open(fp)
    except Image.DecompressionBombError as exc:
        raise ImageTooLargeError(f"image {label} refused by the decompression-bomb guard: {exc}") from None
    except UnidentifiedImageError:
        raise NotAnImageError(f"not an image (unrecognised format): {label}") from None
    except OSError as exc:
        raise CorruptImageError(f"cannot open image {label}: {exc}") from None


def decode_image(
    source: ImageSource,
    *,
    max_pixels: int = MAX_DECODED_PIXELS,
    cap_key: str = "max_pixels",
    max_side: int | None = None,
    max_area: int | None = None,
) -> Decoded:
    """``source`` as 8-bit RGB, upright, within ``max_side`` (longest side) and ``max_area``
    (pixels); ``cap_key`` is the setting that holds ``max_pixels``, named when the cap refuses."""
    img = open_image(source)
    label = describe(source)
    # the full-resolution size as a viewer sees it (after EXIF rotation), read before any draft decode
    original = (img.height, img.width) if orientation(img) in AXIS_SWAPPING_ORIENTATIONS else img.size
    target = fitted_size(img.size, max_side, max_area)
    if img.format == "JPEG" and target != img.size:
        img.draft(img.mode, target)  # decode at the smallest 1/2^k scale still >= target
    w, h = img.size
    if w * h > max_pixels:
        raise ImageTooLargeError(
            f"image {label} is {original[0]}x{original[1]}: decoding it needs {w * h / 1e6:.1f} MP, above the "
            f"{max_pixels / 1e6:.1f} MP cap on decoded pixels per image ({cap_key})"
        )
    try:
        img.load()
    except Image.DecompressionBombError as exc:
        raise ImageTooLargeError(f"image {label} refused by the decompression-bomb guard: {exc}") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise CorruptImageError(f"image {label} is truncated or corrupt: {exc}") from None
    ImageOps.exif_transpose(img, in_place=True)  # no copy of an upright image
    rgb = to_rgb(img)
    size = fitted_size(rgb.size, max_side, max_area)
    if size != rgb.size:
        rgb = rgb.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)
    return Decoded(rgb, original)


def fitted_size(size: tuple[int, int], max_side: int | None, max_area: int | None) -> tuple[int, int]:
    """``size`` scaled down (aspect kept) to the longest side and the area; unchanged if within both."""
    w, h = size
    if max_side is not None and max(w, h) > max_side:
        factor = max_side / max(w, h)
        w, h = max(1, round(w * factor)), max(1, round(h * factor))
    if max_area is not None and w * h > max_area:
        scale = math.sqrt(max_area / (w * h))
        w, h = max(1, int(w * scale)), max(1, int(h * scale))
    return w, h


def is_plain(img: Image.Image) -> bool:
    """At most 8 bits per channel and upright: a server's decoder shows the pixels ``decode_image``
    does (vLLM composites transparency on white too), so the file can be sent as it is."""
    return img.mode not in HIGH_DEPTH_MODES and orientation(img) == 1


def orientation(img: Image.Image) -> int:
    """The EXIF orientation from the header (1: upright). Pillow's ``getexif`` decodes a whole PNG
    to look for an eXIf chunk after the pixels: a PNG without one in its header is upright."""
    if img.format == "PNG" and "exif" not in img.info:
        return 1
    try:
        return int(img.getexif().get(0x0112, 1))
    except Exception:
        return 1


def to_rgb(img: Image.Image) -> Image.Image:
    """Any Pillow mode as 8-bit RGB; transparency is composited onto white."""
    if img.mode == "RGB":
        return img
    if img.mode == "P":
        img = img.convert("RGBA" if "transparency" in img.info else "RGB")
    if img.mode in HIGH_DEPTH_MODES:
        img = _high_depth_to_l(img)
    if img.mode in ("LA", "La", "PA", "RGBa"):
        img = img.convert("RGBA")
    if img.mode == "RGBA":
        background = Image.new("RGBA", img.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, img).convert("RGB")
    return img.convert("RGB")  # 1, L, CMYK, YCbCr, LAB, HSV


def _high_depth_to_l(img: Image.Image) -> Image.Image:
    """Stretch a 16/32-bit or float image to 8 bits (a plain convert('L') clips 16-bit scans to white)."""
    arr = np.array(img, dtype=np.float32)  # a copy: stretched in place
    lo, hi = float(np.nanmin(arr)), float(np.nanmax(arr))
    if hi <= lo:
        return Image.new("L", img.size, 0)
    arr -= lo
    arr *= 255.0 / (hi - lo)
    return Image.fromarray(np.nan_to_num(arr).astype(np.uint8), mode="L")
