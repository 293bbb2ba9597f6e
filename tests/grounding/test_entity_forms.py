"""ECC on other forms of the same name: "&", demonyms, adjectives, short forms, acronyms."""

from __future__ import annotations

import pytest

from ledgermind.errors import ConfigError
from ledgermind.grounding.ecc import ECCRules, acronym_expansions, check_ecc
from perception.aliases import AliasTable, build_default_table
from perception.demonyms import country_demonym_groups, derives_from, skeleton


def _ecc(claim, pool, ner, aliases):
    return check_ecc(claim, pool, ner=ner, aliases=aliases)


def test_ampersand_is_and(ner, aliases):
    assert aliases.equivalent("Marks & Spencer", "Marks and Spencer")
    assert _ecc(
        'She starred in "Tom & Jerry Go West".', ["Tom and Jerry Go West is a film."], ner, aliases
    ).passed


def test_country_demonyms_are_aliases(ner, aliases):
    pytest.importorskip("countryinfo", reason="demonyms come from the nlp extra's countryinfo")
    assert aliases.normalise("Canadian") == aliases.normalise("Canada") == "canada"
    assert aliases.normalise("Chinese") == "china"  # the most populous "Chinese" entry, not Macau
    assert aliases.normalise("the Dutch") == "netherlands"  # keyed to the table's canonical name
    assert _ecc("The Canadian band toured.", ["The band, from Canada, toured."], ner, aliases).passed
    assert not _ecc("The Canadian band toured.", ["The band, from Mexico, toured."], ner, aliases).passed


def test_country_demonym_groups_come_from_the_package():
    pytest.importorskip("countryinfo")
    groups = {g[1]: g[0] for g in country_demonym_groups()}
    assert groups["Canadian"] == "Canada" and groups["Brazilian"] == "Brazil"
    assert groups["Afghan"] == "Afghanistan"
    assert "Djibouti" not in groups and "Dominican" not in groups  # the name itself adds nothing


@pytest.mark.parametrize(
    ("adjective", "name", "derived"),
    [
        ("Lancastrian", "Lancaster", True),
        ("Victorian", "Victoria", True),
        ("Parisian", "Paris", True),
        ("Elizabethan", "Elizabeth", True),
        ("Shakespearean", "Shakespeare", True),
        ("Lancastrian", "Leicester", False),
        ("Parisian", "Persia", False),
        ("Texan", "Tx", False),
        ("Canadian", "Canada", True),
        ("canadian", "Canada", False),
    ],
)
def test_adjectival_forms(adjective, name, derived):
    assert derives_from(adjective, name) is derived


def test_skeleton():
    assert skeleton("Lancaster") == skeleton("Lancastr") == "lncstr"


def test_adjectival_form_supported_by_the_name_in_the_pool(ner, aliases):
    claim = "The Lancastrian army won the battle."
    on = ECCRules(adjectival=True)
    pool = ["The army of the House of Lancaster won the battle."]
    assert check_ecc(claim, pool, ner=ner, aliases=aliases, rules=on).passed
    assert check_ecc(
        claim, ["The army of the House of York won the battle."], ner=ner, aliases=aliases, rules=on
    ).missing == ("Lancastrian",)
    assert check_ecc(claim, pool, ner=ner, aliases=aliases, rules=ECCRules(adjectival=False)).missing == (
        "Lancastrian",
    )
    assert not _ecc(claim, pool, ner, aliases).passed  # off by default: no annotated verdict needs it


def test_name_without_trailing_designator(ner, aliases):
    pool = ["It was transferred to the Smithsonian in 1971."]
    assert _ecc("It was transferred to the Smithsonian Institution.", pool, ner, aliases).passed
    assert not _ecc("It was transferred to the Getty Institution.", pool, ner, aliases).passed


def test_acronym_defined_in_the_claim_or_pool(ner, aliases):
    pool = ["It is on display at the National Air and Space Museum in Washington."]
    claim = "It is displayed at the National Air and Space Museum (NASM)."
    assert _ecc(claim, pool, ner, aliases).passed
    assert _ecc("It is displayed at NASM.", pool, ner, aliases).passed  # expansion in the pool
    assert not _ecc("It is displayed at the NMAH.", pool, ner, aliases).passed
    assert list(acronym_expansions("NASM", claim)) == ["National Air and Space Museum"]


def test_place_only_inside_a_longer_name_is_another_thing(ner, aliases):
    pool = ["The meeting was held at the Hilton San Diego/Del Mar, in Del Mar, California."]
    guard = ECCRules(place_guard=True)
    result = check_ecc(
        "The meeting was held in San Diego, California.", pool, ner=ner, aliases=aliases, rules=guard
    )
    assert result.missing == ("San Diego",)
    assert check_ecc(
        "The meeting was held in San Diego.",
        ["In San Diego, the meeting was held."],
        ner=ner,
        aliases=aliases,
        rules=guard,
    ).passed
    # off by default (the cross-validated choice, docs/grounding.md): the literal name counts
    assert _ecc("The meeting was held in San Diego, California.", pool, ner, aliases).passed


def test_designators_are_validated():
    with pytest.raises(ConfigError):
        AliasTable.from_mapping({"designators": "river"})
    table = AliasTable.from_mapping({"designators": ["River"]}).extended({"designators": ["Lake"]})
    assert table.designators == {"river", "lake"}


def test_default_table_is_the_packaged_one_with_demonyms():
    assert build_default_table().normalise("Apollo XI") == AliasTable.default().normalise("Apollo XI")
    assert "university" in AliasTable.default().designators


def test_headline_capitals_do_not_make_a_longer_name(ner, aliases):
    assert _ecc("She moved to Canada.", ["# Singer Moves To Canada After Tour"], ner, aliases).passed
