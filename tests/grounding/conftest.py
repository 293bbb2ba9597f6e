"""Fixtures for the grounding tests: one real spaCy NER per session (loading costs ~1 s)."""

from __future__ import annotations

import pytest

from perception.aliases import AliasTable
from perception.ner import SpacyNER


@pytest.fixture(scope="session")
def ner() -> SpacyNER:
    pytest.importorskip("spacy", reason="ECC tests need the 'nlp' extra (spacy)")
    return SpacyNER()


@pytest.fixture(scope="session")
def aliases() -> AliasTable:
    return AliasTable.default()
