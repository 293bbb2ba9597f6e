"""The MMMU-Pro parser reproduces upstream behaviour (mmmu-pro/evaluate.py)."""

from __future__ import annotations

import random

import pytest

from ledgermind.scoring import choice_info, parse_multi_choice_response

OPTS = ["red apple", "blue whale", "green tea", "yellow sun"]
I2A, LETTERS = choice_info(OPTS)


def parse(text: str, rng: random.Random | None = None):
    return parse_multi_choice_response(text, LETTERS, I2A, rng)


@pytest.mark.parametrize(
    ("reply", "letter", "method"),
    [
        ("Reasoning... Answer: C", "C", "answer_tag"),
        ("Answer: A\nwait, actually Answer: B", "B", "answer_tag"),  # last Answer: wins
        ("I pick (B) over (A)... final (D)", "D", "bracket"),  # last bracket wins
        ("B", "B", "letter_space"),
        ("The answer is C.", "C", "letter_space"),  # stripped "." → " C " matched by "C "
        ("option A or option D is it", "D", "letter_space"),
        ("x A.y", "A", "letter_dot"),
        ("I am quite sure the correct choice must be the green tea", "C", "option_text"),
    ],
)
def test_heuristics(reply: str, letter: str, method: str) -> None:
    got = parse(reply)
    assert (got.letter, got.method) == (letter, method)


def test_answer_tag_with_two_letters_falls_through_to_heuristics() -> None:
    # "Answer: A or B" has two letters → not unique → heuristics; " B " is last
    assert parse("Answer: A or B").letter == "B"


def test_option_text_needs_more_than_five_words() -> None:
    assert parse("green tea").letter is None
    assert parse("the green tea it is").letter is None  # exactly 5 words


def test_unparsable_is_none_without_fallback() -> None:
    got = parse("I refuse to answer")
    assert got.letter is None and got.method == "none"
    assert parse("").letter is None


def test_seeded_random_fallback_is_reproducible() -> None:
    a = parse("no idea at all", random.Random(7))
    b = parse("no idea at all", random.Random(7))
    assert a == b and a.method == "random" and a.letter in LETTERS


def test_ten_options() -> None:
    i2a, letters = choice_info([f"opt{i}" for i in range(10)])
    assert letters[-1] == "J"
    assert parse_multi_choice_response("Answer: J", letters, i2a).letter == "J"
