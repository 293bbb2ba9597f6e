from __future__ import annotations

import json
import re

import pytest

from ledgermind.benchmarks import AnswerType, load_benchmark
from ledgermind.benchmarks.gauges import graduation
from ledgermind.errors import DataError
from ledgermind.scoring import score


def test_gauges(shared_data) -> None:
    items = load_benchmark("gauges", {"path": str(shared_data / "gauges")})
    assert len(items) == 44 and len({it.id for it in items}) == 44
    assert all(it.answer_type is AnswerType.NUMERIC and it.images[0].is_file() for it in items)
    assert all(it.meta["numeric_kind"] == "reading" and it.meta["graduation"] > 0 for it in items)
    first = items[0]  # 140–280, reading 140, tick_pos "140,160" (ticks 2 → 70): graduation 20
    assert first.answer == "140" and first.meta["graduation"] == 20
    assert score(first, "Answer: 160").correct == 1.0  # within one graduation
    assert score(first, "Answer: 170").correct == 0.0  # > 15 % and > one graduation


def test_graduation_rules() -> None:
    assert (
        graduation({"min": "0", "max": "450", "ticks": "15", "tick_pos": "300,450"}) == 30
    )  # smaller estimate
    assert graduation({"min": "0", "max": "5", "ticks": "10"}) == 0.5  # no tick_pos
    assert graduation({"min": "0", "max": "5", "ticks": "0"}) is None


def test_gauges_bad_record(tmp_path) -> None:
    (tmp_path / "items.jsonl").write_text(
        json.dumps({"image": "a.jpg", "min": "0", "max": "x", "reading": "1"})
    )
    with pytest.raises(DataError, match="items.jsonl:1: could not convert string to float: 'x'"):
        load_benchmark("gauges", {"path": str(tmp_path), "strict": True})
    (item,) = load_benchmark("gauges", {"path": str(tmp_path)})
    assert (
        item.meta["load_error"]
        == f"{tmp_path / 'items.jsonl'}:1: ValueError: could not convert string to float: 'x'"
    )


def test_ai2d(shared_data) -> None:
    items = load_benchmark("ai2d", {"path": str(shared_data / "ai2d_sample"), "limit": 4})
    assert len(items) == 4
    assert all(
        it.answer_type is AnswerType.MCQ and len(it.options) == 4 and it.answer in "ABCD" for it in items
    )
    assert all(it.images[0].is_file() for it in items)


def test_generic_jsonl_inference_and_paths(tmp_path) -> None:
    recs = [
        {"id": "m", "question": "Which?", "options": ["x", "y"], "answer": "B", "images": ["img/a.png"]},
        {"id": "n", "question": "How many?", "answer": "3", "image": "/abs/b.png"},
        {"id": "o", "question": "Name?", "answer": "Oslo", "difficulty": "Hard", "meta": {"k": 1}},
        {
            "id": "r",
            "question": "Read",
            "answer": "2.5",
            "answer_type": "numeric",
            "meta": {"numeric_kind": "reading"},
        },
    ]
    (tmp_path / "items.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n\n")
    items = load_benchmark("jsonl", {"path": str(tmp_path)})
    assert [it.answer_type for it in items[::2]] + [items[3].answer_type] == [
        AnswerType.MCQ,
        AnswerType.OPEN,
        AnswerType.NUMERIC,
    ]
    assert items[0].images == [(tmp_path / "img" / "a.png").resolve()]
    # an absolute path outside the JSONL's directory is refused: a per-item error naming the item
    assert (
        items[1].images == []
        and "'n'" in items[1].meta["load_error"]
        and "/abs/b.png" in items[1].meta["load_error"]
    )
    assert items[2].difficulty == "Hard" and items[2].meta == {"k": 1}


def test_a_lone_surrogate_in_item_text_becomes_a_replacement_character(tmp_path) -> None:
    # "\ud800" is valid JSON but decodes to text that UTF-8 cannot encode: every prompt, OCR match
    # and record of the item would fail far from its cause, so the item is made valid text on load
    rec = '{"id": "s", "question": "What is \\ud800 here?", "options": ["a\\udfff", "b"], "answer": "A"}'
    (tmp_path / "items.jsonl").write_text(rec + "\n")
    [item] = load_benchmark("jsonl", {"path": str(tmp_path)})
    assert (item.question, item.options) == ("What is \ufffd here?", ["a\ufffd", "b"])
    item.question.encode("utf-8")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "{not json",
            r"line 1 is not a valid JSON object \(Expecting",
        ),  # an unreadable file aborts even without strict
        ("[1, 2]", r"line 1 is not a valid JSON object \(a JSON list"),
        ('{"question": "q"}', "field 'id': Field required"),
        ('{"id": "a", "question": "q", "options": ["x"], "answer": "Z"}', "answer letter"),
        ('{"id": "a", "question": "q", "answer": "x", "answer_type": "essay"}', "answer_type must be"),
    ],
)
def test_generic_jsonl_errors_name_the_line(tmp_path, line: str, message: str) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text(line + "\n")
    with pytest.raises(DataError, match=message):
        load_benchmark("jsonl", {"path": str(f), "strict": True})


@pytest.mark.parametrize("name", ["../../../../etc/passwd", "../outside/x.png", "/etc/passwd"])
def test_generic_jsonl_refuses_paths_outside_the_data_dir(tmp_path, name: str) -> None:
    rows = [
        {"id": "evil", "question": "q", "answer": "x", "images": [name]},
        {"id": "ok", "question": "q", "answer": "y"},
    ]
    (tmp_path / "items.jsonl").write_text("\n".join(map(json.dumps, rows)))
    evil, ok = load_benchmark("jsonl", {"path": str(tmp_path)})
    assert evil.id == "evil" and evil.images == [] and "outside the data directory" in evil.meta["load_error"]
    assert "load_error" not in ok.meta


@pytest.mark.parametrize(
    "line",
    [
        '{"question": "q"}',
        '{"id": "a", "question": "q", "options": ["x"], "answer": "Z"}',
        '{"id": "a", "question": "q", "answer": "x", "answer_type": "essay"}',
        '{"id": "a", "question": "q", "images": ["../x.png"], "answer": "x"}',
    ],
)
def test_strict_load_names_the_file_and_line_of_the_bad_row(tmp_path, line: str) -> None:
    """With ``strict`` the one line that stops the load says where the row is, as its error item would."""
    f = tmp_path / "bad.jsonl"
    f.write_text('{"id": "ok", "question": "q", "answer": "x"}\n' + line + "\n")
    with pytest.raises(DataError, match=rf"^{re.escape(str(f))}:2: "):
        load_benchmark("jsonl", {"path": str(f), "strict": True})


@pytest.mark.parametrize("gold", ["inf", "NaN", "1_000", "1,5", "12,50"])
def test_a_gold_the_scorer_reads_as_another_number_is_not_inferred_numeric(tmp_path, gold: str) -> None:
    """``float`` takes these golds (15 for "1,5"), the numeric scorer reads none or another number
    from them (5, 0, nothing): as numeric items they could never be scored right, or right for the
    wrong reply. They are open answers, compared as text."""
    f = tmp_path / "items.jsonl"
    f.write_text(json.dumps({"id": "g", "question": "q", "answer": gold}) + "\n")
    (item,) = load_benchmark("jsonl", {"path": str(f)})
    assert item.answer_type is AnswerType.OPEN
    assert score(item, f"Answer: {gold}").correct == 1.0


@pytest.mark.parametrize("gold", ["abc", "1,5", "inf"])
def test_a_numeric_item_whose_gold_is_not_a_number_is_an_error_item(tmp_path, gold: str) -> None:
    f = tmp_path / "items.jsonl"
    f.write_text(json.dumps({"id": "g", "question": "q", "answer": gold, "answer_type": "numeric"}) + "\n")
    (item,) = load_benchmark("jsonl", {"path": str(f)})
    assert f"{f}:1: " in item.meta["load_error"] and "not a plain number" in item.meta["load_error"]


@pytest.mark.parametrize("gold", ["7", "1,000", "-3", "0.5", "1e3", " 12 "])
def test_plain_numbers_stay_numeric(tmp_path, gold: str) -> None:
    f = tmp_path / "items.jsonl"
    f.write_text(json.dumps({"id": "g", "question": "q", "answer": gold}) + "\n")
    (item,) = load_benchmark("jsonl", {"path": str(f)})
    assert item.answer_type is AnswerType.NUMERIC and "load_error" not in item.meta


@pytest.mark.parametrize("blank", ["", "  "])
def test_a_blank_id_is_an_error_item_named_by_its_line(tmp_path, blank: str) -> None:
    f = tmp_path / "items.jsonl"
    f.write_text(json.dumps({"id": "ok", "question": "q", "answer": "x"}) + "\n")
    f.write_text(f.read_text() + json.dumps({"id": blank, "question": "q", "answer": "x"}) + "\n")
    ok, bad = load_benchmark("jsonl", {"path": str(f)})
    assert "load_error" not in ok.meta
    assert (
        bad.id == "row2"
        and bad.meta["load_error"].startswith(f"{f}:2: ")
        and "blank" in bad.meta["load_error"]
    )


def test_null_images_options_and_answer_read_as_absent(tmp_path) -> None:
    (tmp_path / "a.png").write_bytes(b"")
    rows = [
        {"id": "n", "question": "q", "images": None, "options": None, "answer": None},
        {"id": "i", "question": "q <image 1>", "images": None, "image": "a.png", "answer": "x"},
    ]
    (tmp_path / "items.jsonl").write_text("\n".join(map(json.dumps, rows)) + "\n")
    n, i = load_benchmark("jsonl", {"path": str(tmp_path)})
    assert "load_error" not in n.meta and n.images == [] and n.options is None and n.answer is None
    assert "load_error" not in i.meta and i.images == [tmp_path / "a.png"]


@pytest.mark.parametrize(("kind", "gold"), [("open", "x"), ("numeric", "3")])
def test_options_on_an_item_that_is_not_mcq_are_an_error_item(tmp_path, kind: str, gold: str) -> None:
    """The prompt lists the options and asks for a letter; the open/numeric scorer compares the reply
    with the gold text, so the asked-for letter would always be scored wrong."""
    f = tmp_path / "items.jsonl"
    row = {"id": "o", "question": "q", "options": ["x", "3"], "answer": gold, "answer_type": kind}
    f.write_text(json.dumps(row) + "\n")
    (item,) = load_benchmark("jsonl", {"path": str(f)})
    assert (
        item.meta["load_error"].startswith(f"{f}:1: ")
        and "has options but answer_type" in item.meta["load_error"]
    )


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ({"numeric_kind": "reading", "graduation": "0.1"}, "meta.graduation '0.1' is not a positive number"),
        ({"numeric_kind": "reading", "graduation": [1]}, "meta.graduation [1] is not a positive number"),
        ({"numeric_kind": "reading", "graduation": 0}, "meta.graduation 0 is not a positive number"),
        ({"numeric_kind": "Reading"}, "meta.numeric_kind 'Reading' is not one of"),
    ],
)
def test_numeric_scoring_keys_of_meta_are_checked_at_load(tmp_path, meta: dict, message: str) -> None:
    """A graduation given as text made the scorer raise TypeError for some replies (not others); an
    unknown kind scored a reading exactly. Both are now the row's error at load."""
    f = tmp_path / "items.jsonl"
    f.write_text(json.dumps({"id": "t", "question": "q", "answer": "36.8", "meta": meta}) + "\n")
    (item,) = load_benchmark("jsonl", {"path": str(f)})
    assert item.meta["load_error"].startswith(f"{f}:1: ") and message in item.meta["load_error"]


def test_valid_numeric_meta_loads_and_scores_within_a_graduation(tmp_path) -> None:
    f = tmp_path / "items.jsonl"
    meta = {"numeric_kind": "reading", "graduation": 2, "free": "form"}
    f.write_text(json.dumps({"id": "t", "question": "q", "answer": "4", "meta": meta}) + "\n")
    (item,) = load_benchmark("jsonl", {"path": str(f)})
    assert item.meta == meta and score(item, "Answer: 6").correct == 1.0


@pytest.mark.parametrize("reading", ["nan", "inf", "x"])
def test_a_gauge_reading_that_is_not_a_plain_number_is_an_error_item(tmp_path, reading: str) -> None:
    """float() takes "nan" and "inf"; as golds no reply could ever be scored right."""
    (tmp_path / "items.jsonl").write_text(
        json.dumps({"image": "a.jpg", "min": "0", "max": "10", "reading": reading}) + "\n"
    )
    (item,) = load_benchmark("gauges", {"path": str(tmp_path)})
    assert item.meta["load_error"].startswith(f"{tmp_path / 'items.jsonl'}:1: ")


@pytest.mark.parametrize(
    "text",
    ["7", "1,000", "-3", "+2", "0.5", ".5", "3.", "1e3", "2.5E-2", " 12 ", "1,5", "12,50", "1_000", "inf"],
)
def test_a_numeric_gold_is_the_number_the_scorer_reads(text: str) -> None:
    """The loader's grammar of a plain number and the scorer's read the same number (the loader may
    not import the scorer: two copies, held together here)."""
    from ledgermind.benchmarks.tables import numeric_gold
    from ledgermind.scoring.numeric import parse_number

    if (gold := numeric_gold(text)) is not None:
        assert parse_number(text) == gold
    else:
        assert text.strip() in {"1,5", "12,50", "1_000", "inf"}
