"""An image path that is a FIFO or a folder is that item's error naming what it is, and nothing waits on
it: the item's content hash, the perception cache key, the model call's bytes and the decoder all
open images through ``ledgermind.bounded_read.open_regular``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ledgermind.backends.images import image_digest
from ledgermind.benchmarks.item import Item
from ledgermind.errors import DataError
from ledgermind.image_decode import ImageNotFoundError, decode_image
from perception.cache import CachedTool, PerceptionCache
from perception.tools import build_tools
from tests.perception.test_perception_cache import perception_cfg
from tests.test_bounded_read import outcome_without_waiting


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "img.png"
    os.mkfifo(path)
    return path


def test_an_items_content_hash_does_not_wait_on_a_fifo_image(fifo: Path) -> None:
    item = Item(id="q", question="What does <image 1> show?", images=[str(fifo)], answer="A")
    assert outcome_without_waiting(item.content_sha256, fifo) is None


def test_the_model_calls_image_bytes_refuse_a_fifo_in_one_line(fifo: Path) -> None:
    raised = outcome_without_waiting(lambda: image_digest(fifo), fifo)
    assert isinstance(raised, DataError)
    assert str(raised).startswith(f"cannot read image {fifo}: ") and "FIFO" in str(raised)


def test_the_perception_cache_key_does_not_wait_on_a_fifo(fifo: Path, tmp_path: Path) -> None:
    ocr = CachedTool(build_tools(perception_cfg())["ocr"], PerceptionCache(tmp_path / "c"))
    raised = outcome_without_waiting(lambda: ocr.key({"image": fifo}), fifo)
    assert raised is None


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_the_decoder_names_what_the_path_is(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "img.png"
    os.mkfifo(path) if kind == "fifo" else path.mkdir()
    what = "a FIFO (named pipe)" if kind == "fifo" else "a directory"
    with pytest.raises(ImageNotFoundError) as exc:
        decode_image(path)
    assert str(exc.value) == f"image {path} is {what}, not a regular file"


@pytest.mark.parametrize("entry", [".json", ".crop.png"])
def test_a_fifo_in_the_perception_cache_is_a_miss_not_a_wait(tmp_path: Path, entry: str) -> None:
    cache = PerceptionCache(tmp_path / "c")
    key = "ab" * 32
    json_path = cache.directory / key[:2] / f"{key}.json"
    json_path.parent.mkdir(parents=True)
    if entry == ".json":
        os.mkfifo(json_path)
    else:
        json_path.write_text('{"format": 2, "observations": [], "image_artifacts": ["crop"], "values": {}}')
        os.mkfifo(json_path.with_name(f"{key}{entry}"))
    fifo = json_path if entry == ".json" else json_path.with_name(f"{key}{entry}")
    assert outcome_without_waiting(lambda: cache.get(key), fifo) is None
    assert cache.get(key) is None and cache.misses == 2
