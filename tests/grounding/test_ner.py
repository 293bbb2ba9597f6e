"""perception.ner: span rules, caching, batching and error paths."""

from __future__ import annotations

import threading

import pytest

from ledgermind.errors import ConfigError, MissingExtraError
from perception.ner import DEFAULT_MODEL, SpacyNER


def _texts(ents):
    return [e.text for e in ents]


def test_proper_nouns_missed_by_ner_are_entities(ner):
    ents = ner.entities("Beethoven composed the Moonlight Sonata.")
    assert "Beethoven" in _texts(ents)


def test_name_and_number_merge_into_one_entity(ner):
    ents = ner.entities("Apollo 11 landed on the Moon in 1969.")
    names = _texts(ents)
    assert "Apollo 11" in names and "Apollo" not in names
    assert any(e.text == "1969" and e.is_numeric for e in ents)  # years stay numeric (NCC's job)


def test_offsets_point_into_the_text(ner):
    text = "Neil Armstrong flew Apollo XI for NASA."
    for ent in ner.entities(text):
        assert text[ent.start : ent.end] == ent.text


def test_cache_avoids_recomputation(monkeypatch):
    ner = SpacyNER()
    first = ner.entities("Marie Curie worked in Paris.")
    monkeypatch.setattr(ner, "_load", lambda: pytest.fail("model used for a cached text"))
    assert ner.entities("Marie Curie worked in Paris.") is first


def test_batch_matches_single_and_fills_cache(ner):
    texts = ["Mozart lived in Vienna.", "Tokyo is in Japan.", "Mozart lived in Vienna."]
    fresh = SpacyNER()
    batch = fresh.entities_many(texts)
    assert batch == [ner.entities(t) for t in texts]
    assert len(fresh._cache) == 2


def test_lru_eviction_bounds_the_cache():
    small = SpacyNER(cache_size=2)
    small.entities_many(["Rome.", "Paris.", "Berlin."])
    assert len(small._cache) == 2


def test_concurrent_use_is_safe():
    shared = SpacyNER()
    texts = [f"Alice met Bob in London on day {i}." for i in range(20)]
    results: dict[int, tuple] = {}

    def work(i):
        results[i] = shared.entities(texts[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all("London" in _texts(results[i]) for i in range(20))


def test_agents_of_one_process_share_one_pipeline_and_its_lock(monkeypatch):
    """The jobs of a sweep run one after the other in one process, each with its own agent: the
    pipeline is loaded once, and two agents never run it at the same time."""
    import spacy

    import perception.ner as ner_module

    loads = []
    real_load = spacy.load
    monkeypatch.setattr(spacy, "load", lambda *a, **kw: loads.append(a) or real_load(*a, **kw))
    monkeypatch.setattr(ner_module, "_PIPELINES", {})
    first, second = SpacyNER(), SpacyNER(cache_size=0)
    assert first.entities("Ada Lovelace met Babbage in London.") == second.entities(
        "Ada Lovelace met Babbage in London."
    )
    assert len(loads) == 1 and first._load() is second._load()
    assert first._lock is second._lock


def test_unknown_model_is_a_config_error():
    with pytest.raises(ConfigError, match="not installed"):
        SpacyNER("no_such_model_xyz").entities("text")


def test_missing_spacy_is_a_missing_extra(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "spacy":
            raise ImportError("no spacy")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(MissingExtraError, match=r"ledgermind\[nlp\]"):
        SpacyNER(DEFAULT_MODEL).entities("text")


def test_bad_parameters_are_config_errors():
    with pytest.raises(ConfigError):
        SpacyNER(cache_size=-1)


def test_no_entity_crosses_a_line_break(ner):
    # spaCy's own NER returns "John\nSmith" as one PERSON span; a line break separates statements
    texts = [e.text for e in ner.entities("John\nSmith wrote it")]
    assert texts == ["John", "Smith"]
    assert [e.text for e in ner.entities("Apollo\n11 landed")][0] == "Apollo"
