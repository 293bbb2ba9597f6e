from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from PIL import Image

from ledgermind.backends import cache as cache_module
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


class Slow(Counting):
    """A call that takes ``delay_s`` (a server's time), then answers — or fails with ``fails``."""

    def __init__(self, delay_s=0.05, fails=None):
        super().__init__()
        self.delay_s, self.fails = delay_s, fails

    async def generate(self, request):
        await asyncio.sleep(self.delay_s)
        if self.fails is not None:
            self.calls += 1
            raise self.fails
        return await super().generate(request)


def img(color=(10, 20, 30)):
    return Image.new("RGB", (4, 4), color)


def req(text="q", image=None, **kw):
    content = [text] + ([image] if image is not None else [])
    return GenerationRequest([Message("user", content)], **kw)


def stored(cache: ResponseCache) -> int:
    """Rows in the cache file, read by a connection of its own."""
    with contextlib.closing(sqlite3.connect(cache.path)) as db:
        return int(db.execute("SELECT COUNT(*) FROM replies").fetchone()[0])


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
    assert second.backend == "counting" and second.meta == {"n": 1, "cache": "run"}  # this run wrote it


def test_any_change_in_the_request_is_a_miss(cached):
    inner, b = cached
    base = dict(text="q", image=img())
    b.generate_sync(req(**base))
    for variant in [
        dict(text="q2", image=img()),
        dict(text="q", image=img((10, 20, 31))),
        dict(max_tokens=7, **base),
        dict(json_schema={"type": "object"}, **base),
        dict(regex="[a-z]+", **base),
        dict(stop=("x",), **base),
        dict(seed=3, **base),
    ]:
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
    assert inner.calls == 2 and stored(b.cache) == 0


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
    assert stored(b.cache) == 3


def test_build_backend_wraps_and_validates(tmp_path):
    model = {"name": "m", "hub_id": "org/m"}
    cfg = {"_target_": "ledgermind.backends.scripted.ScriptedBackend", "allow_scripted": True, "default": "x"}
    plain = build_backend(cfg, model)
    assert plain.name == "scripted" and not isinstance(plain, CachedBackend)
    wrapped = build_backend(cfg, model, cache_mode="readwrite", cache_path=tmp_path / "c.sqlite")
    assert isinstance(wrapped, CachedBackend)
    identity = json.loads(wrapped.model_identity)
    assert (identity["backend"], identity["model"], identity["backend_config"]) == ("scripted", model, cfg)
    assert identity["image_budget"]["max_images"] == 1
    with pytest.raises(ConfigError, match="needs a cache path"):
        build_backend(cfg, model, cache_mode="readwrite")
    with pytest.raises(ConfigError, match="does not exist"):
        build_backend(cfg, model, cache_mode="replay", cache_path=tmp_path / "missing.sqlite")
    by_name = build_backend({"name": "scripted", "allow_scripted": True, "default": "y"}, model)
    assert by_name.generate_sync(req()).text == "y"


# ----------------------------------------------------------------------------- shared by a sweep
def test_hit_from_another_run_is_counted_shared(tmp_path):
    path = tmp_path / "sweep.sqlite"
    first, second = Counting(), Counting()
    a = CachedBackend(first, ResponseCache(path, origin="runs/full"), "readwrite", "m")
    b = CachedBackend(second, ResponseCache(path, origin="runs/no_ecc"), "readwrite", "m")
    a.generate_sync(req("plan"))
    reply = b.generate_sync(req("plan"))
    assert second.calls == 0 and reply.cached and reply.meta["cache"] == "shared"
    assert (b.hits, b.shared_hits, a.shared_hits) == (1, 1, 0)
    own = CachedBackend(Counting(), ResponseCache(path, origin="runs/full"), "readwrite", "m")  # a resume
    assert own.generate_sync(req("plan")).meta["cache"] == "run" and own.shared_hits == 0


def test_first_writer_wins_so_every_run_uses_one_answer(tmp_path):
    """Two jobs that both missed and both asked the server store one reply: the second gets the first's."""
    path = tmp_path / "c.sqlite"
    one, two = ResponseCache(path, origin="a"), ResponseCache(path, origin="b")
    assert one.put("k", Reply(text="first")).text == "first"
    assert two.put("k", Reply(text="second")).text == "first"
    assert two.lookup("k") == (Reply(text="first"), "a")


def test_concurrent_identical_requests_are_sent_once(cached):
    inner, b = cached
    b.inner = slow = Slow()

    async def run():
        return await asyncio.gather(*(b.generate(req("same")) for _ in range(5)))

    replies = asyncio.run(run())
    assert (
        slow.calls == 1 and {r.text for r in replies} == {"answer 1"} and sum(r.cached for r in replies) == 4
    )


def job(path, inner, origin):
    """One job of a sweep: its own backend and its own connection to the sweep's file."""
    return CachedBackend(inner, ResponseCache(path, origin=origin), "readwrite", "m")


def pending(path) -> list:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return db.execute("SELECT key FROM pending").fetchall()


def test_jobs_at_once_send_each_request_once(tmp_path):
    """Jobs that start together miss the same requests at the same moment: one sends, the other
    takes its reply from the file (a shared hit), however the questions interleave."""
    path, server = tmp_path / "sweep.sqlite", Slow()
    full, no_ecc = job(path, server, "runs/full"), job(path, server, "runs/no_ecc")

    async def run(b, order):
        return await asyncio.gather(*(b.generate(req(q)) for q in order))

    async def both():
        return await asyncio.gather(run(full, ["plan", "obs", "vqa"]), run(no_ecc, ["vqa", "plan", "obs"]))

    mine, theirs = asyncio.run(both())
    assert server.calls == 3 and [r.text for r in mine] == [r.text for r in (theirs[1], theirs[2], theirs[0])]
    assert full.misses + no_ecc.misses == 3 and full.shared_hits + no_ecc.shared_hits == 3
    assert all(r.meta["cache"] == "shared" for r in mine + theirs if r.cached)
    assert stored(full.cache) == 3 and pending(path) == []


def test_a_failed_send_is_never_shared_the_waiting_job_sends_it_itself(tmp_path):
    path, down, up = tmp_path / "sweep.sqlite", Slow(fails=ConnectionError("server gone")), Slow()
    owner, waiter = job(path, down, "runs/full"), job(path, up, "runs/no_ecc")

    async def run():
        first = asyncio.ensure_future(owner.generate(req("plan")))
        await asyncio.sleep(0.01)  # the owner has claimed the request
        return await asyncio.gather(first, waiter.generate(req("plan")), return_exceptions=True)

    failed, reply = asyncio.run(run())
    assert isinstance(failed, ConnectionError) and (down.calls, up.calls) == (1, 1)
    assert reply.text == "answer 1" and not reply.cached
    assert owner.cache.lookup(request_key(req("plan"), "m")) == (reply, "runs/no_ecc")
    assert pending(path) == []


def test_a_dead_jobs_claim_is_taken_over_once_it_goes_unrenewed(tmp_path):
    """A job killed mid-call leaves its claim and stops renewing it: the others wait until it is
    ``claim_s`` old, then send the request themselves."""
    path, server = tmp_path / "sweep.sqlite", Slow(delay_s=0)
    b = job(path, server, "runs/no_ecc")
    assert (b.heartbeat_s, b.claim_s) == (cache_module.HEARTBEAT_S, cache_module.CLAIM_STALE_S)
    b.claim_s = 0.25
    killed = ResponseCache(path, origin="runs/full")
    assert killed.claim(request_key(req("plan"), "m"), b.claim_s)
    killed.close()  # gone without a reply or a release

    async def run():
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(b.generate(req("plan")), 0.1)
        assert server.calls == 0  # still waiting for the owner
        return await b.generate(req("plan"))

    assert asyncio.run(run()).text == "answer 1" and server.calls == 1 and pending(path) == []


def _claiming_process(path: Path, key: str) -> subprocess.Popen[str]:
    """Another job's process that has claimed ``key`` and is still running (its call in flight)."""
    code = textwrap.dedent(
        f"""
        import time
        from ledgermind.backends.cache import ResponseCache
        assert ResponseCache({str(path)!r}, origin="runs/full").claim({key!r}, 30.0)
        print("claimed", flush=True)
        time.sleep(600)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "claimed"
    return proc


@pytest.mark.parametrize("killed", [False, True])
def test_a_claim_of_a_process_of_this_host_stands_while_it_runs_and_falls_when_it_is_killed(tmp_path, killed):
    """A job killed here and resumed here need not wait ``CLAIM_STALE_S`` for its own old claims:
    an owner names its host and process, and a process of this host that no longer runs holds
    nothing. One that still runs keeps its claim (its call may still answer)."""
    path, server = tmp_path / "sweep.sqlite", Slow(delay_s=0)
    key = request_key(req("plan"), "m")
    other = _claiming_process(path, key)
    try:
        if killed:
            other.kill()
            other.wait()  # gone; a killed process not yet reaped (a zombie) counts as gone too
        b = job(path, server, "runs/no_ecc")
        assert b.claim_s == cache_module.CLAIM_STALE_S  # 30 s: far beyond the wait below

        async def run():
            return await asyncio.wait_for(b.generate(req("plan")), 1.0)

        if killed:
            assert asyncio.run(run()).text == "answer 1" and server.calls == 1 and pending(path) == []
        else:
            with pytest.raises(TimeoutError):
                asyncio.run(run())
            assert server.calls == 0
    finally:
        other.kill()
        other.wait()


def test_a_live_call_longer_than_the_stale_limit_keeps_its_claim(tmp_path):
    """An owner renews its claim while its call runs, so a slow server's reply is still sent once."""
    path, server = tmp_path / "sweep.sqlite", Slow(delay_s=0.6)
    owner, waiter = job(path, server, "runs/full"), job(path, server, "runs/no_ecc")
    for b in (owner, waiter):
        b.heartbeat_s, b.claim_s = 0.05, 0.2

    async def run():
        first = asyncio.ensure_future(owner.generate(req("plan")))
        await asyncio.sleep(0.01)  # the owner has claimed the request
        return await asyncio.gather(first, waiter.generate(req("plan")))

    sent, shared = asyncio.run(run())
    assert server.calls == 1 and shared.text == sent.text and shared.meta["cache"] == "shared"


def test_claims_that_cannot_be_written_send_as_without_them(tmp_path, caplog):
    """A file whose claims fail (read-only, damaged table) still answers hits, and sends its misses."""
    path, server = tmp_path / "c.sqlite", Counting()
    b = job(path, server, "runs/full")
    b.generate_sync(req("plan"))
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("DROP TABLE pending")
    assert [b.generate_sync(req(q)).text for q in ("plan", "obs", "vqa")] == [
        "answer 1",
        "answer 2",
        "answer 3",
    ]
    assert server.calls == 3 and caplog.text.count("cannot claim a request") == 1


def test_runs_that_open_a_fresh_file_at_once_all_get_the_cache(tmp_path, caplog):
    """Concurrent first opens race to switch the file to WAL; SQLite answers one of them "locked"
    at once instead of waiting (measured: 25 of 800 such opens, without the retry). Every run must
    still get the cache, not a one-line "running without it"."""
    usable: list[bool] = []

    def open_at(path: Path, start: threading.Barrier) -> None:
        start.wait()
        cache = ResponseCache(path)
        usable.append(cache.usable)
        cache.close()

    for round_ in range(100):
        start = threading.Barrier(4)
        threads = [
            threading.Thread(target=open_at, args=(tmp_path / f"{round_}.sqlite", start)) for _ in range(4)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert usable == [True] * 400 and "cannot open" not in caplog.text


def real_lock_error(tmp_path: Path) -> sqlite3.OperationalError:
    holder = sqlite3.connect(tmp_path / "held.sqlite", isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        sqlite3.connect(tmp_path / "held.sqlite", timeout=0).execute("SELECT * FROM t")
    except sqlite3.OperationalError as exc:
        return exc
    finally:
        holder.close()
    raise AssertionError("an exclusive lock did not block a reader")


def test_a_lock_that_outlasts_the_busy_timeout_is_one_line_and_no_cache(tmp_path, monkeypatch, caplog):
    busy = real_lock_error(tmp_path)
    tries = []

    def locked(self):
        tries.append(1)
        raise busy

    monkeypatch.setattr(ResponseCache, "_connect", locked)
    monkeypatch.setattr(cache_module, "BUSY_TIMEOUT_S", 0.2)
    cache = ResponseCache(tmp_path / "c.sqlite")
    assert not cache.usable and len(tries) > 1
    assert caplog.text.count("cannot open (database is locked); running without it") == 1


def test_a_disk_error_at_open_is_not_retried(tmp_path, monkeypatch, caplog):
    tries = []

    def failing(self):
        tries.append(1)
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(ResponseCache, "_connect", failing)
    assert not ResponseCache(tmp_path / "c.sqlite").usable and tries == [1]
    assert "cannot open (disk I/O error)" in caplog.text


WRITER = textwrap.dedent("""
    import sys
    from ledgermind.backends.base import Reply
    from ledgermind.backends.cache import ResponseCache
    path, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    cache = ResponseCache(path, origin=who)
    for i in range(n):
        # half the keys are written by both processes (a shared request), half by this one only
        cache.put(f"shared-{i}", Reply(text=f"{who} {i}"), stage="s")
        cache.put(f"{who}-{i}", Reply(text=f"{who} {i}", meta={"i": i}), stage="s")
    cache.close()
""")


def test_two_writer_processes_lose_and_corrupt_nothing(tmp_path):
    path, n = tmp_path / "shared.sqlite", 150
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), who, str(n)]) for who in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    cache = ResponseCache(path, recover=False)
    assert stored(cache) == 3 * n  # n shared keys + n per process
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone() == ("ok",)
    for i in range(n):
        for who in ("a", "b"):
            assert cache.lookup(f"{who}-{i}") == (Reply(text=f"{who} {i}", meta={"i": i}), who)
        reply, origin = cache.lookup(f"shared-{i}")
        assert reply.text == f"{origin} {i}"  # one writer's whole row, never a mix


# ----------------------------------------------------------------------------- damage vs a failing disk
@pytest.mark.parametrize(
    "row", ['{"text": 5}', "[1, 2]", '{"text": "x", "meta": "no"}', '{"text": "x", "extra": 1}', "not json"]
)
def test_a_mistyped_row_is_a_miss_and_is_replaced(tmp_path, row, caplog):
    path = tmp_path / "c.sqlite"
    inner, b = Counting(), CachedBackend(Counting(), ResponseCache(path), "readwrite", "m")
    b.inner = inner
    key = request_key(req("q"), "m")
    b.cache.put(key, Reply(text="ok"))
    sqlite3.connect(path).execute(
        "UPDATE replies SET reply = ? WHERE key = ?", (row, key)
    ).connection.commit()
    assert b.generate_sync(req("q")).text == "answer 1" and inner.calls == 1  # a miss, not an item error
    assert b.generate_sync(req("q")).text == "answer 1" and inner.calls == 1  # the fresh reply replaced it
    assert "unreadable entry" in caplog.text


def test_disk_io_error_never_moves_a_valid_cache_aside(tmp_path, monkeypatch, caplog):
    path = tmp_path / "c.sqlite"
    ResponseCache(path).put("k", Reply(text="kept"))

    def io_error(self):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(ResponseCache, "_open", io_error)
    inner = Counting()
    b = CachedBackend(inner, ResponseCache(path), "readwrite", "m")
    assert b.generate_sync(req("q")).text == "answer 1" and inner.calls == 1  # runs on without a cache
    assert not path.with_name("c.sqlite.corrupt").exists() and caplog.text.count("cannot open") == 1
    monkeypatch.undo()
    assert ResponseCache(path).lookup("k")[0].text == "kept"
    with pytest.raises(ConfigError, match="replay needs an intact file"):
        monkeypatch.setattr(ResponseCache, "_open", io_error)
        ResponseCache(path, recover=False)


def test_a_file_that_is_not_a_database_is_moved_aside(tmp_path):
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not sqlite at all" * 100)
    cache = ResponseCache(path)
    assert cache.usable and path.with_name("c.sqlite.corrupt").exists()
    assert stored(cache) == 0


def test_full_disk_write_is_skipped_with_one_warning(tmp_path, caplog):
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache._db.execute("PRAGMA max_page_count = " + str(cache._db.execute("PRAGMA page_count").fetchone()[0]))
    big = Reply(text="x" * 20000)
    assert cache.put("a", big) is big and cache.put("b", big) is big  # the reply still reaches the item
    assert caplog.text.count("cannot store a reply") == 1 and "full" in caplog.text
    assert cache.lookup("a") is None and not (tmp_path / "c.sqlite.corrupt").exists()


# ----------------------------------------------------------------------------- where the file lives, what keys it
def test_cache_path_by_scope(tmp_path):
    from ledgermind.backends.cache import backend_signature, cache_path

    run, sig = tmp_path / "run", backend_signature(None)
    assert cache_path({"scope": "run"}, run) == run / "responses.sqlite"
    assert cache_path({"scope": "sweep"}, run) == run / "responses.sqlite"  # not inside a multirun
    assert (
        cache_path({"scope": "root", "root": str(tmp_path / "r")}, run, "qwen 7b/x")
        == tmp_path / "r" / f"qwen_7b_x-{sig}.sqlite"
    )
    assert cache_path({"scope": "root", "path": "/x/f.sqlite"}, run) == Path(
        "/x/f.sqlite"
    )  # replay: the recorded file
    with pytest.raises(ConfigError, match="cache.scope must be one of"):
        cache_path({"scope": "galaxy"}, run)
    with pytest.raises(ConfigError, match="needs cache.root"):
        cache_path({"scope": "root", "root": None}, run)


def test_a_shared_file_is_split_by_reply_shaping_backend_parameters_not_by_transport(tmp_path):
    from ledgermind.backends.cache import backend_signature, cache_path

    sim = {"_target_": "x.SimulatedBackend", "seed": 0, "phantom_rate": 0.2}
    assert backend_signature(sim) != backend_signature(
        {**sim, "phantom_rate": 0.4}
    )  # other replies: other file
    assert backend_signature(sim) != backend_signature({**sim, "seed": 1})
    server = {
        "_target_": "x.VLLMServerBackend",
        "base_urls": ["http://a:1"],
        "concurrency": 8,
        "routing": "rendezvous",
    }
    assert backend_signature(server) == backend_signature(
        {
            **server,
            "base_urls": ["http://b:2", "http://c:3"],
            "concurrency": 64,
            "routing": "rotation",
            "load_epsilon": 0.5,
        }
    )
    assert backend_signature(server) != backend_signature({**server, "served_model_name": "lora"})
    root = {"scope": "root", "root": str(tmp_path)}
    assert cache_path(root, tmp_path, "m", sim) != cache_path(
        root, tmp_path, "m", {**sim, "phantom_rate": 0.4}
    )


# ----------------------------------------------------------------------------- identity and row digests
SERVER = {
    "_target_": "ledgermind.backends.vllm_server.VLLMServerBackend",
    "base_urls": ["http://127.0.0.1:9"],
    "served_model_name": None,
}
QWEN = {
    "name": "q",
    "hub_id": "Qwen/Qwen2.5-VL-7B-Instruct",
    "revision": None,
    "dtype": "bfloat16",
    "vllm_args": {"dtype": "bfloat16", "gpu_memory_utilization": 0.9},
}


def identity_of(backend_cfg, model_cfg, tmp_path) -> str:
    built = build_backend(backend_cfg, model_cfg, cache_mode="readwrite", cache_path=tmp_path / "c.sqlite")
    return built.model_identity


@pytest.mark.parametrize(
    "backend_change,model_change",
    [
        ({"served_model_name": "qwen-lora-chart"}, {}),  # an adapter served under its own name
        ({"return_token_ids": True}, {}),
        ({}, {"dtype": "float32"}),
        ({}, {"vllm_args": {"dtype": "float16", "gpu_memory_utilization": 0.9}}),
        ({}, {"vllm_args": {"quantization": "awq", "dtype": "bfloat16"}}),
        ({}, {"revision": "abc123"}),
        ({}, {"path": "/models/qwen-finetuned"}),
        ({}, {"max_image_pixels": 1 << 20}),
    ],
)
def test_whatever_shapes_a_reply_is_in_the_identity(tmp_path, backend_change, model_change):
    base = identity_of(SERVER, QWEN, tmp_path)
    assert identity_of(SERVER | backend_change, QWEN | model_change, tmp_path) != base


def test_how_a_model_is_reached_or_scheduled_is_not(tmp_path):
    reached = SERVER | {
        "base_urls": ["http://a:1", "http://b:2"],
        "concurrency": 64,
        "per_server_concurrency": 8,
        "routing": "rotation",
        "cooldown_s": 5.0,
        "timeout_s": 9.0,
        "connect_timeout_s": 1.0,
        "max_retries": 0,
        "backoff_base_s": 0.1,
        "backoff_cap_s": 1.0,
        "max_reply_bytes": 100,
        "api_key_env": "MY_KEY",
    }
    scheduled = QWEN | {"vllm_args": {"dtype": "bfloat16", "gpu_memory_utilization": 0.5, "max_num_seqs": 4}}
    assert identity_of(reached, scheduled, tmp_path) == identity_of(SERVER, QWEN, tmp_path)


def test_a_row_stored_for_another_request_is_a_miss_with_one_warning(tmp_path, caplog):
    """Swapping two rows' replies (by hand, a bad copy) must never answer one request with another's reply."""
    path = tmp_path / "c.sqlite"
    recorder = CachedBackend(Counting(), ResponseCache(path), "readwrite", "m")
    recorder.generate_sync(req("one")), recorder.generate_sync(req("two"))
    recorder.cache.close()
    with sqlite3.connect(path) as db:
        (a, ra), (b, rb) = db.execute("SELECT key, reply FROM replies ORDER BY rowid").fetchall()
        db.executemany("UPDATE replies SET reply = ? WHERE key = ?", [(rb, a), (ra, b)])
    replay = CachedBackend(Counting(), ResponseCache(path, recover=False), CacheMode.REPLAY, "m")
    for question in ("one", "two"):
        with pytest.raises(CacheMiss):
            replay.generate_sync(req(question))
    assert caplog.text.count(f"response cache {path}: the reply stored under") == 1
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM replies").fetchone() == (2,)  # recording kept

    inner = Counting()
    rerun = CachedBackend(inner, ResponseCache(path), "readwrite", "m")
    assert [rerun.generate_sync(req(q)).text for q in ("one", "two", "one")] == [
        "answer 1",
        "answer 2",
        "answer 1",
    ]
    assert inner.calls == 2 and rerun.hits == 1  # asked again, stored, then answered from the cache
