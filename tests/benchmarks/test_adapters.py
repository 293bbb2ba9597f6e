"""Each adapter on a tiny synthetic file in its benchmark's own layout."""

from __future__ import annotations

import csv
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from ledgermind.benchmarks import AnswerType, load_benchmark
from ledgermind.benchmarks.adapters import split_inline_options
from ledgermind.errors import DataError


def test_mmstar_parquet_with_inline_options(tmp_path, png_bytes) -> None:
    pq.write_table(
        pa.table(
            {
                "index": [0],
                "question": ["Which animal is shown?\nOptions: A: a cat, B: a dog, C: a cow, D: a hen"],
                "image": [{"bytes": png_bytes(), "path": None}],
                "answer": ["B"],
                "category": ["coarse perception"],
                "l2_category": ["image scene"],
            }
        ),
        tmp_path / "mmstar.parquet",
    )
    [it] = load_benchmark("mmstar", {"path": str(tmp_path), "cache_dir": str(tmp_path / "c")})
    assert it.id == "mmstar_0" and it.question == "Which animal is shown?"
    assert it.options == ["a cat", "a dog", "a cow", "a hen"] and it.answer == "B"
    assert Image.open(it.images[0]).size == (40, 30) and it.meta["category"] == "coarse perception"


def test_mmmu_parquet_mcq_and_open(tmp_path, png_bytes) -> None:
    img = {"bytes": png_bytes(), "path": "a.png"}
    pq.write_table(
        pa.table(
            {
                "id": ["validation_Art_1", "validation_Math_2"],
                "question": ["Style of <image 1>?", "Value of x in <image 1>?"],
                "options": [str(["Baroque", "Cubism"]), "[]"],
                "answer": ["A", "24"],
                "image_1": [img, img],
                "image_2": [{"bytes": None, "path": None}] * 2,
                "question_type": ["multiple-choice", "open"],
                "topic_difficulty": ["Easy", "Hard"],
            }
        ),
        tmp_path / "validation-00000-of-00001.parquet",
    )
    items = load_benchmark("mmmu", {"path": str(tmp_path), "cache_dir": str(tmp_path / "c")})
    assert [it.answer_type for it in items] == [AnswerType.MCQ, AnswerType.NUMERIC]
    assert items[0].options == ["Baroque", "Cubism"] and items[1].options is None
    assert [len(it.images) for it in items] == [1, 1] and items[1].difficulty == "Hard"


def test_an_unaskable_row_is_that_rows_error(tmp_path, png_bytes) -> None:
    img = {"bytes": png_bytes(), "path": "a.png"}
    pq.write_table(
        pa.table(
            {
                "id": ["blank", "many", "good"],
                "question": ["", "Which? <image 1>", "Which? <image 1>"],
                "options": [str(["x", "y"]), str([f"o{i}" for i in range(27)]), str(["x", "y"])],
                "answer": ["A", "A", "B"],
                "image_1": [img] * 3,
                "question_type": ["multiple-choice"] * 3,
            }
        ),
        tmp_path / "validation-00000-of-00001.parquet",
    )
    items = load_benchmark("mmmu", {"path": str(tmp_path), "cache_dir": str(tmp_path / "c")})
    errors = {it.id: it.meta.get("load_error") for it in items}
    assert errors["blank"].endswith(".parquet:1: item 'blank': the question is empty")
    assert errors["many"].endswith(".parquet:2: item 'many': 27 options, more than the 26 labels A-Z")
    assert errors["good"] is None


def test_emma_jsonl(tmp_path, png_bytes) -> None:
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "p1.png").write_bytes(png_bytes())
    rows = [
        {
            "pid": "phys_1",
            "question": "Force in <image_1>?",
            "options": ["1 N", "2 N"],
            "answer": "B",
            "image_1": "img/p1.png",
            "type": "Multiple Choice",
            "subject": "Physics",
        },
        {
            "pid": "math_2",
            "question": "Area?",
            "options": None,
            "answer": "12",
            "type": "Open-ended",
            "subject": "Math",
        },
    ]
    (tmp_path / "emma.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    items = load_benchmark("emma", {"path": str(tmp_path)})
    assert items[0].question == "Force in <image 1>?" and items[0].images == [tmp_path / "img" / "p1.png"]
    assert items[0].answer_type is AnswerType.MCQ and items[1].answer_type is AnswerType.NUMERIC
    assert items[0].meta["subject"] == "Physics"


def test_vstar_jsonl(tmp_path) -> None:
    row = {
        "question_id": 3,
        "image": "direct_attributes/sa_1.jpg",
        "text": "What is the color of the umbrella?\n(A) red\n(B) blue\n(C) green\n(D) white\nAnswer with the option's letter from the given choices directly.",
        "category": "direct_attributes",
        "label": "B",
    }
    (tmp_path / "test_questions.jsonl").write_text(json.dumps(row))
    [it] = load_benchmark("vstar", {"path": str(tmp_path)})
    assert it.id == "vstar_3" and it.question == "What is the color of the umbrella?"
    assert it.options == ["red", "blue", "green", "white"] and it.answer == "B"
    assert it.images == [tmp_path / "direct_attributes" / "sa_1.jpg"]


def test_vstar_without_options_is_data_error(tmp_path) -> None:
    (tmp_path / "q.jsonl").write_text(
        json.dumps({"question_id": 1, "image": "a.jpg", "text": "Colour?", "label": "A"})
    )
    with pytest.raises(DataError, match="options"):
        load_benchmark("vstar", {"path": str(tmp_path), "strict": True})
    (item,) = load_benchmark("vstar", {"path": str(tmp_path)})  # default: a per-item error naming the row
    assert (
        item.id == "1" and "q.jsonl:1: " in item.meta["load_error"] and "options" in item.meta["load_error"]
    )


def test_vstar_image_outside_the_data_dir_is_refused(tmp_path) -> None:
    row = {"question_id": 7, "image": "../outside/x.png", "text": "Colour?\n(A) red\n(B) blue", "label": "A"}
    (tmp_path / "q.jsonl").write_text(json.dumps(row))
    (item,) = load_benchmark("vstar", {"path": str(tmp_path)})
    assert (
        item.images == []
        and "vstar_7" in item.meta["load_error"]
        and "outside the data directory" in item.meta["load_error"]
    )


def test_split_inline_options_requires_consecutive_letters() -> None:
    assert split_inline_options("Q (A) x (C) y", r"\(([A-D])\)\s*([^()]+?)\s*(?=\([A-D]\)|$)") == (
        "Q (A) x (C) y",
        None,
    )


def test_bad_rows_of_several_files_are_error_items_not_duplicate_ids(tmp_path) -> None:
    """Each file's bad first line is its own error item (named by file and line); the load goes on."""
    good = {"pid": "e1", "question": "Q", "options": ["x", "y"], "answer": "A", "type": "Multiple Choice"}
    (tmp_path / "a.jsonl").write_text("oops\n" + json.dumps(good) + "\n")
    (tmp_path / "b.jsonl").write_text('oops\n{"question": "Q", "options": "[1", "answer": "A"}\n')
    items = load_benchmark("emma", {"path": str(tmp_path)})
    assert [it.id for it in items] == ["a.jsonl:line1", "e1", "b.jsonl:line1", "b.jsonl:row2"]
    assert "b.jsonl:2: " in items[3].meta["load_error"]
    assert all("load_error" in it.meta for it in items if it.id != "e1")


def test_emma_row_without_an_id_is_an_error_not_an_item_named_none(tmp_path) -> None:
    (tmp_path / "q.jsonl").write_text(
        '{"question": "Q", "answer": "3"}\n{"pid": 0, "question": "Q", "answer": "4"}\n'
    )
    first, second = load_benchmark("emma", {"path": str(tmp_path)})
    assert first.id == "row1" and "without 'pid'" in first.meta["load_error"]
    assert second.id == "0" and "load_error" not in second.meta


def test_an_mcq_gold_that_is_no_option_letter_is_an_error_item(tmp_path) -> None:
    """MMStar (and MMMU, EMMA) kept an item whose gold letter no option carries: every reply was
    scored wrong; like MMMU-Pro and V*, it is now that row's error."""
    rows = [
        {"index": 1, "question": "Q", "A": "x", "B": "y", "answer": "B", "image": "a.png"},
        {"index": 2, "question": "Q", "A": "x", "B": "y", "answer": "E", "image": "a.png"},
    ]
    with (tmp_path / "MMStar.tsv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter="\t")
        writer.writeheader()
        writer.writerows(rows)
    ok, bad = load_benchmark("mmstar", {"path": str(tmp_path)})
    assert "load_error" not in ok.meta and ok.answer == "B"
    assert (
        "MMStar.tsv:2: " in bad.meta["load_error"]
        and "'E' is not one of its option letters" in bad.meta["load_error"]
    )
