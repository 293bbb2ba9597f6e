"""MMMU-Pro *vision* setting: render question + options + images onto one page image.

MMMU-Pro screenshotted each item in a browser with a recorded font, font size and background
(``vision_font``, ``vision_fontSize``, ``vision_background``). We reproduce the page with PIL,
deterministically, so that a run without the official screenshots still tests the same thing:
the model must read the question from pixels.

Fonts: the recorded families (Arial, Georgia, Brush Script MT, ...) are mostly not installed on
Linux. We use the recorded family if matplotlib's font manager finds it, otherwise the closest
DejaVu face that ships with matplotlib (so it exists everywhere): sans → DejaVu Sans,
serif → DejaVu Serif, monospace → DejaVu Sans Mono, script/handwriting → DejaVu Serif Italic.
The face actually used is recorded in ``Item.meta["vision_font_used"]``.

Pages are cached under the cache dir by a hash of everything that determines them (renderer
version, text, style, image bytes), so re-runs reuse them and any change re-renders.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from PIL import Image, ImageDraw, ImageFont

from ledgermind.benchmarks.item import Item
from ledgermind.diskio import atomic_write_bytes
from ledgermind.errors import DataError
from ledgermind.image_decode import decode_image

RENDERER_VERSION = 2  # bump when the same inputs would give other pixels: cached pages are then re-rendered
PAGE_WIDTH = 1024
MARGIN = 40
MAX_IMAGE_HEIGHT = 520
DEFAULT_FONT_PX = 24
DEFAULT_BACKGROUND = "#ffffff"
TEXT_COLOR = (0, 0, 0)

_Style = Literal["normal", "italic"]
_STAND_INS: dict[tuple[str, _Style], tuple[str, ...]] = {  # (DejaVu family, style) → requested families
    ("DejaVu Sans", "normal"): ("arial", "tahoma", "verdana"),
    ("DejaVu Serif", "normal"): ("georgia", "palatino linotype", "times new roman"),
    ("DejaVu Sans Mono", "normal"): ("courier new",),
    ("DejaVu Serif", "italic"): ("brush script mt", "bradley hand", "savoye let", "nanum pen script"),
}
# requested family (lower case) → its stand-in
_FALLBACK = {family: face for face, families in _STAND_INS.items() for family in families}
_PLACEHOLDER = re.compile(r"(<image\s*\d+>)")
# The text question of a vision item: the model must know that the question and its lettered
# options are in the image, and that a letter is expected (an empty "Question:" says neither).
VISION_QUESTION = (
    "The question and its answer options, lettered {first} to {last}, are shown in the image. "
    "Read them from the image and answer with the letter of the correct option."
)


def as_page(item: Item, page: Path, **meta: Any) -> Item:
    """``item`` as the page image ``page`` shows it: the text question only says that question and
    lettered options are in the image (``VISION_QUESTION``), and the options move to
    ``meta["options"]`` (the scorer needs them for the option-text heuristic) so that a pipeline
    rendering ``Item.options`` cannot leak them as text; ``meta``: what else the item records."""
    last = chr(ord("A") + max(len(item.options or []), 1) - 1)
    return replace(
        item,
        question=VISION_QUESTION.format(first="A", last=last),
        options=None,
        images=[page],
        meta=item.meta | {"options": item.options} | meta,
    )


@lru_cache(maxsize=64)
def resolve_font(requested: str | None) -> Path:
    """A font file for ``requested``: the family itself if installed, else its DejaVu stand-in."""
    from matplotlib.font_manager import FontProperties, findfont

    if requested:
        with contextlib.suppress(ValueError):  # not installed
            return Path(findfont(FontProperties(family=requested), fallback_to_default=False))
    family, style = _FALLBACK.get((requested or "").lower(), ("DejaVu Sans", "normal"))
    return Path(findfont(FontProperties(family=family, style=style)))


def font_px(size: str | int | None) -> int:
    """``"26px"`` → 26; missing or unparsable → the default size."""
    if isinstance(size, int):
        return size
    m = re.match(r"\s*(\d+(?:\.\d+)?)\s*(px)?\s*$", size or "")
    return max(8, round(float(m.group(1)))) if m else DEFAULT_FONT_PX


@dataclass(frozen=True)
class PageStyle:
    font: Path
    size: int
    background: str  # "#rrggbb" or an image path


def to_vision_item(item: Item, cache_dir: Path) -> Item:
    """The vision-setting version of a standard item: one page image (``as_page``).

    A page that cannot be rendered (missing/corrupt image) is a ``DataError``: the loader calls this
    while building the row, so the row becomes an error item naming its file and line (``load_rows``)
    and one bad item never stops a run, unless ``strict`` asks it to.
    """
    style = PageStyle(
        font=resolve_font(item.meta.get("vision_font")),
        size=font_px(item.meta.get("vision_fontSize")),
        background=item.meta.get("vision_background") or DEFAULT_BACKGROUND,
    )
    meta = {"original_question": item.question, "vision_font_used": style.font.name, "setting": "vision"}
    page = cached_page(item.question, item.options or [], item.images, style, Path(cache_dir))
    return as_page(item, page, **meta)


def cached_page(
    question: str, options: list[str], images: list[Path], style: PageStyle, cache_dir: Path
) -> Path:
    """The page's file, rendered once: named by a hash of everything that determines its pixels."""
    bg = style.background
    spec = {
        "v": RENDERER_VERSION,
        "q": question,
        "o": options,
        "f": style.font.name,
        "s": style.size,
        "bg": bg if bg.startswith("#") else _file_digest(Path(bg)),
    }
    h = hashlib.sha256(json.dumps(spec, sort_keys=True, ensure_ascii=False).encode())
    for p in images:
        h.update(_file_digest(p).encode())
    out = cache_dir / f"page_{h.hexdigest()[:20]}.png"
    if out.exists():
        return out
    # upright 8-bit RGB through the one decoding path: a corrupt file or a bomb is the item's DataError
    page = render_page(question, options, [decode_image(p).image for p in images], style)
    png = io.BytesIO()
    page.save(png, format="PNG")
    atomic_write_bytes(out, png.getvalue())  # a name per write: two jobs rendering one page at once
    return out


def render_page(
    question: str, options: list[str], images: list[Image.Image], style: PageStyle
) -> Image.Image:
    """Lay out question, options and images top to bottom; images go where ``<image N>`` stands."""
    font = ImageFont.truetype(str(style.font), style.size)
    line_h = round(style.size * 1.4)
    width = PAGE_WIDTH - 2 * MARGIN
    blocks = _segments(question, images, font, width)  # a line of text, or an image
    for i, opt in enumerate(options):
        blocks += _segments(f"{chr(ord('A') + i)}. {opt}", images, font, width)
    height = MARGIN * 2 + sum(line_h if isinstance(b, str) else b.height + line_h // 2 for b in blocks)
    page = _background(style.background, (PAGE_WIDTH, max(height, 200)))
    draw = ImageDraw.Draw(page)
    y = MARGIN
    for block in blocks:
        if isinstance(block, str):
            draw.text((MARGIN, y), block, font=font, fill=TEXT_COLOR)
            y += line_h
        else:
            page.paste(block, (MARGIN, y))
            y += block.height + line_h // 2
    return page


def _segments(
    text: str, images: list[Image.Image], font: ImageFont.FreeTypeFont, width: int
) -> list[str | Image.Image]:
    out: list[str | Image.Image] = []
    for part in _PLACEHOLDER.split(text or ""):
        if m := re.fullmatch(r"<image\s*(\d+)>", part):
            n = int(m.group(1))
            if not 1 <= n <= len(images):
                raise DataError(f"<image {n}> has no image (item has {len(images)})")
            img = images[n - 1]  # within the text width and MAX_IMAGE_HEIGHT
            scale = min(1.0, width / img.width, MAX_IMAGE_HEIGHT / img.height)
            if scale < 1.0:
                size = (max(1, round(img.width * scale)), max(1, round(img.height * scale)))
                img = img.resize(size, Image.Resampling.LANCZOS)
            out.append(img)
        elif part.strip():
            out += _wrap(part.strip(), font, width)
    return out


def _wrap(text: str, font: ImageFont.FreeTypeFont, width: int) -> list[str]:
    lines: list[str] = []
    for para in text.splitlines() or [""]:
        current = ""
        for word in para.split():
            trial = f"{current} {word}".strip()
            if current and font.getlength(trial) > width:
                lines.append(current)
                current = word
            else:
                current = trial
        if current:
            lines.append(current)
    return lines


def _background(spec: str, size: tuple[int, int]) -> Image.Image:
    if spec.startswith("#"):
        try:
            return Image.new("RGB", size, spec)
        except ValueError:
            raise DataError(f"bad background colour {spec!r}") from None
    bg = decode_image(Path(spec)).image
    scale = max(size[0] / bg.width, size[1] / bg.height)  # cover the page, then centre-crop
    bg = bg.resize((round(bg.width * scale) + 1, round(bg.height * scale) + 1), Image.Resampling.LANCZOS)
    left, top = (bg.width - size[0]) // 2, (bg.height - size[1]) // 2
    return bg.crop((left, top, left + size[0], top + size[1]))


def _file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise DataError(f"cannot read image {path}: {exc}") from None
