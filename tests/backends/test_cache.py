from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import textwrap

import pytest
from PIL import Image

from ledgermind.backends.base import Backend, GenerationRequest, Message, Reply
from ledgermind.backends.build import build_backend
from ledgermind.backends.cache import CachedBackend, CacheMiss, CacheMode, ResponseCache, request_key
from ledgermind.errors import ConfigError


class Counting(Backend):
    name = "counting"

    def __init__(self):
        self.calls = 0
        self._model_id = "m"

    async def generate(self, request):
        self.calls += 1
        return Reply(text=f"answer {self.calls}", backend=self.name, model="m", meta={"n": self.calls})


def img(color=(10, 20, 30)):
    return Image.new("RGB", (4, 4), color)


def req(text="q", image=None, **kw):
    content = [text] + ([image] if image is not None else [])
    return GenerationRequest([Message("user", content)], **kw)


@pytest.fixture()
def cached(tmp_path):
    inner = Counting()
    return inner, CachedBackend(inner, ResponseCache(tmp_path / "c.sqlite"), "readwrite", "m|hub|")


def test_hit_returns_recorded_reply_without_calling_the_model(cached):
    inner, b = cached
    first = b.generate_sync(req())
    second = b.generate_sync(req())
    assert inner.calls == 1 and (b.hits, b.misses) == (1, 1)
    assert second.text == first.text == "answer 1" and second.cached and not first.cached
    assert second.backend == "counting" and second.meta == {"n": 1}


def test_any_change_in_the_request_is_a_miss(cached):
    inner, b = cached
    base = dict(text="q", image=img())
    b.generate_sync(req(**base))
    for variant in [dict(text="q2", image=img()), dict(text="q", image=img((10, 20, 31))),
                    dict(max_tokens=7, **base), dict(json_schema={"type": "object"}, **base),
                    dict(regex="[a-z]+", **base), dict(stop=("x",), **base), dict(seed=3, **base)]:  # fmt: skip
        b.generate_sync(req(**variant))
    assert inner.calls == 8 and b.hits == 0


def test_key_depends_on_image_content_not_identity():
    a, b2 = img(), img()
    assert request_key(req(image=a), "m") == request_key(req(image=b2), "m")
    assert request_key(req(image=a), "m") != request_key(req(image=a), "other-model")
    # stage names the pipeline step; it does not change the reply, so it is not part of the key
    assert request_key(req(stage="vqa"), "m") == request_key(req(stage="plan"), "m")


def test_sampled_requests_are_never_cached(cached):
    inner, b = cached
    b.generate_sync(req(temperature=0.7))
    b.generate_sync(req(temperature=0.7))
    assert inner.calls == 2 and len(b.cache) == 0


def test_replay_serves_hits_and_fails_loudly_on_miss(tmp_path):
    path = tmp_path / "c.sqlite"
    CachedBackend(Counting(), ResponseCache(path), "readwrite", "m").generate_sync(req("recorded"))
    inner = Counting()
    replay = CachedBackend(inner, ResponseCache(path), CacheMode.REPLAY, "m")
    assert replay.generate_sync(req("recorded")).text == "answer 1"
    with pytest.raises(CacheMiss, match="replay mode: no recorded reply"):
        replay.generate_sync(req("new question", stage="vqa"))
    with pytest.raises(CacheMiss):
        replay.generate_sync(req("recorded", temperature=1.0))
    assert inner.calls == 0


def test_write_is_durable_before_the_reply_is_returned(tmp_path):
    """A second process (separate connection) sees the row as soon as generate returns, and a
    hard kill right after loses nothing."""
    path = tmp_path / "c.sqlite"
    code = textwrap.dedent(f"""
        import os
        from ledgermind.backends.base import Backend, GenerationRequest, Message, Reply
        from ledgermind.backends.cache import CachedBackend, ResponseCache
        class B(Backend):
            name = "b"
            async def generate(self, r): return Reply(text="durable")
        CachedBackend(B(), ResponseCache({str(path)!r}), "readwrite", "m").generate_sync(
            GenerationRequest([Message.text("user", "q")]))
        os._exit(0)  # no clean close, no atexit
    """)
    subprocess.run([sys.executable, "-c", code], check=True)
    rows = sqlite3.connect(path).execute("SELECT reply FROM replies").fetchall()
    assert len(rows) == 1 and '"durable"' in rows[0][0]


def test_concurrent_requests_share_the_cache(cached):
    inner, b = cached

    async def run():
        return await asyncio.gather(*(b.generate(req(f"q{i % 3}")) for i in range(9)))

    asyncio.run(run())
    assert len(b.cache) == 3


def test_build_backend_wraps_and_validates(tmp_path):
    model = {"name": "m", "hub_id": "org/m"}
    cfg = {"_target_": "ledgermind.backends.scripted.ScriptedBackend", "allow_scripted": True, "default": "x"}
    plain = build_backend(cfg, model)
    assert plain.name == "scripted" and not isinstance(plain, CachedBackend)
    wrapped = build_backend(cfg, model, cache_mode="readwrite", cache_path=tmp_path / "c.sqlite")
    assert isinstance(wrapped, CachedBackend) and wrapped.model_identity.startswith("m|org/m||scripted|{")  # + image limits
    with pytest.raises(ConfigError, match="needs a cache path"):
        build_backend(cfg, model, cache_mode="readwrite")
    with pytest.raises(ConfigError, match="does not exist"):
        build_backend(cfg, model, cache_mode="replay", cache_path=tmp_path / "missing.sqlite")
    by_name = build_backend({"name": "scripted", "allow_scripted": True, "default": "y"}, model)
    assert by_name.generate_sync(req()).text == "y"
