"""No entity rule may mention a dev row's specific strings.

Rules fitted to the rows they are scored on do not generalise (the entity check lost 12 points
on a kept-back half). This test collects the names and long numbers of the grounding dev set
(capitalised words of claims and the annotators' marked tokens) and greps the rule files for
them. A hit fails unless the word is generic: a function word, a lower-case entry of an English
word list (``english-words``' web2 list: "museum", "gallery", "key"; its proper names are
capitalised and stay names), a word the dev text itself also uses in lower case, or a country /
demonym that a packaged gazetteer (pycountry, countryinfo) supplies anyway. Acronyms count as
names (the web2 list holds them in upper case).
"""

from __future__ import annotations

import calendar
import json
import re
from pathlib import Path

import pytest

from ledgermind.grounding.tokens import STOPWORDS
from perception.demonyms import country_demonym_groups, country_name_groups

REPO = Path(__file__).resolve().parents[2]
RULE_FILES = [
    "perception/data/aliases.json",
    "perception/aliases.py",
    "perception/demonyms.py",
    "perception/abbreviations.py",
    "perception/ner.py",
    "perception/crop.py",
    "ledgermind/grounding/ecc.py",
    "ledgermind/grounding/ncc.py",
    "ledgermind/grounding/relations.py",
    "ledgermind/grounding/numbers.py",
    "ledgermind/grounding/units.py",
    "ledgermind/grounding/unit_table.json",
    "ledgermind/devtools/unit_table.py",
    "ledgermind/grounding/tokens.py",
    "ledgermind/grounding/cascade.py",
    "ledgermind/studies/grounding_cv.py",
    "ledgermind/studies/derived_pairs.py",
    "ledgermind/studies/grounding_eval.py",
    "ledgermind/cli/eval_grounding.py",
]
_NAME = re.compile(r"\b[A-Z][A-Za-zÀ-ÿ'’-]{2,}")
_LOWER = re.compile(r"\b[a-zà-ÿ][a-zà-ÿ'’-]+")
_LONG_NUMBER = re.compile(r"^\d[\d,.]{3,}$")  # 4+ characters: counts, amounts (not "12", "1st")
_YEAR = re.compile(r"^(1\d|20)\d\d$")  # calendar years are generic values, not a row's string
CONTINENT_ADJECTIVES = {"european", "african", "asian", "american", "oceanian"}


def country_codes() -> set[str]:
    """ISO 3166 alpha-2/-3 codes plus the customary "UK"/"USA"-style acronyms of the alias table."""
    pycountry = pytest.importorskip("pycountry")
    return {c.alpha_2 for c in pycountry.countries} | {c.alpha_3 for c in pycountry.countries} | {"UK"}


def english_words() -> set[str]:
    words = pytest.importorskip("english_words")
    return {w for w in words.get_english_words_set(["web2"], lower=False, alpha=True) if w.islower()}


def dev_strings(rows: list[dict]) -> tuple[set[str], set[str]]:
    """(names, numbers) a rule could only know from these rows."""
    lower: set[str] = set()
    names: set[str] = set()
    numbers: set[str] = set()
    for row in rows:
        text = " ".join([row["claim"], *row["evidence"]])
        lower |= set(_LOWER.findall(text))
        names |= set(_NAME.findall(row["claim"]))
        for tok in row.get("marked_tokens") or []:
            if _LONG_NUMBER.match(tok) and not _YEAR.match(tok):
                numbers.add(tok)
            elif _NAME.fullmatch(tok):
                names.add(tok)
    gazetteer = {
        w.casefold()
        for group in (*country_name_groups(), *country_demonym_groups())
        for name in group
        for w in name.split()
    }
    gazetteer |= {code.casefold() for code in country_codes()}
    gazetteer |= {m.casefold() for m in (*calendar.month_name, *calendar.day_name) if m}
    gazetteer |= {
        w.casefold() for lang in pytest.importorskip("pycountry").languages for w in lang.name.split()
    }
    generic = STOPWORDS | lower | gazetteer | english_words() | CONTINENT_ADJECTIVES
    return {
        n for n in names if n.casefold() not in generic and n.casefold().rstrip("s") not in generic
    }, numbers


def hits(text: str, names: set[str], numbers: set[str]) -> list[str]:
    """Whole-word hits; acronyms (all capitals) case-sensitively so "collections.abc" is no "ABC"."""
    found = [
        n
        for n in names
        if re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", text, 0 if n.isupper() else re.IGNORECASE)
    ]
    found += [n for n in numbers if re.search(rf"(?<![\d.,]){re.escape(n)}(?![\d])", text)]
    return sorted(found)


def test_hits_finds_a_dev_name_and_ignores_generic_words():
    names, numbers = dev_strings(
        [
            {
                "claim": "Zorblat Quenwick opened the Museum to 48,250 visitors in 1987.",
                "evidence": ["The museum opened in 1987."],
                "marked_tokens": ["Zorblat", "48,250", "1987"],
            }
        ]
    )
    assert names == {"Zorblat", "Quenwick"} and numbers == {"48,250"}  # a year is generic
    assert hits('groups: [["zorblat", "z"]] # 48,250 seats', names, numbers) == ["48,250", "Zorblat"]
    assert hits("designators: museum, 148,2500, collections.abc", names | {"ABC"}, numbers) == []


def test_rule_files_name_no_dev_row(shared_data):
    path = shared_data / "grounding_ext" / "dev.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    names, numbers = dev_strings(rows)
    assert len(names) > 50  # the collector works (the dev set is full of names)
    found = {f: hits((REPO / f).read_text(encoding="utf-8"), names, numbers) for f in RULE_FILES}
    assert not {f: h for f, h in found.items() if h}, found
