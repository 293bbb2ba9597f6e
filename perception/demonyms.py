"""Demonyms and adjectival forms of proper names, for ECC's alias matching.

Why this exists: a claim says "a Canadian band" where the evidence says "a band from Canada", or
"the Lancastrian king" where it says "the House of Lancaster". These are the same entity in two
grammatical forms, and a hand-made alias list cannot enumerate them. Two general sources:

* **country demonyms** from the ``countryinfo`` package (a registry package that ships a data file
  per country with its ``demonym``), turned into alias groups ``[country, demonym, demonyms]``;
  a demonym shared by several entries goes to the most populous one ("Chinese" -> China, not
  Macau), and a demonym equal to its country's name adds nothing. Without the package (the
  ``nlp`` extra is not installed) the table is simply empty.
* a **morphological rule** for every other name: an adjective in -ian / -ean / -an / -ese / -ite /
  -ish / -i derives from a name when both share the same consonant skeleton once the suffix is
  removed and the same first three letters ("Lancastr-ian" ~ "Lancaster", "Victor-ian" ~
  "Victoria", "Paris-ian" ~ "Paris", but not ~ "Persia").
"""

from __future__ import annotations

import contextlib
import re
from functools import lru_cache

# Longest first: "Lancastrian" loses "ian", not "n".
_SUFFIXES = ("ian", "ean", "ese", "ite", "ish", "an", "i")
_VOWELS = frozenset("aeiouy")
_MIN_SKELETON = 3  # "Tex-an" ~ "Texas" is too short to tell from chance ("tx")


@lru_cache(maxsize=1)
def country_demonym_groups() -> tuple[tuple[str, ...], ...]:
    """Alias groups ``(country name, demonym[, plural])`` from ``countryinfo`` (empty without it)."""
    try:
        from countryinfo import all_countries
    except ImportError:
        return ()
    best: dict[str, tuple[int, str, str]] = {}
    itself: set[str] = set()  # a demonym that is some entry's own name is never rewritten
    for country in all_countries():
        name, population = country.name(), country.population() or 0
        for demonym in str(country.demonym() or "").replace("/", ",").split(","):
            demonym = demonym.strip()
            if not name or not demonym or _names_itself(demonym, name):
                itself.add(demonym.lower())
                continue
            key = demonym.lower()
            if key not in best or population > best[key][0]:
                best[key] = (population, name, demonym)
    kept = (best[k] for k in sorted(best) if k not in itself)
    return tuple((name, demonym, *_plural(demonym)) for _, name, demonym in kept)


def _names_itself(demonym: str, name: str) -> bool:
    """ "Djibouti" for Djibouti, "Dominican" for the Dominican Republic: nothing to add."""
    demonym, name = demonym.lower(), name.lower()
    return demonym == name or name.startswith(demonym + " ")


def _plural(demonym: str) -> tuple[str, ...]:
    """ "Canadians" for "Canadian"; adjectives such as "Swiss", "Chinese", "Polish" have none."""
    return (demonym + "s",) if demonym.endswith(("an", "i", "er")) else ()


def skeleton(word: str) -> str:
    """First letter plus the remaining consonants, doubled letters collapsed: "Lancaster" -> "lncstr"."""
    word = word.lower()
    out = word[:1] + "".join(ch for ch in word[1:] if ch.isalpha() and ch not in _VOWELS)
    return re.sub(r"(.)\1+", r"\1", out)


def derives_from(adjective: str, name: str) -> bool:
    """True when ``adjective`` is an adjectival / demonym form of the proper name ``name``."""
    if not adjective[:1].isupper() or not name[:1].isupper() or adjective.lower() == name.lower():
        return False
    target = skeleton(name)
    if adjective[:3].lower() != name[:3].lower():
        return False
    for suffix in _SUFFIXES:
        if adjective.lower().endswith(suffix) and len(adjective) - len(suffix) >= 3:
            stem = skeleton(adjective[: -len(suffix)])
            if len(stem) >= _MIN_SKELETON and target.startswith(stem) and len(target) - len(stem) <= 1:
                return True
    return False


def has_adjectival_suffix(word: str) -> bool:
    return word[:1].isupper() and word.lower().endswith(_SUFFIXES) and len(word) >= 5


@lru_cache(maxsize=1)
def country_name_groups() -> tuple[tuple[str, ...], ...]:
    """Alias groups of each country's names from ``pycountry`` (ISO 3166: short, official and
    common name), keyed to ``countryinfo``'s name when it knows the country, so that the demonym
    groups and these agree on one canonical spelling ("Russian Federation" -> "Russia", "Viet
    Nam" -> "Vietnam", "Korea, Republic of" -> "South Korea"). Empty without ``pycountry``."""
    try:
        import pycountry
    except ImportError:
        return ()
    names_by_iso: dict[str, set[str]] = {}
    with contextlib.suppress(ImportError):
        from countryinfo import all_countries

        for info in all_countries():
            iso = (info.info().get("ISO") or {}).get("alpha2")
            if iso and info.name():
                names_by_iso.setdefault(str(iso).upper(), set()).add(info.name())
    # an ISO code that several countryinfo entries share (England, Wales, ... under GB) names none
    by_iso = {iso: next(iter(names)) for iso, names in names_by_iso.items() if len(names) == 1}
    groups = []
    for country in pycountry.countries:
        names = [
            by_iso.get(country.alpha_2),
            getattr(country, "common_name", None),
            country.name,
            getattr(country, "official_name", None),
        ]
        unique = list(dict.fromkeys(n for n in names if n))
        if len(unique) >= 2:
            groups.append(tuple(unique))
    return tuple(groups)
