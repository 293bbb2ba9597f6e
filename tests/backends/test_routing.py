"""Item-affine routing (backends/routing.py) with a hand-driven clock."""

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
    r = ItemRouter(["a", "b"], cooldown_s=10, active_window_s=100, clock=clock)
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
    r = ItemRouter(["a", "b"], cooldown_s=10, clock=clock)
    r.started("a")
    r.finished("a", ok=False)
    clock.t = 5.0
    r.started("b")
    r.finished("b", ok=False)
    assert r.pick("x") == "a"


def test_new_items_balance_on_active_items_then_in_flight():
    clock = Clock()
    r = ItemRouter(["a", "b"], active_window_s=30, clock=clock)
    for item in ("i1", "i2", "i3", "i4"):
        r.started(r.pick(item), item)
    assert sorted(r.assignment(i) for i in ("i1", "i2", "i3", "i4")) == ["a", "a", "b", "b"]
    clock.t = 100.0  # everything idle: load by in-flight requests
    r.finished("a", ok=True)
    r.finished("a", ok=True)
    r.forget_idle()
    assert r.pick("i5") == "a"


def test_unknown_policy_is_a_config_error():
    with pytest.raises(ConfigError, match="backend.routing must be one of"):
        ItemRouter(["a"], "random")
