from __future__ import annotations

import pytest

from ledgermind.backends.base import GenerationRequest, Message
from ledgermind.backends.scripted import ALLOW_ENV, ScriptedBackend
from ledgermind.errors import BackendError, ConfigError


def req(text, stage=""):
    return GenerationRequest([Message.text("system", "ignored capital"), Message.text("user", text)], stage=stage)


def test_refuses_to_build_without_explicit_opt_in(monkeypatch):
    monkeypatch.delenv(ALLOW_ENV, raising=False)
    with pytest.raises(ConfigError, match="tests only"):
        ScriptedBackend(rules=[{"reply": "x"}])
    monkeypatch.setenv(ALLOW_ENV, "1")
    assert ScriptedBackend(default="x").generate_sync(req("q")).text == "x"


def test_rules_are_ordered_and_combine_conditions():
    b = ScriptedBackend(
        {"name": "fake"},
        rules=[
            {"call": 0, "reply": "first call"},
            {"pattern": r"capital", "stage": "vqa", "reply": "Paris"},
            {"pattern": r"capital", "reply": "capital elsewhere"},
        ],
        default="fallback",
        allow_scripted=True,
    )
    replies = [b.generate_sync(r).text for r in
               [req("capital?", "vqa"), req("capital?", "vqa"), req("capital?", "plan"), req("other", "vqa")]]  # fmt: skip
    assert replies == ["first call", "Paris", "capital elsewhere", "fallback"]
    r = b.generate_sync(req("capital", "vqa"))
    assert r.backend == "scripted" and r.model == "fake" and r.meta == {"call_index": 4, "rule": 1}
    assert len(b.history) == 5


def test_pattern_looks_only_at_the_last_user_message():
    b = ScriptedBackend(rules=[{"pattern": "capital", "reply": "hit"}], default="miss", allow_scripted=True)
    assert b.generate_sync(req("nothing here")).text == "miss"  # 'capital' is only in the system msg


def test_no_match_without_default_is_a_clear_error():
    b = ScriptedBackend(rules=[{"stage": "plan", "reply": "p"}], allow_scripted=True)
    with pytest.raises(BackendError, match="no rule matches call 0"):
        b.generate_sync(req("q", "vqa"))


@pytest.mark.parametrize("rule", [{"pattern": "(", "reply": "r"}, {"reply": "x", "bogus": 1}, {"pattern": "a"}])
def test_bad_rules_are_config_errors(rule):
    with pytest.raises(ConfigError):
        ScriptedBackend(rules=[rule], allow_scripted=True)
