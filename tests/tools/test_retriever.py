from __future__ import annotations

import json

import pytest

from ledgermind.errors import DataError
from ledgermind.tools.retriever import LocalRetrieverTool

DOCS = [
    {
        "id": "eiffel",
        "title": "Eiffel Tower",
        "text": "The Eiffel Tower in Paris was completed in 1889.",
        "url": "https://w/e",
    },
    {"id": "moon", "title": "Moon landing", "text": "Apollo 11 landed on the Moon in 1969."},
    {"title": "Tokyo", "text": "Tokyo is the capital of Japan."},
]


@pytest.fixture()
def corpus(tmp_path):
    p = tmp_path / "corpus.jsonl"
    p.write_text("\n".join(json.dumps(d) for d in DOCS) + "\n")
    return p


def test_bm25_ranks_the_relevant_passage_first_and_reports_local(corpus):
    out = LocalRetrieverTool(corpus).invoke(query="When was the Eiffel Tower completed?")
    assert out.ok and out.kind.value == "search"
    top = out.observations[0]
    assert top.url == "local://corpus/eiffel" and top.meta["source"] == "local"
    assert top.meta["original_url"] == "https://w/e" and "1889" in top.text
    assert all(o.score > 0 for o in out.observations)
    assert [o.score for o in out.observations] == sorted((o.score for o in out.observations), reverse=True)


def test_line_number_is_the_id_when_missing_and_digest_is_truncated(corpus):
    out = LocalRetrieverTool(corpus, max_chars=20).invoke(query="capital of Japan")
    assert out.observations[0].url == "local://corpus/3"
    assert len(out.observations[0].meta["digest"]) == 20


def test_no_overlap_yields_no_evidence(corpus):
    out = LocalRetrieverTool(corpus).invoke(query="zebra quantum")
    assert not out.ok and out.error is None and out.observations == ()


def test_bad_inputs(tmp_path, corpus):
    with pytest.raises(DataError, match="not found"):
        LocalRetrieverTool(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"title": "no text"}\n')
    with pytest.raises(DataError, match="bad.jsonl: line 1 is not a JSON object with .text."):
        LocalRetrieverTool(bad)
    assert "at least one word" in LocalRetrieverTool(corpus).invoke(query="?!").error
