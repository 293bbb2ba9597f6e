"""One image rule for every backend, cache keys that see it, and the replay backend."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from ledgermind.backends.base import Backend, GenerationRequest, Message, Reply
from ledgermind.backends.budget import BudgetedBackend, ImageBudget, apply_budget
from ledgermind.backends.build import build_backend
from ledgermind.backends.cache import request_key
from ledgermind.backends.replay import ReplayBackend
from ledgermind.errors import BackendError, ConfigError, DataError


class _Recorder(Backend):
    """Keeps the requests it was sent; replies with the number of images it got."""

    name = "recorder"

    def __init__(self) -> None:
        self.requests: list[GenerationRequest] = []

    async def generate(self, request: GenerationRequest) -> Reply:
        self.requests.append(request)
        return Reply(text=str(sum(len(m.images()) for m in request.messages)))


def _png(path: Path, size: tuple[int, int], colour: str = "red") -> Path:
    Image.new("RGB", size, colour).save(path)
    return path


def _request(*parts) -> GenerationRequest:
    return GenerationRequest(messages=[Message("user", list(parts))])


def test_images_beyond_max_images_are_tiled_into_the_last_slot(tmp_path: Path) -> None:
    imgs = [
        _png(tmp_path / f"{i}.png", (100 + 10 * i, 50), c)
        for i, c in enumerate(["red", "green", "blue", "black", "white"])
    ]
    req = _request(
        "Image 1:",
        imgs[0],
        "Image 2:",
        imgs[1],
        "Image 3:",
        imgs[2],
        "Image 4:",
        imgs[3],
        "Image 5:",
        imgs[4],
        "q?",
    )
    fitted, notes = apply_budget(req, ImageBudget(max_images=3))
    content = fitted.messages[0].content
    images = [p for p in content if not isinstance(p, str)]
    assert images[:2] == imgs[:2] and isinstance(images[2], Image.Image) and len(images) == 3
    assert images[2].size == (120 + 130 + 140, 50)  # images 3..5 side by side at their common height
    assert [p for p in content if isinstance(p, str)] == [
        p for p in req.messages[0].content if isinstance(p, str)
    ]
    assert notes == ["tiled images 3-5 of 5 into one (max_images=3)"]


def test_huge_image_is_downscaled_and_a_bomb_is_refused(tmp_path: Path) -> None:
    big = _png(tmp_path / "big.png", (4000, 3000))
    fitted, notes = apply_budget(
        _request(big, "q"), ImageBudget(max_images=2, max_pixels=1_000_000, bomb_pixels=20_000_000)
    )
    (img,) = fitted.messages[0].images()
    assert img.width * img.height <= 1_000_000 and abs(img.width / img.height - 4 / 3) < 0.01
    assert notes == [f"downscaled 4000x3000 -> {img.width}x{img.height}"]
    with pytest.raises(
        DataError, match=r"above the 5.0 MP cap on decoded pixels per image \(model.bomb_image_pixels\)"
    ):
        apply_budget(
            _request(big, "q"), ImageBudget(max_images=2, max_pixels=1_000_000, bomb_pixels=5_000_000)
        )


def test_a_16_bit_or_rotated_image_within_budget_is_sent_as_its_upright_8_bit_pixels(tmp_path: Path) -> None:
    arr = np.zeros((40, 60), dtype=np.uint16)
    arr[:, 30:] = 40000  # a plain convert("RGB") clips both halves to white
    Image.fromarray(arr).save(tmp_path / "scan.png")
    rotated = Image.new("RGB", (60, 40), "red")
    rotated.paste("blue", (0, 0, 30, 40))
    exif = Image.Exif()
    exif[0x0112] = 6  # stored turned: a viewer rotates it 90 degrees clockwise
    rotated.save(tmp_path / "phone.jpg", exif=exif, quality=95)
    fitted, notes = apply_budget(_request(tmp_path / "scan.png", tmp_path / "phone.jpg", "q"), ImageBudget(2))
    scan, phone = fitted.messages[0].images()
    assert (
        scan.mode == "RGB"
        and scan.getpixel((5, 5)) == (0, 0, 0)
        and scan.getpixel((50, 5)) == (255, 255, 255)
    )
    assert phone.size == (40, 60) and phone.getpixel((20, 5))[2] > 200  # blue on top once upright
    assert notes == [
        "decoded I;16 (EXIF orientation 1) as upright 8-bit RGB",
        "decoded RGB (EXIF orientation 6) as upright 8-bit RGB",
    ]


def test_a_jpeg_over_the_cap_is_decoded_reduced_a_png_is_refused(tmp_path: Path) -> None:
    Image.new("RGB", (4000, 3000), "red").save(tmp_path / "big.jpg")
    budget = ImageBudget(max_images=1, max_pixels=500_000, bomb_pixels=4_000_000)
    fitted, notes = apply_budget(_request(tmp_path / "big.jpg", "q"), budget)
    (img,) = fitted.messages[0].images()
    assert img.width * img.height <= 500_000 and img.getpixel((5, 5))[0] > 200
    assert notes == [
        f"downscaled 4000x3000 -> {img.width}x{img.height}"
    ]  # decoded at 1/2: 3 MP, within the cap
    _png(tmp_path / "big.png", (4000, 3000))
    with pytest.raises(
        DataError, match=r"needs 12.0 MP, above the 4.0 MP cap .* \(model.bomb_image_pixels\)"
    ):
        apply_budget(_request(tmp_path / "big.png", "q"), budget)


def test_a_request_within_budget_is_passed_through_unchanged(tmp_path: Path) -> None:
    req = _request(_png(tmp_path / "a.png", (64, 64)), "q")
    assert apply_budget(req, ImageBudget(max_images=1)) == (req, [])
    Image.new("RGBA", (64, 64), (0, 0, 0, 0)).save(tmp_path / "clear.png")  # vLLM composites it on white too
    req = _request(tmp_path / "clear.png", "q")
    assert apply_budget(req, ImageBudget(max_images=1)) == (req, [])


def test_build_backend_applies_model_max_images_to_every_backend(tmp_path: Path) -> None:
    inner = _Recorder()
    backend = BudgetedBackend(inner, ImageBudget.from_model({"name": "m", "max_images": 2}))
    imgs = [_png(tmp_path / f"{i}.png", (30, 30)) for i in range(4)]
    reply = asyncio.run(backend.generate(_request(*imgs, "q")))
    assert reply.text == "2" and reply.meta["image_budget"] == [
        "tiled images 2-4 of 4 into one (max_images=2)"
    ]
    replay = build_backend(
        {"_target_": "ledgermind.backends.replay.ReplayBackend", "path": str(_replies(tmp_path))},
        {"name": "m", "hub_id": "x/y", "max_images": 2},
        cache_mode="readwrite",
        cache_path=tmp_path / "c.sqlite",
    )
    assert (
        isinstance(replay, BudgetedBackend) and replay.path.name == "replies.jsonl"
    )  # replay is never cached


def test_cache_key_separates_backend_kinds_and_image_limits(tmp_path: Path) -> None:
    model = {
        "name": "q",
        "hub_id": "Qwen/Qwen2.5-VL-7B-Instruct",
        "max_images": 4,
        "vllm_args": {"mm_processor_kwargs": {"max_pixels": 1003520}},
    }
    srv = {
        "_target_": "ledgermind.backends.vllm_server.VLLMServerBackend",
        "base_urls": ["http://127.0.0.1:9"],
    }
    db = tmp_path / "c.sqlite"
    ident = lambda b, m: build_backend(b, m, cache_mode="readwrite", cache_path=db).model_identity  # noqa: E731
    smaller = model | {"vllm_args": {"mm_processor_kwargs": {"max_pixels": 401408}}}
    keys = {ident(srv, model), ident(srv, smaller), ident(srv, model | {"max_images": 2})}
    assert len(keys) == 3
    req = _request("q")
    assert len({request_key(req, k) for k in keys}) == 3
    assert "vllm_server" in ident(srv, model)


def _replies(tmp_path: Path) -> Path:
    path = tmp_path / "replies.jsonl"
    path.write_text(
        json.dumps({"id": "a", "response": "Answer: B"})
        + "\n"
        + json.dumps({"id": "b", "response": "C"})
        + "\n"
    )
    return path


def test_replay_answers_by_item_id_and_a_missing_id_is_a_backend_error(tmp_path: Path) -> None:
    backend = ReplayBackend({"name": "gpt-4o"}, path=str(_replies(tmp_path)))
    assert asyncio.run(backend.generate(GenerationRequest(messages=[], item_id="a"))).text == "Answer: B"
    with pytest.raises(BackendError, match="no reply for item 'zzz'"):
        asyncio.run(backend.generate(GenerationRequest(messages=[], item_id="zzz")))
    with pytest.raises(ConfigError, match="backend.path"):
        ReplayBackend({"name": "m"}, path=str(tmp_path / "missing.jsonl"))
    (tmp_path / "bad.jsonl").write_text('{"id": "a"}\n')
    with pytest.raises(DataError, match="bad.jsonl: record 1 needs .id. and .response."):
        ReplayBackend({"name": "m"}, path=str(tmp_path / "bad.jsonl"))


def test_pillows_own_bomb_guard_is_a_refusal_too(tmp_path: Path, monkeypatch) -> None:
    img = _png(tmp_path / "a.png", (100, 100))
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)  # 10 000 px > 2 x 1 000: Pillow raises on open
    with pytest.raises(DataError, match="refused by the decompression-bomb guard"):
        apply_budget(_request(img, "q"), ImageBudget(max_images=1))


@pytest.mark.parametrize("reply", [["Answer: 16.50"], 16.5, {"text": "B"}])
def test_a_replay_reply_that_is_not_text_is_a_per_item_error_never_coerced(tmp_path: Path, reply) -> None:
    path = tmp_path / "replies.jsonl"
    path.write_text(
        json.dumps({"id": "a", "response": reply}) + "\n" + json.dumps({"id": "b", "response": "B"}) + "\n"
    )
    backend = ReplayBackend({"name": "m"}, path=str(path))
    kind = type(reply).__name__
    with pytest.raises(BackendError, match=f"reply for item 'a' in .* is a JSON {kind}, not text"):
        asyncio.run(backend.generate(GenerationRequest(messages=[], item_id="a")))
    assert (
        asyncio.run(backend.generate(GenerationRequest(messages=[], item_id="b"))).text == "B"
    )  # the others answer
