from __future__ import annotations

import json

from PIL import Image

from ledgermind.benchmarks import AnswerType, load_benchmark
from ledgermind.benchmarks.bundled_sample import SAMPLE_DIR, generate_sample_set
from ledgermind.scoring import score


def test_generator_reproduces_committed_files(tmp_path) -> None:
    records = generate_sample_set(tmp_path)
    committed = (SAMPLE_DIR / "items.jsonl").read_text(encoding="utf-8")
    assert (tmp_path / "items.jsonl").read_text(encoding="utf-8") == committed
    assert [r["answer"] for r in records] == [json.loads(line)["answer"] for line in committed.splitlines()]
    for png in SAMPLE_DIR.glob("*.png"):
        assert Image.open(png).size == Image.open(tmp_path / png.name).size


def test_sample_set_is_small_and_complete() -> None:
    items = load_benchmark("sample")
    assert 6 <= len(items) <= 8
    assert sum(p.stat().st_size for p in SAMPLE_DIR.glob("*.png")) < 300 * 1024
    assert {it.answer_type for it in items} == {AnswerType.MCQ, AnswerType.NUMERIC, AnswerType.OPEN}
    assert all(it.images[0].is_file() for it in items)
    kinds = {it.meta.get("numeric_kind") for it in items if it.answer_type is AnswerType.NUMERIC}
    assert {"reading", "count", "exact"} <= kinds


def test_known_answers_score_correct() -> None:
    for it in load_benchmark("sample"):
        assert score(it, f"Answer: {it.answer}").correct == 1.0, it.id


def test_answers_are_what_the_pictures_encode() -> None:
    from ledgermind.benchmarks import bundled_sample as sample

    by_id = {it.id: it for it in load_benchmark("sample")}
    assert float(by_id["sample_receipt_total"].answer) == sum(float(p) for _, p in sample.RECEIPT_LINES)
    best = max(sample.CHART_DATA, key=lambda kv: kv[1])[0]
    assert by_id["sample_bar_chart"].options[ord(by_id["sample_bar_chart"].answer) - 65] == best
    assert int(by_id["sample_count_circles"].answer) == len(sample.CIRCLES)
    # the thermometer's mercury column really ends at the answer: red pixels stop at y(37.5)
    img = Image.open(by_id["sample_thermometer"].images[0]).convert("RGB")
    reds = [y for y in range(img.height) if img.getpixel((90, y)) == (200, 0, 0)]
    top, bottom, lo, hi = 30, 260, sample.THERMO_MIN, sample.THERMO_MAX
    expected = bottom - (float(by_id["sample_thermometer"].answer) - lo) / (hi - lo) * (bottom - top)
    assert abs(min(reds) - expected) <= 1


def test_limit_and_custom_path(tmp_path) -> None:
    assert len(load_benchmark("sample", {"limit": 2})) == 2
    generate_sample_set(tmp_path)
    assert load_benchmark("sample", {"path": str(tmp_path)})[0].images[0].parent == tmp_path
