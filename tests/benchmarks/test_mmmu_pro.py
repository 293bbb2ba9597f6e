from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from ledgermind.benchmarks import AnswerType, load_benchmark
from ledgermind.errors import ConfigError, DataError


@pytest.fixture(scope="module")
def subset(shared_data):
    return shared_data / "mmmu_pro_subset"


def _rows(subset):
    return [json.loads(line) for line in (subset / "items.jsonl").read_text().splitlines() if line.strip()]


def test_standard10(subset) -> None:
    items = load_benchmark("mmmu_pro", {"path": str(subset), "setting": "standard10"})
    rows = _rows(subset)
    assert len(items) == len(rows) == 136
    for it, row in zip(items, rows, strict=True):
        assert (
            it.answer == row["answer"] and it.options == row["options"] and it.answer_type is AnswerType.MCQ
        )
        assert it.difficulty == row["topic_difficulty"]
        assert [p.name for p in it.images] == row["images"] and all(p.is_file() for p in it.images)
        assert it.meta["answer_text"] == row["options"][ord(row["answer"]) - ord("A")]
    from collections import Counter

    assert Counter(it.difficulty for it in items) == {"Easy": 26, "Medium": 68, "Hard": 42}


def test_standard4_uses_original_options(subset) -> None:
    items = load_benchmark("mmmu_pro", {"path": str(subset), "setting": "standard4", "limit": 5})
    rows = _rows(subset)[:5]
    assert len(items) == 5
    assert [it.options for it in items] == [r["options_orig"] for r in rows]
    assert [it.answer for it in items] == [r["answer_orig"] for r in rows]
    # the same question, the same correct option text in both settings
    s10 = load_benchmark("mmmu_pro", {"path": str(subset), "limit": 5})
    assert [a.meta["answer_text"] for a in items] == [b.meta["answer_text"] for b in s10]


def test_image_placeholders_in_options_map_to_images(subset) -> None:
    items = load_benchmark("mmmu_pro", {"path": str(subset)})
    with_opt_images = [it for it in items if any("<image" in o for o in it.options)]
    assert with_opt_images, "the subset has items with images inside options"
    for it in with_opt_images:
        placeholders = re.findall(r"<image\s*(\d+)>", " ".join([it.question, *it.options]))
        assert max(int(n) for n in placeholders) <= len(it.images)


def test_bad_setting(subset) -> None:
    with pytest.raises(ConfigError, match="standard10"):
        load_benchmark("mmmu_pro", {"path": str(subset), "setting": "standard"})


@pytest.mark.slow
def test_vision_pages_are_rendered_cached_and_deterministic(subset, tmp_path) -> None:
    cfg = {"path": str(subset), "setting": "vision", "limit": 3, "cache_dir": str(tmp_path)}
    items = load_benchmark("mmmu_pro", cfg)
    assert all(len(it.images) == 1 and it.options is None for it in items)
    # the text question says where the question is and asks for a letter (no option text leaks)
    assert items[0].question == (
        f"The question and its answer options, lettered A to {chr(ord('A') + len(items[0].meta['options']) - 1)}, "
        "are shown in the image. Read them from the image and answer with the letter of the correct option."
    )
    assert all(it.meta["options"] and it.meta["vision_font_used"].endswith(".ttf") for it in items)
    page = Image.open(items[0].images[0])
    assert page.width == 1024 and page.height > 300
    mtime = items[0].images[0].stat().st_mtime_ns
    again = load_benchmark("mmmu_pro", cfg)
    assert [i.images for i in again] == [i.images for i in items]
    assert items[0].images[0].stat().st_mtime_ns == mtime  # cache hit: not re-rendered
    # background colour of the recorded style shows at the page corner
    row = _rows(subset)[1]
    if row["vision_background"].startswith("#"):
        corner = Image.open(items[1].images[0]).convert("RGB").getpixel((2, 2))
        assert "#{:02x}{:02x}{:02x}".format(*corner) == row["vision_background"].lower()


def test_vision_broken_image_is_item_error_not_crash(tmp_path, png_bytes) -> None:
    root = tmp_path / "ds"
    (root / "images").mkdir(parents=True)
    (root / "images" / "ok.png").write_bytes(png_bytes())
    (root / "images" / "bad.png").write_bytes(b"not a png")
    rows = [
        {
            "id": "ok",
            "question": "Q <image 1>",
            "options": ["a", "b"],
            "answer": "A",
            "images": ["ok.png"],
            "vision_background": "#ffe6e6",
        },
        {"id": "bad", "question": "Q <image 1>", "options": ["a", "b"], "answer": "B", "images": ["bad.png"]},
    ]
    (root / "items.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    items = load_benchmark(
        "mmmu_pro", {"path": str(root), "setting": "vision", "cache_dir": str(tmp_path / "c")}
    )
    assert len(items[0].images) == 1 and "load_error" not in items[0].meta
    assert items[1].images == [] and "bad.png" in items[1].meta["load_error"]


def test_bad_answer_letter_is_data_error(tmp_path) -> None:
    (tmp_path / "items.jsonl").write_text(
        json.dumps({"id": "x", "question": "q", "options": ["a"], "answer": "C", "images": []})
    )
    with pytest.raises(DataError, match="not one of its option letters"):
        load_benchmark("mmmu_pro", {"path": str(tmp_path), "strict": True})


def test_bad_rows_are_per_item_errors_and_the_load_goes_on(tmp_path) -> None:
    good = {"id": "good", "question": "q", "options": ["a", "b"], "answer": "B", "images": []}
    nested = {
        "id": "validation_Accounting_29",
        "question": "q",
        "options": [["a", "b"], "c"],
        "answer": "A",
        "images": [],
    }
    evil = {
        "id": "evil",
        "question": "q <image 1>",
        "options": ["a", "b"],
        "answer": "A",
        "images": ["../../../../etc/passwd"],
    }
    (tmp_path / "items.jsonl").write_text("\n".join(json.dumps(r) for r in (good, nested, evil)))
    for setting in ("standard10", "vision"):
        items = {
            it.id: it
            for it in load_benchmark(
                "mmmu_pro", {"path": str(tmp_path), "setting": setting, "cache_dir": str(tmp_path / "c")}
            )
        }
        assert list(items) == ["good", "validation_Accounting_29", "evil"]
        assert "load_error" not in items["good"].meta
        assert (
            items["validation_Accounting_29"].meta["load_error"].startswith(f"{tmp_path / 'items.jsonl'}:2: ")
        )
        assert "nested" in items["validation_Accounting_29"].meta["load_error"]
        assert (
            "'evil'" in items["evil"].meta["load_error"]
            and "outside the data directory" in items["evil"].meta["load_error"]
        )
        assert items["evil"].images == []
    with pytest.raises(DataError, match="nested"):
        load_benchmark("mmmu_pro", {"path": str(tmp_path), "strict": True})


def test_official_parquet_layout(tmp_path, png_bytes) -> None:
    img = {"bytes": png_bytes("blue"), "path": "x.png"}
    none = {"bytes": None, "path": None}
    table = pa.table(
        {
            "id": ["test_Art_1", "test_Math_2"],
            "question": ["Who painted <image 1>?", "Compare <image 1> and <image 2>."],
            "options": [str(["Monet", "Manet", "Degas"]), str(["<image 2>", "none"])],
            "answer": ["B", "A"],
            "image_1": [img, img],
            "image_2": [none, {"bytes": png_bytes("green"), "path": "y.png"}],
            "topic_difficulty": ["Easy", "Hard"],
            "subject": ["Art", "Math"],
        }
    )
    d = tmp_path / "standard (10 options)"
    d.mkdir()
    pq.write_table(table, d / "test-00000-of-00001.parquet")
    items = load_benchmark("mmmu_pro", {"path": str(tmp_path), "cache_dir": str(tmp_path / "cache")})
    assert [it.id for it in items] == ["test_Art_1", "test_Math_2"]
    assert items[0].options == ["Monet", "Manet", "Degas"] and items[0].answer == "B"
    assert len(items[0].images) == 1 and len(items[1].images) == 2
    assert Image.open(items[1].images[1]).getpixel((0, 0)) == (0, 128, 0)
    assert [it.difficulty for it in items] == ["Easy", "Hard"]
    vis = load_benchmark(
        "mmmu_pro", {"path": str(tmp_path), "setting": "vision", "cache_dir": str(tmp_path / "cache")}
    )
    assert len(vis[1].images) == 1 and vis[1].meta["options"] == ["<image 2>", "none"]


def test_official_vision_parquet_uses_given_page(tmp_path, png_bytes) -> None:
    table = pa.table(
        {
            "id": ["v1"],
            "image": [{"bytes": png_bytes("white", (80, 60)), "path": None}],
            "options": [str(["a", "b"])],
            "answer": ["B"],
        }
    )
    pq.write_table(table, tmp_path / "vision.parquet")
    items = load_benchmark(
        "mmmu_pro",
        {"path": str(tmp_path / "vision.parquet"), "setting": "vision", "cache_dir": str(tmp_path / "c")},
    )
    assert Image.open(items[0].images[0]).size == (80, 60) and items[0].question.startswith(
        "The question and its answer options"
    )
    assert items[0].options is None and items[0].meta["options"]


def test_official_tsv_layout(tmp_path, png_bytes) -> None:
    import base64

    b64 = base64.b64encode(png_bytes()).decode()
    (tmp_path / "MMMU_Pro_10c.tsv").write_text(
        f"index\tquestion\tA\tB\tC\tanswer\timage\n7\tWhat is <image 1>?\tcat\tdog\tcow\tC\t{b64}\n"
    )
    items = load_benchmark("mmmu_pro", {"path": str(tmp_path), "cache_dir": str(tmp_path / "c")})
    assert items[0].id == "7" and items[0].options == ["cat", "dog", "cow"] and items[0].answer == "C"
    assert Image.open(items[0].images[0]).size == (40, 30)


def test_vision_page_from_a_decompression_bomb_is_an_item_error(tmp_path, png_bytes, monkeypatch) -> None:
    """Pillow's bomb guard raises DecompressionBombError (not OSError): one item's error, not a crashed run."""
    from PIL import Image

    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "big.png").write_bytes(png_bytes("white", (64, 64)))
    rows = [
        {
            "id": "bomb",
            "question": "q <image 1>",
            "options": ["a", "b"],
            "answer": "A",
            "images": ["big.png"],
        },
        {"id": "fine", "question": "q", "options": ["a", "b"], "answer": "B", "images": []},
    ]
    (tmp_path / "items.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)  # 64x64 = 4096 > 2 x 1000: a "bomb"
    bomb, fine = load_benchmark(
        "mmmu_pro", {"path": str(tmp_path), "setting": "vision", "cache_dir": str(tmp_path / "c")}
    )
    assert bomb.images == [] and "decompression-bomb guard" in bomb.meta["load_error"]
    assert "load_error" not in fine.meta and len(fine.images) == 1


def test_two_jobs_rendering_one_page_at_once_both_get_it(tmp_path, monkeypatch) -> None:
    """The jobs of a sweep share the page cache: two that render the same page at the same moment
    each write through their own temporary file (one fixed name let the second rename fail on, or
    truncate, the first's)."""
    import threading

    from ledgermind.benchmarks.vision import DEFAULT_FONT_PX, PageStyle, cached_page, resolve_font

    photo = tmp_path / "p.png"
    Image.new("RGB", (64, 48), "navy").save(photo)
    style = PageStyle(resolve_font(None), DEFAULT_FONT_PX, "#ffffff")
    both_inside = threading.Barrier(2, timeout=10)
    real_save = Image.Image.save

    def save_together(self, fp, *args, **kwargs):  # both renders are inside their save at once
        both_inside.wait()
        return real_save(self, fp, *args, **kwargs)

    monkeypatch.setattr(Image.Image, "save", save_together)
    pages, errors = [], []

    def render() -> None:
        try:
            pages.append(
                cached_page("What is shown? <image 1>", ["a", "b"], [photo], style, tmp_path / "pages")
            )
        except Exception as exc:  # what a job would have failed with
            errors.append(exc)

    threads = [threading.Thread(target=render) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    monkeypatch.undo()
    assert errors == [] and len(set(pages)) == 1
    assert Image.open(pages[0]).size[0] == 1024  # a whole PNG
    assert [p.name for p in (tmp_path / "pages").iterdir()] == [pages[0].name]  # no temporary left


def test_a_vision_page_that_cannot_be_rendered_names_its_row_and_stops_a_strict_load(tmp_path) -> None:
    """Like every other bad row: the error item says which file and line; ``strict`` stops the load."""
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "bad.png").write_bytes(b"not a png")
    row = {
        "id": "bad",
        "question": "Q <image 1>",
        "options": ["a", "b"],
        "answer": "B",
        "images": ["bad.png"],
    }
    (tmp_path / "items.jsonl").write_text(json.dumps(row) + "\n")
    cfg = {"path": str(tmp_path), "setting": "vision", "cache_dir": str(tmp_path / "c")}
    (item,) = load_benchmark("mmmu_pro", cfg)
    assert item.id == "bad" and item.images == []
    assert (
        item.meta["load_error"].startswith(f"{tmp_path / 'items.jsonl'}:1: ")
        and "bad.png" in item.meta["load_error"]
    )
    with pytest.raises(DataError, match=r"items\.jsonl:1: .*bad\.png"):
        load_benchmark("mmmu_pro", cfg | {"strict": True})


def test_the_data_format_doc_says_what_a_vision_item_asks() -> None:
    """The doc promised an empty question text; the item says the question is in the image."""
    from ledgermind.benchmarks.vision import VISION_QUESTION

    doc = " ".join((Path(__file__).resolve().parents[2] / "docs" / "data_format.md").read_text().split())
    assert "the question text is empty" not in doc and "VISION_QUESTION" in doc
    assert VISION_QUESTION.format(first="A", last="B").startswith("The question and its answer options")
