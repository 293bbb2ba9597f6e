"""Alias normalisation for ECC (Eq. 4)."""

from __future__ import annotations

import json

import pytest

from ledgermind.errors import ConfigError
from perception.aliases import AliasTable, roman_to_int, words_to_int


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Apollo XI", "Apollo 11"),
        ("World War II", "World War 2"),
        ("the Second World War", "WWII"),
        ("USA", "United States"),
        ("U.S.A.", "United States of America"),
        ("UK", "Great Britain"),
        ("São Paulo", "Sao Paulo"),
        ("Dvořák", "DVORAK"),
        ("St. Petersburg", "Saint Petersburg"),
        ("Mt. Everest", "Mount Everest"),
        ("eleven", "11"),
        ("twenty-one pilots", "21 pilots"),
        ("The Moon", "moon"),
        ("Beethoven's", "Beethoven"),
        ("1,234.5", "1234.5"),
    ],
)
def test_equivalent_aliases(aliases, a, b):
    assert aliases.equivalent(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [("Apollo 11", "Apollo 13"), ("Apollo XI", "Apollo XII"), ("Austria", "Australia"), ("", "")],
)
def test_distinct_names_are_not_aliases(aliases, a, b):
    assert not aliases.equivalent(a, b)


def test_pronoun_us_is_not_the_united_states(aliases):
    assert aliases.normalise("let us go") == "let us go"
    assert not _occurs(aliases, "United States", "let us go")


def _occurs(aliases, name, text):
    """``name`` as a whole-token phrase of ``text`` in canonical form (how ECC matches a name)."""
    return f" {aliases.normalise(name)} " in f" {aliases.normalise(text)} "


def test_canonical_forms_match_whole_tokens(aliases):
    assert _occurs(aliases, "Moon", "the moon is full")
    assert not _occurs(aliases, "Moon", "a moonlit night")
    assert not _occurs(aliases, "Apollo 11", "Apollo 13 carried 11 kg")


def test_roman_numerals_only_in_name_context(aliases):
    assert aliases.normalise("Vitamin C") == "vitamin c"  # C is never read as 100
    assert aliases.normalise("Washington DC") == "washington dc"
    assert roman_to_int("XIV") == 14 and roman_to_int("IIII") is None and roman_to_int("XL") is None
    assert words_to_int("twenty", "one") == 21 and words_to_int("ten", "two") is None


def test_extended_from_mapping(aliases):
    extended = aliases.extended(
        {"groups": [["ludwig van beethoven", "l v beethoven"]], "acronyms": {"LVB": "ludwig van beethoven"}}
    )
    assert extended.equivalent("LVB", "Ludwig van Beethoven")
    assert not aliases.equivalent("LVB", "Ludwig van Beethoven")  # the original table is untouched


def test_from_json_file(tmp_path):
    path = tmp_path / "aliases.json"
    path.write_text(json.dumps({"groups": [["big apple", "new york city"]]}), encoding="utf-8")
    table = AliasTable.from_json(path)
    assert table.equivalent("the Big Apple", "NYC")  # file group + default acronym


@pytest.mark.parametrize(
    "spec", [{"groups": [["only one"]]}, {"acronyms": {"X": 3}}, {"synonyms": []}, ["not", "a", "mapping"]]
)
def test_bad_alias_config_is_a_config_error(spec):
    with pytest.raises(ConfigError):
        AliasTable.from_mapping(spec)


def test_missing_alias_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        AliasTable.from_json(tmp_path / "nope.json")


def test_tokenised_possessive_is_dropped_like_the_plain_one(aliases):
    """VitaminC-style text splits "'s" off ("Linkin Park 's debut"): the name is still the name."""
    assert aliases.normalise("Linkin Park 's") == aliases.normalise("Linkin Park's") == "linkin park"
    assert _occurs(aliases, "Carlo Ancelotti", "died Carlo Ancelotti 's father .")
