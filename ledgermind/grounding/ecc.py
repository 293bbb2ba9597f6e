"""Entity Consistency Check ECC (paper §3.2, Eq. 4).

ECC(c) = 1[Ent(c) ⊆ Ent(P_c) ∪ Alias(P_c)]: every conclusion-level non-numeric entity of the claim
must appear in the cited pool up to aliases. This is the check that catches Phantom Grounding: a
claim may cite a valid entry about Apollo 13 yet conclude about Apollo 11.

Ent(c) comes from :mod:`perception.ner` (NER spans of non-numeric types plus untagged proper-noun
runs; numeric spans belong to NCC). Membership is decided on alias-canonical text
(:mod:`perception.aliases`): an entity is supported when its canonical form occurs as a whole-token
phrase in the canonical form of some cited fact. Every pool entity is a span of a pool fact, so
this test covers Ent(P_c) ∪ Alias(P_c) and additionally accepts names the NER missed in the
evidence (lower-case OCR text such as "the moon is full"); an entity must lie within one fact,
never straddle two.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ledgermind.grounding.tokens import STOPWORDS
from perception.aliases import AliasTable
from perception.ner import Entity, EntityExtractor


@dataclass(frozen=True)
class ECCResult:
    """Outcome of ECC: ``passed`` iff every claim entity is supported (``missing`` is empty)."""

    passed: bool
    entities: tuple[str, ...]
    missing: tuple[str, ...]


def claim_entities(claim: str, ner: EntityExtractor, aliases: AliasTable) -> tuple[Entity, ...]:
    """Ent(c): the claim's non-numeric entities that name something checkable.

    Dropped: numeric spans (NCC's job), single characters (option letters such as "B", a stray
    "C" after "°"), pure numbers and function words that the tagger capitalised.
    """
    kept: list[Entity] = []
    for ent in ner.entities(claim):
        canonical = aliases.normalise(ent.text)
        tokens = canonical.split()
        if ent.is_numeric or len(canonical.replace(" ", "")) < 2:
            continue
        if all(tok.replace(".", "").isdigit() or tok in STOPWORDS for tok in tokens):
            continue
        kept.append(ent)
    return tuple(kept)


def check_ecc(claim: str, pool: Sequence[str], *, ner: EntityExtractor, aliases: AliasTable) -> ECCResult:
    """Run ECC for ``claim`` against the cited facts ``pool``."""
    entities = claim_entities(claim, ner, aliases)
    if not entities:
        return ECCResult(True, (), ())
    padded_pool = [f" {aliases.normalise(fact)} " for fact in pool]
    names = tuple(dict.fromkeys(ent.text for ent in entities))
    missing = tuple(name for name in names if not _supported(aliases.normalise(name), padded_pool))
    return ECCResult(not missing, names, missing)


def _supported(canonical: str, padded_pool: Sequence[str]) -> bool:
    needle = f" {canonical} "
    return any(needle in fact for fact in padded_pool)
