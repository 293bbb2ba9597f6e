"""Safe loading: every bad input becomes a typed DataError, every colour mode becomes RGB."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from ledgermind.errors import DataError
from ledgermind.image_decode import CorruptImageError, ImageNotFoundError, ImageTooLargeError, NotAnImageError
from ledgermind.tools.base import BBox
from perception.image_io import ImagePolicy, ImageTooSmallError, load_image


def _png_bytes(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def _jpeg_bytes(img: Image.Image, **kw) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="JPEG", **kw)
    return buf.getvalue()


def _png_header_only(width: int, height: int) -> bytes:
    """A PNG whose IHDR announces width×height but carries almost no data (a decompression bomb's header)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\x00"))
        + chunk(b"IEND", b"")
    )


def test_missing_file(tmp_path):
    with pytest.raises(ImageNotFoundError, match="image not found"):
        load_image(tmp_path / "nope.png")


def test_non_image_bytes(tmp_path):
    path = tmp_path / "notes.png"
    path.write_bytes(b"this is plain text, not a picture\n" * 20)
    with pytest.raises(NotAnImageError, match="not an image"):
        load_image(path)
    with pytest.raises(NotAnImageError):
        load_image(b"\x00\x01garbage")


def test_truncated_jpeg_is_a_clear_error(tmp_path):
    rng = np.random.default_rng(0)
    data = _jpeg_bytes(Image.fromarray(rng.integers(0, 255, (200, 300, 3), dtype=np.uint8)))
    path = tmp_path / "cut.jpg"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptImageError, match="truncated or corrupt"):
        load_image(path)


def test_one_pixel_image_is_rejected():
    with pytest.raises(ImageTooSmallError, match="1x1"):
        load_image(_png_bytes(Image.new("RGB", (1, 1))))


def test_decompression_bomb_header_is_refused_before_decoding():
    with pytest.raises(ImageTooLargeError, match="decompression-bomb"):
        load_image(_png_header_only(100_000, 100_000))


def test_the_cap_on_decoded_pixels_decodes_a_jpeg_reduced_and_refuses_a_png():
    policy = ImagePolicy(max_side=1000, max_pixels=4_000_000)
    loaded = load_image(_jpeg_bytes(Image.new("RGB", (4000, 3000), (200, 10, 10))), policy)
    assert loaded.size == (1000, 750) and loaded.original_size == (4000, 3000)  # decoded at 1/2: 3 MP
    assert loaded.image.getpixel((500, 300))[0] > 150
    with pytest.raises(
        ImageTooLargeError, match=r"needs 12.0 MP, above the 4.0 MP cap .*perception.image.max_pixels"
    ):
        load_image(_png_bytes(Image.new("RGB", (4000, 3000))), policy)
    with pytest.raises(ImageTooLargeError, match="12.0 MP"):  # refused from the header: no pixel decoded
        load_image(_png_header_only(4000, 3000), policy)  # (decoding these would fail as truncated)


def test_errors_are_data_errors():
    assert issubclass(ImageTooLargeError, DataError) and issubclass(CorruptImageError, DataError)


def test_huge_image_is_downscaled_and_boxes_map_back():
    img = Image.new("L", (6000, 1500), 255)
    loaded = load_image(img, ImagePolicy(max_side=1200))
    assert loaded.size == (1200, 300)
    assert loaded.original_size == (6000, 1500)
    assert loaded.scale == pytest.approx(0.2)
    back = loaded.to_original(BBox(100, 50, 200, 100))
    assert back.as_list() == pytest.approx([500, 250, 1000, 500])
    assert loaded.to_loaded(back).as_list() == pytest.approx([100, 50, 200, 100])


def test_large_jpeg_uses_draft_decode_and_keeps_original_size():
    data = _jpeg_bytes(Image.new("RGB", (4000, 2000), (200, 10, 10)))
    loaded = load_image(data, ImagePolicy(max_side=800))
    assert loaded.size == (800, 400)
    assert loaded.original_size == (4000, 2000)
    r, g, b = loaded.image.getpixel((400, 200))
    assert r > 150 and g < 60 and b < 60


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda: Image.new("L", (20, 20), 77), (77, 77, 77)),
        (lambda: Image.new("1", (20, 20), 1), (255, 255, 255)),
        (lambda: Image.new("CMYK", (20, 20), (0, 255, 255, 0)), (255, 0, 0)),
        (lambda: Image.new("RGBA", (20, 20), (0, 0, 0, 0)), (255, 255, 255)),  # transparent → white
        (lambda: Image.new("RGBA", (20, 20), (0, 0, 255, 255)), (0, 0, 255)),
        (lambda: Image.new("LA", (20, 20), (0, 255)), (0, 0, 0)),
        (lambda: Image.fromarray(np.full((20, 20), 1000, dtype=np.uint16)).point(lambda v: v), None),
    ],
)
def test_colour_modes_become_rgb(make, expected):
    loaded = load_image(make())
    assert loaded.image.mode == "RGB"
    if expected is not None:
        assert loaded.image.getpixel((10, 10)) == expected


def test_palette_with_transparency_composites_on_white():
    img = Image.new("P", (20, 20), 0)
    img.putpalette([0, 0, 0, 255, 0, 0] + [0] * 762)
    img.info["transparency"] = 0
    assert load_image(_png_bytes(img)).image.getpixel((5, 5)) == (255, 255, 255)


def test_16_bit_grey_is_stretched_not_clipped_to_white():
    arr = np.zeros((20, 20), dtype=np.uint16)
    arr[:, 10:] = 40000
    loaded = load_image(Image.fromarray(arr))
    assert loaded.image.getpixel((2, 2)) == (0, 0, 0)
    assert loaded.image.getpixel((15, 2)) == (255, 255, 255)


def test_exif_orientation_is_applied():
    img = Image.new("RGB", (60, 20), "white")
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise on display
    loaded = load_image(_jpeg_bytes(img, exif=exif))
    assert loaded.size == (20, 60)
    assert loaded.original_size == (20, 60)


def test_unsupported_input_type():
    with pytest.raises(DataError, match="unsupported image input"):
        load_image(12345)  # type: ignore[arg-type]
