"""Rendezvous placement (backends/placement.py) and the router and client that use it: every job
of a sweep, and a resumed job, sends each item to the same server; a failed server's items move in
the same order everywhere; no server holds more than its bounded share."""

from __future__ import annotations

import random
from collections import Counter

import httpx
import pytest

from ledgermind.backends.base import GenerationRequest, Message
from ledgermind.backends.images import image_digest
from ledgermind.backends.placement import item_key, load_bound, place, ranking
from ledgermind.backends.routing import ItemRouter
from ledgermind.backends.vllm_server import VLLMServerBackend
from ledgermind.benchmarks.item import Item
from ledgermind.errors import ConfigError

SERVERS = ["http://a:1", "http://b:2", "http://c:3", "http://d:4"]
ITEMS = [f"item-{i}" for i in range(40)]  # ids; without images an item is placed by its id
EPS = ItemRouter(SERVERS).load_epsilon  # the routers below use the default


def items(ids: list[str]) -> list[Item]:
    return [Item(i, "q") for i in ids]


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def job(servers: list[str], ids: list[str], order: list[str]) -> dict[str, str]:
    """One job's router: it announces ``ids`` and then asks for them in ``order``, with as many
    requests in flight as it likes (other variants make other calls at other times)."""
    router = ItemRouter(servers, clock=Clock())
    router.expect(items(ids))
    chosen = {}
    for k, item in enumerate(order):
        url = router.pick(item)
        router.started(url, item)
        if k % 3:  # some requests still in flight: a load-driven router would now choose otherwise
            router.finished(url, ok=True)
        chosen[item] = url
    return chosen


def test_every_job_of_a_sweep_and_a_resumed_job_send_each_item_to_the_same_server():
    rng = random.Random(0)
    first = job(SERVERS, ITEMS, ITEMS)
    for _ in range(6):  # the other variants and seeds: servers listed in any order, items in any order
        servers, order = rng.sample(SERVERS, len(SERVERS)), rng.sample(ITEMS, len(ITEMS))
        assert job(servers, ITEMS, order) == first
    unfinished = ITEMS[::3]  # a resumed job solves only what is left, but announces its whole list
    assert job(SERVERS, ITEMS, unfinished) == {i: first[i] for i in unfinished}
    longer = [*ITEMS, *(f"extra-{i}" for i in range(20))]  # a resume that extends ``limit``
    assert {i: u for i, u in job(SERVERS, longer, longer).items() if i in first} == first
    assert len(set(first.values())) == len(SERVERS)


def test_a_failed_server_hands_its_items_to_their_next_choice_in_the_same_order_in_every_job():
    placed = place(ITEMS, SERVERS, EPS)
    dead = placed[ITEMS[0]][0]
    routers = []
    for servers in (SERVERS, SERVERS[::-1]):  # two jobs that list the servers differently
        clock = Clock()
        r = ItemRouter(servers, cooldown_s=10, clock=clock)
        r.expect(items(ITEMS))
        r.started(dead, ITEMS[0])
        r.finished(dead, ok=False)  # each job sees the server fail on its own
        routers.append((r, clock))
    moved = {i: routers[0][0].pick(i) for i in ITEMS}
    for r, _ in routers:
        assert {i: r.pick(i) for i in ITEMS} == moved
    for item in ITEMS:
        expected = placed[item][1] if placed[item][0] == dead else placed[item][0]
        assert moved[item] == expected  # its next choice; an item of a live server stays put
    orphans = [i for i in ITEMS if placed[i][0] == dead]
    assert len({moved[i] for i in orphans}) > 1  # spread over the others, not all onto one
    second = moved[orphans[0]]
    for r, _ in routers:  # a second failure: its items, old and new, go one further down their lists
        r.started(second, orphans[0])
        r.finished(second, ok=False)
        for item in ITEMS:
            assert r.pick(item) == next(u for u in placed[item] if u not in (dead, second))
    for r, clock in routers:  # both come back: every item returns to its owner
        clock.t = 11.0
        assert {i: r.pick(i) for i in ITEMS} == {i: placed[i][0] for i in ITEMS}


@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.5])
def test_no_server_holds_more_than_its_bounded_share_at_any_prefix(epsilon):
    rng = random.Random(1)
    for servers in (SERVERS[:2], SERVERS[:3], SERVERS):
        keys = [f"q{rng.randrange(10**9)}" for _ in range(97)]
        placed = place(keys, servers, epsilon)
        for n in range(1, len(keys) + 1):
            prefix = place(keys[:n], servers, epsilon)
            assert {i: placed[i] for i in prefix} == prefix  # the owner of item k depends on items 0..k only
            assert max(Counter(o[0] for o in prefix.values()).values()) <= load_bound(
                n, len(servers), epsilon
            )


def test_the_bound_is_what_balances_the_load():
    two = SERVERS[:2]
    keys = ITEMS[:30]
    plain = Counter(ranking(k, two)[0] for k in keys)
    bounded = Counter(place(keys, two, 0.1)[k][0] for k in keys)
    assert max(plain.values()) > load_bound(30, 2, 0.1) >= max(bounded.values())  # 19/11 -> 16/14
    unbounded = place(keys, two, 10.0)  # a loose bound leaves every key on its first choice
    assert all(unbounded[k] == ranking(k, two) for k in keys)


def test_failover_order_lists_every_server_once_and_a_negative_epsilon_is_refused():
    for order in place(ITEMS, SERVERS, 0.1).values():
        assert sorted(order) == sorted(SERVERS)
    with pytest.raises(ConfigError, match="load_epsilon"):
        ItemRouter(SERVERS, load_epsilon=-0.1)


def test_an_item_the_job_did_not_announce_goes_to_its_first_ranked_server():
    r = ItemRouter(SERVERS)
    r.expect(items(ITEMS))
    assert r.pick("stranger") == ranking("stranger", SERVERS)[0]
    assert (
        r.assignment("stranger") is None and r.assignment(ITEMS[0]) == place(ITEMS, SERVERS, EPS)[ITEMS[0]][0]
    )


def test_two_server_clients_announced_the_same_items_send_each_to_the_same_host():
    """Through the client, as two jobs of a sweep: the run announces its items (``expect_items``)."""

    def hosts(servers: list[str], order: list[str]) -> dict[str, str]:
        sent: list[str] = []

        def answer(request: httpx.Request) -> httpx.Response:
            sent.append(request.url.host)
            return httpx.Response(200, json={"choices": [{"message": {"content": "A"}}], "usage": {}})

        b = VLLMServerBackend(
            {"name": "m", "hub_id": "org/m"}, base_urls=servers, transport=httpx.MockTransport(answer)
        )
        b.expect_items(items(ITEMS[:12]))
        for item in order:
            b.generate_sync(GenerationRequest([Message.text("user", "hi")], item_id=item))
        return dict(zip(order, sent, strict=True))

    one = hosts(SERVERS[:2], ITEMS[:12])
    other = hosts(SERVERS[:2][::-1], ITEMS[:12][::-1])
    assert one == other and set(one.values()) == {"a", "b"}
    assert max(Counter(one.values()).values()) <= load_bound(12, 2, EPS)


def test_items_that_share_an_image_share_its_server_and_an_unreadable_image_places_by_id(tmp_path):
    """The key is the first image's content: a second question on the same picture reuses the
    prefix the first one cached, whatever the two items are called."""
    from PIL import Image

    shared, other = tmp_path / "receipt.png", tmp_path / "copy.png"
    Image.new("RGB", (8, 8), "navy").save(shared)
    other.write_bytes(shared.read_bytes())  # another file, the same bytes
    batch = [Item(f"q{i}", "q", images=[shared if i % 2 else other]) for i in range(12)]
    batch.append(Item("broken", "q", images=[tmp_path / "missing.png"]))
    r = ItemRouter(SERVERS)
    r.expect(batch)
    assert len({r.pick(it.id) for it in batch[:12]}) == 1
    assert item_key(batch[0]) == image_digest(shared) and item_key(batch[-1]) == "broken"
    assert r.pick("broken") == place([image_digest(shared), "broken"], SERVERS, EPS)["broken"][0]
