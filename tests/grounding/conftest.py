"""Fixtures for the grounding tests (the session's spaCy NER, ``ner``, is in tests/conftest.py)."""

from __future__ import annotations

import pytest

from perception.aliases import AliasTable


@pytest.fixture(scope="session")
def aliases() -> AliasTable:
    return AliasTable.default()
