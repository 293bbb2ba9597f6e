"""Item-affine routing (backends/routing.py) with a hand-driven clock: the least-loaded policy of
a single run (the rendezvous placement every job agrees on: tests/backends/test_placement.py)."""

from __future__ import annotations

import pytest

from ledgermind.backends.routing import ItemRouter
from ledgermind.errors import ConfigError


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_a_failed_server_returns_after_its_cooldown_and_takes_new_items():
    clock = Clock()
    r = ItemRouter(["a", "b"], "least_loaded", cooldown_s=10, active_window_s=100, clock=clock)
    assert r.pick("x") == "a"
    r.started("a", "x")
    r.finished("a", ok=False)  # a fails
    assert r.pick("x") == "b" and r.pick("y") == "b"  # x moves, y avoids a
    r.started("b", "x")
    r.started("b", "y")
    clock.t = 11.0
    assert r.healthy("a") and r.pick("z") == "a"  # back: fewest active items
    assert r.pick("x") == "b"  # x stays where it moved


def test_all_servers_down_tries_the_first_to_come_back():
    clock = Clock()
    r = ItemRouter(["a", "b"], "least_loaded", cooldown_s=10, clock=clock)
    r.started("a")
    r.finished("a", ok=False)
    clock.t = 5.0
    r.started("b")
    r.finished("b", ok=False)
    assert r.pick("x") == "a"


def test_new_items_balance_on_active_items_then_in_flight():
    clock = Clock()
    r = ItemRouter(["a", "b"], "least_loaded", active_window_s=30, clock=clock)
    for item in ("i1", "i2", "i3", "i4"):
        r.started(r.pick(item), item)
    assert sorted(r.assignment(i) for i in ("i1", "i2", "i3", "i4")) == ["a", "a", "b", "b"]
    clock.t = 100.0  # everything idle: load by in-flight requests
    r.finished("a", ok=True)
    r.finished("a", ok=True)
    assert r.pick("i5") == "a"


def test_unknown_policy_is_a_config_error():
    with pytest.raises(ConfigError, match="backend.routing must be one of"):
        ItemRouter(["a"], "random")


def test_a_done_item_stops_counting_so_the_new_item_takes_its_free_slot():
    clock = Clock()
    r = ItemRouter(["a", "b"], "least_loaded", active_window_s=1000, clock=clock)
    for item in ("i1", "i2", "i3", "i4"):  # a: i1, i3; b: i2, i4
        r.started(r.pick(item), item)
    assert r.assignment("i1") == "a"
    r.finished("a", ok=True)
    r.item_done("i1")  # a now serves one item, b two: the next item belongs on a
    r.started("b", "i4")
    r.finished("b", ok=True)
    assert r.pick("i5") == "a"
    assert r.assignment("i1") is None  # unpinned: the router keeps no record of done items


def test_the_agent_tells_the_backend_each_item_is_done_even_when_its_call_fails():
    import asyncio

    from ledgermind.backends.scripted import ScriptedBackend
    from ledgermind.benchmarks.item import Item
    from ledgermind.grounding import GroundingCascade, GroundingConfig
    from ledgermind.pipeline import AblationFlags
    from ledgermind.pipeline.agent import LedgerMindAgent

    class Recording(ScriptedBackend):
        def __init__(self, **kw):
            super().__init__(allow_scripted=True, **kw)
            self.done: list[str] = []

        def item_done(self, item_id: str) -> None:
            self.done.append(item_id)

    for default in ("Answer: A", None):  # None: no rule matches, the call fails with a backend error
        backend = Recording(default=default)
        cascade = GroundingCascade(GroundingConfig())
        agent = LedgerMindAgent(backend, tools={}, cascade=cascade, flags=AblationFlags(baseline=True))
        traj = asyncio.run(agent.solve(Item("q7", "Which option?", [], options=["x", "y"])))
        assert (traj.answer is not None) == (default is not None)
        assert backend.done == ["q7"]
        assert backend.history and all(r.item_id == "q7" for r in backend.history)


def test_the_server_backend_unpins_a_done_item():
    from ledgermind.backends.vllm_server import VLLMServerBackend

    backend = VLLMServerBackend(
        {"name": "m", "hub_id": "org/m"},
        base_urls=["http://127.0.0.1:1", "http://127.0.0.1:2"],
        routing="least_loaded",
    )
    url = backend.router.pick("x")
    backend.router.started(url, "x")
    backend.router.finished(url, ok=True)
    assert backend.router.assignment("x") == url
    backend.item_done("x")
    assert backend.router.assignment("x") is None
    assert all(not s.last_seen for s in backend.router.servers.values())


def _longest_queue(durations: list[float], signal_done: bool, servers: int = 2, per_server: int = 2) -> int:
    """Event simulation of a run: servers × per_server item slots in the runner, items in order,
    each item one job on its routed server, which serves per_server at once (more wait in FIFO).
    Returns the most items that ever waited at one server while the runner had them in flight."""
    import heapq

    clock = Clock()
    r = ItemRouter([f"s{i}" for i in range(servers)], "least_loaded", active_window_s=1e9, clock=clock)
    running = dict.fromkeys(r.servers, 0)
    waiting: dict[str, list[tuple[str, float]]] = {u: [] for u in r.servers}
    events: list[tuple[float, str, str]] = []
    todo, active, longest = [(f"i{k}", d) for k, d in enumerate(durations)], 0, 0

    def run(url: str, item: str, d: float) -> None:
        running[url] += 1
        heapq.heappush(events, (clock.t + d, item, url))

    def admit() -> None:
        nonlocal active, longest
        while todo and active < servers * per_server:
            item, d = todo.pop(0)
            url = r.pick(item)
            r.started(url, item)
            active += 1
            if running[url] < per_server:
                run(url, item, d)
            else:
                waiting[url].append((item, d))
                longest = max(longest, len(waiting[url]))

    admit()
    while events:
        clock.t, item, url = heapq.heappop(events)
        r.finished(url, ok=True)
        running[url] -= 1
        active -= 1
        if signal_done:
            r.item_done(item)
        if waiting[url]:
            run(url, *waiting[url].pop(0))
        admit()
    return longest


def test_with_done_signals_no_item_waits_for_a_busy_server_while_another_has_a_free_slot():
    # long and short items mixed: a server whose long items still run must not get the next item
    durations = [9.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 9.0, 1.0, 1.0, 1.0]
    assert _longest_queue(durations, signal_done=True) == 0
    # counted until they age out, done items skew the balance: items queue behind a busy server
    assert _longest_queue(durations, signal_done=False) > 0
