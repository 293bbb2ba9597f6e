"""Alias normalisation for the Entity Consistency Check (ECC, paper Eq. 4).

ECC asks whether every entity of a claim appears in the cited pool *up to aliases*. Rather than
enumerating alias pairs, we map every string to a canonical token sequence so that two surface
forms are aliases exactly when their canonical forms are equal, and an entity occurs in a text
exactly when its canonical form is a whole-token subsequence of the text's canonical form.

The canonical form undoes, in order:
  1. unicode / diacritics / case ("São Paulo" -> "sao paulo"), punctuation and possessives,
     "&" read as "and" ("Simon & Garfunkel" = "Simon and Garfunkel");
  2. dotted acronyms ("U.S.A." -> "USA");
  3. roman numerals after a capitalised word ("Apollo XI" -> "apollo 11", "World War II");
  4. number words ("eleven" -> "11", "twenty-one" -> "21");
  5. case-sensitive acronyms ("USA", "UK" -> "united states", "united kingdom") and
     case-insensitive abbreviations ("St." -> "saint", "Mt." -> "mount");
  6. alias groups (longest match first: "second world war" -> "world war 2");
  7. a leading article ("the Moon" -> "moon").

The tables ship in ``perception/data/aliases.json`` (App. C: "a small predefined alias table") and
can be extended from config with :meth:`AliasTable.extended` or :meth:`AliasTable.from_json`. The
default table adds country demonyms from ``countryinfo`` as groups ("Canadian" -> "canada",
:mod:`perception.demonyms`); ``AliasTable.default(country_names=True)`` also adds the ISO 3166
country-name variants of ``pycountry`` ("Viet Nam" -> "vietnam").
``designators`` are the generic heads of names ("Institution", "University", "River"): ECC accepts
"the Getty" for "the Getty Institution" by dropping a trailing designator.

The roman-numeral and number-word helpers also serve the numeric extractor of NCC, which keeps
one definition of "what counts as a numeral" for both checks.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from ledgermind.errors import ConfigError
from perception.demonyms import country_demonym_groups, country_name_groups

DEFAULT_ALIAS_FILE = Path(__file__).with_name("data") / "aliases.json"

# ---------------------------------------------------------------------------------------------
# Numerals shared with NCC
# ---------------------------------------------------------------------------------------------

_UNIT_WORDS = """zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
sixteen seventeen eighteen nineteen""".split()
UNITS = {word: value for value, word in enumerate(_UNIT_WORDS)}
TENS = {
    word: 10 * k for k, word in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)
}
NUMBER_WORDS = {**UNITS, **TENS}

_ROMAN_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50}
# Roman numerals are only read with the letters I, V, X, L (values 1..89): C, D and M would turn
# "DC", "CD", "MD" or "Vitamin C" into numbers. "L" and "XL" alone are clothing sizes.
_ROMAN_EXCLUDED = frozenset({"L", "XL"})
_ROMAN_SINGLE_OK = frozenset({"I", "V", "X"})
_CANONICAL_ROMAN = re.compile(
    r"(?=.)L*(?:XL|X{0,3})(?:IX|IV|V?I{0,3})"
)  # the greedy form: "IIII", "VX" are none


def roman_to_int(token: str) -> int | None:
    """Value of an upper-case roman numeral in canonical form, else None ("IIII" is not one)."""
    if token in _ROMAN_EXCLUDED or not _CANONICAL_ROMAN.fullmatch(token):
        return None
    values = [_ROMAN_VALUES[ch] for ch in token]
    return sum(-v if v < nxt else v for v, nxt in zip(values, values[1:] + [0]))


def is_roman_candidate(token: str) -> bool:
    """True when ``token`` may be read as a roman numeral after a capitalised word."""
    value = roman_to_int(token)
    return value is not None and (len(token) > 1 or token in _ROMAN_SINGLE_OK)


def words_to_int(tens_word: str, unit_word: str) -> int | None:
    """``("twenty", "one") -> 21``; None when the two words are not one compound number (a single
    number word is ``NUMBER_WORDS[word]``)."""
    tens, unit = tens_word.lower(), unit_word.lower()
    return TENS[tens] + UNITS[unit] if tens in TENS and unit in UNITS and 0 < UNITS[unit] < 10 else None


# ---------------------------------------------------------------------------------------------
# Text canonicalisation
# ---------------------------------------------------------------------------------------------

_DOTTED_ACRONYM = re.compile(r"\b(?:[A-Za-z]\.){2,}")
_POSSESSIVE = re.compile(r"(?<=\w) ?['’]s\b")  # "Park's" and tokenised "Park 's"
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_TOKEN = re.compile(r"\d+(?:\.\d+)?|[^\W\d_]+")
_LEADING_ARTICLES = frozenset({"the", "a", "an"})
# Capitalised function words that do not name anything: "In II" is not a roman numeral.
_NOT_A_NAME = frozenset({"in", "on", "at", "by", "of", "the", "a", "an", "and", "or", "to", "is", "as", "i"})


def strip_diacritics(text: str) -> str:
    """NFKD-decompose and drop combining marks: "Dvořák" -> "Dvorak", "café" -> "cafe"."""
    if text.isascii():  # nothing to strip (the common case: saves the per-character pass)
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def split_tokens(text: str) -> list[str]:
    """Word and number tokens, with possessives ("Park's", tokenised "Park 's") and thousands
    separators dropped: the one tokeniser of ECC's aliases and of coverage's Tok(·)."""
    return _TOKEN.findall(_THOUSANDS.sub("", _POSSESSIVE.sub("", text)))


def _numerals(tokens: Sequence[str]) -> list[str]:
    """Rewrite roman numerals (after a capitalised word) and number words into digits."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        prev = tokens[i - 1] if i else ""
        if prev[:1].isupper() and prev.lower() not in _NOT_A_NAME and is_roman_candidate(tok):
            out.append(str(roman_to_int(tok)))
        elif tok.lower() in TENS and i + 1 < len(tokens) and words_to_int(tok, tokens[i + 1]) is not None:
            out.append(str(words_to_int(tok, tokens[i + 1])))
            i += 1
        elif tok.lower() in NUMBER_WORDS:
            out.append(str(NUMBER_WORDS[tok.lower()]))
        else:
            out.append(tok)
        i += 1
    return out


class AliasTable:
    """Canonicalises names so that aliases compare equal (see the module docstring).

    ``acronyms`` are matched case-sensitively (so the pronoun "us" is not the United States);
    ``abbreviations`` case-insensitively; ``groups`` are lists of equivalent phrases whose first
    member is the canonical spelling. Results are memoised per instance because the same
    evidence facts are normalised for every claim that cites them.
    """

    def __init__(
        self,
        groups: Iterable[Sequence[str]] = (),
        abbreviations: Mapping[str, str] | None = None,
        acronyms: Mapping[str, str] | None = None,
        designators: Iterable[str] = (),
    ) -> None:
        self._groups = [list(g) for g in groups]
        self._abbreviations = {k.lower(): v for k, v in (abbreviations or {}).items()}
        self._acronyms = dict(acronyms or {})
        self.designators = frozenset(d.casefold() for d in designators)
        self._phrases: dict[tuple[str, ...], tuple[str, ...]] = {}
        for group in self._groups:
            canonical = tuple(self._base(group[0]))
            for variant in group:
                key = tuple(self._base(variant))
                if key and key != canonical:
                    self._phrases[key] = canonical
        self._max_phrase = max((len(k) for k in self._phrases), default=0)
        self._phrase_starts = frozenset(k[0] for k in self._phrases)
        self._cached = lru_cache(maxsize=16384)(self._normalise)

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def default(cls, country_names: bool = False) -> AliasTable:
        """The packaged table (``perception/data/aliases.json``), built once per process.

        ``country_names`` adds the ISO 3166 name variants of ``pycountry``. Off by
        default: on the grounding dev rows it changes one verdict, against the annotators
        ("Macao" accepted for "Macau"), so cross-validation does not keep it
        (``scripts/eval_grounding.py --folds 5``, grid field ``ecc_country_names``).
        """
        return _default_table(country_names)

    @classmethod
    def from_json(cls, path: str | Path, *, extend_default: bool = True) -> AliasTable:
        """Load a table file with keys ``groups`` / ``abbreviations`` / ``acronyms``."""
        try:
            spec = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"alias file not found: {path}") from None
        except json.JSONDecodeError as exc:
            raise ConfigError(f"alias file {path} is not valid JSON: {exc}") from None
        return cls.default().extended(spec) if extend_default else cls.from_mapping(spec)

    @classmethod
    def from_mapping(cls, spec: Mapping[str, Any]) -> AliasTable:
        return cls().extended(spec)

    def extended(self, spec: Mapping[str, Any]) -> AliasTable:
        """A new table with this one's entries plus ``spec``'s (``spec`` wins on conflicts)."""
        try:
            s = _AliasSpec.model_validate(spec)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(map(str, err["loc"])) or "the table"
            raise ConfigError(f"invalid alias table at {where}: {err['msg']}") from None
        return AliasTable(
            self._groups + s.groups,
            {**self._abbreviations, **s.abbreviations},
            {**self._acronyms, **s.acronyms},
            designators=self.designators | set(s.designators),
        )

    def with_demonyms(self) -> AliasTable:
        """This table plus country demonym groups, each keyed to this table's canonical name."""
        groups = [[self.normalise(name), *forms] for name, *forms in country_demonym_groups()]
        return self.extended({"groups": [g for g in groups if g[0]]})

    def with_country_names(self) -> AliasTable:
        """This table plus ISO 3166 country-name variants (``pycountry``); a variant this table
        already rewrites (a hand group such as "holland") keeps its rewriting."""
        groups = []
        for name, *forms in country_name_groups():
            canonical = self.normalise(name)
            kept = [f for f in forms if self.normalise(f) != canonical]
            if canonical and kept:
                groups.append([canonical, *kept])
        return self.extended({"groups": groups})

    # -- queries -----------------------------------------------------------------------------
    def normalise(self, text: str) -> str:
        """Canonical form: space-separated lower-case tokens (empty string for no tokens)."""
        return self._cached(text)

    def equivalent(self, a: str, b: str) -> bool:
        """True when ``a`` and ``b`` are aliases of each other (including identical)."""
        na = self.normalise(a)
        return bool(na) and na == self.normalise(b)

    # -- internals ---------------------------------------------------------------------------
    def _base(self, text: str) -> list[str]:
        """Steps 1–5: tokens with numerals, acronyms and abbreviations expanded, lower-cased."""
        # case-preserving tokens after unicode, acronym-dot, "&", possessive and thousands clean-up
        text = _DOTTED_ACRONYM.sub(lambda m: m.group(0).replace(".", ""), strip_diacritics(text))
        out: list[str] = []
        for tok in _numerals(split_tokens(text.replace("&", " and "))):
            if tok in self._acronyms:
                out.extend(self._acronyms[tok].split())
            elif tok.lower() in self._abbreviations:
                out.extend(self._abbreviations[tok.lower()].split())
            else:
                out.append(tok.casefold())
        return out

    def _normalise(self, text: str) -> str:
        tokens = self._base(text)
        out: list[str] = []
        i = 0
        while i < len(tokens):
            if tokens[i] not in self._phrase_starts:  # most tokens start no alias phrase
                out.append(tokens[i])
                i += 1
                continue
            for n in range(min(self._max_phrase, len(tokens) - i), 0, -1):
                if (canonical := self._phrases.get(tuple(tokens[i : i + n]))) is not None:
                    out.extend(canonical)
                    i += n
                    break
            else:
                out.append(tokens[i])
                i += 1
        if len(out) > 1 and out[0] in _LEADING_ARTICLES:
            out = out[1:]
        return " ".join(out)


_Phrase = Annotated[str, StringConstraints(pattern=r"\S")]  # not empty, not only spaces
_Entry = Annotated[str, StringConstraints(min_length=1)]


class _AliasSpec(BaseModel):
    """The schema of an alias table (file or config): a key it does not know is refused, not ignored."""

    model_config = ConfigDict(extra="forbid")

    groups: list[Annotated[list[_Phrase], Field(min_length=2)]] = []
    abbreviations: dict[_Entry, _Entry] = {}
    acronyms: dict[_Entry, _Entry] = {}
    designators: list[_Phrase] = []
    comment: Any = Field(None, alias="_comment")


def build_default_table(country_names: bool = False) -> AliasTable:
    """A fresh copy of the packaged table with demonyms (``default()`` shares one per process)."""
    table = AliasTable.from_json(DEFAULT_ALIAS_FILE, extend_default=False)
    return (table.with_country_names() if country_names else table).with_demonyms()


_default_table = lru_cache(maxsize=2)(build_default_table)  # ``AliasTable.default()``: one per process
