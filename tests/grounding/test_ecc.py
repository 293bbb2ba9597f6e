"""ECC (Eq. 4) with real spaCy NER and the alias table."""

from __future__ import annotations

from ledgermind.grounding.ecc import ECCRules, check_ecc, claim_entities


def test_phantom_entity_with_valid_citation_fails(ner, aliases):  # paper example
    result = check_ecc(
        "Apollo 11 landed on the Moon.", ["Apollo 13 was launched toward the Moon."], ner=ner, aliases=aliases
    )
    assert not result.passed and result.missing == ("Apollo 11",)


def test_roman_and_abbreviation_aliases_pass(ner, aliases):
    result = check_ecc(
        "Apollo XI returned to the USA.",
        ["Apollo 11 returned to the United States."],
        ner=ner,
        aliases=aliases,
    )
    assert result.passed, result


def test_diacritics_pass(ner, aliases):
    assert check_ecc("São Paulo is in Brazil.", ["SAO PAULO, BRAZIL"], ner=ner, aliases=aliases).passed


def test_proper_noun_missed_by_ner_is_still_checked(ner, aliases):
    bad = check_ecc(
        "Beethoven composed the Moonlight Sonata.",
        ["The Moonlight Sonata was composed by Mozart."],
        ner=ner,
        aliases=aliases,
    )
    good = check_ecc(
        "Beethoven composed the Moonlight Sonata.",
        ["moonlight sonata by ludwig van beethoven"],
        ner=ner,
        aliases=aliases,
    )
    assert bad.missing == ("Beethoven",) and good.passed


def test_moon_mistagged_as_person_is_matched_by_text(ner, aliases):
    ents = ner.entities("The Moon orbits the Earth.")
    assert any(e.text == "Moon" for e in ents)  # whatever the label, it is an entity
    assert check_ecc(
        "The Moon orbits the Earth.", ["the moon and the earth"], ner=ner, aliases=aliases
    ).passed
    assert check_ecc("The Moon orbits the Earth.", ["the earth"], ner=ner, aliases=aliases).missing == (
        "Moon",
    )


def test_numeric_entities_and_option_letters_are_left_to_ncc(ner, aliases):
    names = [e.text for e in claim_entities("In 1969, 3 astronauts chose (B) for $5.", ner, aliases)]
    assert names == []


def test_entity_must_lie_within_one_fact(ner, aliases):
    literal = ECCRules(surname=False)
    assert not check_ecc(
        "Neil Armstrong walked.", ["Neil", "Armstrong"], ner=ner, aliases=aliases, rules=literal
    ).passed
    assert not check_ecc("The Bank of New York", ["New", "York Bank"], ner=ner, aliases=aliases).passed
    # the surname form (on by default) reads a lone "Armstrong" as the usual second mention
    assert check_ecc("Neil Armstrong walked.", ["Neil", "Armstrong"], ner=ner, aliases=aliases).passed


def test_no_entities_passes_even_uncited(ner, aliases):
    assert check_ecc("the liquid is blue", [], ner=ner, aliases=aliases).passed
