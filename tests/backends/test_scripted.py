from __future__ import annotations

import asyncio

import pytest
from PIL import Image

from ledgermind.backends.base import GenerationRequest, Message
from ledgermind.backends.scripted import ALLOW_ENV, ScriptedBackend
from ledgermind.errors import BackendError, ConfigError
from ledgermind.prompts.templates import DECIDE


def req(text, stage="", **kw):
    return GenerationRequest(
        [Message.text("system", "ignored capital"), Message.text("user", text)], stage=stage, **kw
    )


def test_refuses_to_build_without_explicit_opt_in(monkeypatch):
    monkeypatch.delenv(ALLOW_ENV, raising=False)
    with pytest.raises(ConfigError, match="tests only"):
        ScriptedBackend(rules=[{"reply": "x"}])
    monkeypatch.setenv(ALLOW_ENV, "1")
    assert ScriptedBackend(default="x").generate_sync(req("q")).text == "x"


def test_rules_are_ordered_and_see_only_what_a_model_sees():
    b = ScriptedBackend(
        {"name": "fake"},
        rules=[
            {"pattern": r"capital", "sampled": True, "seed": 1, "reply": "sampled Paris"},
            {"pattern": r"capital", "structured": True, "reply": '{"answer": "Paris"}'},
            {"pattern": r"capital", "images": 1, "reply": "capital with image"},
            {"pattern": r"capital", "reply": "capital elsewhere"},
        ],
        default="fallback",
        allow_scripted=True,
    )
    img = Image.new("RGB", (4, 4))
    with_image = GenerationRequest([Message("user", [img, "capital?"])])
    replies = [
        b.generate_sync(r).text
        for r in [
            req("capital?", "vqa", temperature=0.7, seed=1),
            req("capital?", "vqa", temperature=0.7, seed=2),
            req("capital?", json_schema={"type": "object"}),
            with_image,
            req("other", "vqa"),
        ]
    ]
    assert replies == [
        "sampled Paris",
        "capital elsewhere",
        '{"answer": "Paris"}',
        "capital with image",
        "fallback",
    ]
    r = b.generate_sync(req("capital", "vqa"))
    assert r.backend == "scripted" and r.model == "fake" and r.meta == {"rule": 3}
    assert len(b.history) == 6


def test_identical_requests_get_identical_replies_whatever_the_stage_name():
    b = ScriptedBackend(
        rules=[{"prompt": "decide", "reply": "Answer: B"}], default="other", allow_scripted=True
    )
    text = DECIDE.substitute(
        question="q", options="", granularity="g", evidence_title="", ledger="", claims=""
    )
    replies = {b.generate_sync(req(text, stage)).text for stage in ("decide", "dual_read_1", "plan", "")}
    assert replies == {"Answer: B"}
    assert asyncio.run(b.generate(req("q", "decide"))).text == "other"  # a stage name alone matches nothing


def test_pattern_looks_only_at_the_last_user_message():
    b = ScriptedBackend(rules=[{"pattern": "capital", "reply": "hit"}], default="miss", allow_scripted=True)
    assert b.generate_sync(req("nothing here")).text == "miss"  # 'capital' is only in the system msg


def test_no_match_without_default_is_a_clear_error():
    b = ScriptedBackend(rules=[{"prompt": "plan", "reply": "p"}], allow_scripted=True)
    with pytest.raises(BackendError, match="no rule matches the request"):
        b.generate_sync(req("q", "plan"))


@pytest.mark.parametrize(
    "rule",
    [
        {"pattern": "(", "reply": "r"},
        {"reply": "x", "bogus": 1},
        {"pattern": "a"},
        {"stage": "plan", "reply": "p"},
        {"call": 0, "reply": "p"},
        {"prompt": "no_such_prompt", "reply": "p"},
    ],
)
def test_bad_rules_are_config_errors(rule):
    with pytest.raises(ConfigError):
        ScriptedBackend(rules=[rule], allow_scripted=True)
