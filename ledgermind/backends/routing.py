"""Which server answers a request when a run has several (``backend.base_urls``).

Why item-affine: the ~10 calls of one FULLPIPE item all start with the same image, so that the
server's prefix cache (vLLM's automatic prefix caching) can reuse the image's prefill. Spread in
rotation over N servers, every server prefills that image again; kept on one server, it is
prefilled once. So all calls of one item go to one server. Which one:

* ``rendezvous`` (the default): the item's owner in ``backends/placement.py``, a function of the
  job's item list and the server list, so every job of a sweep and a resumed job send an item to
  the same server and its image is prefilled once per sweep, not once per job. The job announces
  its item list before its first request (``expect``); an item it did not announce goes to the
  first server of its id's rendezvous ranking (deterministic too, but unbounded).
* ``least_loaded``: a new item goes to the least-loaded healthy server (fewest items active on
  it, then fewest requests in flight). Balances one run as it goes, but the same item lands on
  different servers in different jobs: for a single run.
* ``rotation``: each request to the next server (for comparison, ``scripts/bench_runner.py``).

An item is active from its first request until the agent says it is done (``item_done``, called
by the backend's ``item_done`` hook when ``solve`` returns). Why not a time window alone: counted
for a window after it finished, a done item still weighs on its server, so the balance follows
how many items each server *has had* rather than how many it is serving. The window remains only
for callers that never signal (a request without an agent), so that their items stop counting.

A server that fails (a transport error or a retryable HTTP status) leaves the rotation for
``cooldown_s``. Under ``rendezvous`` its items go, at their next attempt, to the next healthy
server of their failover order (the same in every job) and come back when it does; under
``least_loaded`` they move to the least-loaded healthy server and stay. When every server is
down, the one that comes back first is tried.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum

from ledgermind.backends.placement import item_key, place, ranking
from ledgermind.benchmarks.item import Item
from ledgermind.errors import option


class RoutingPolicy(str, Enum):
    RENDEZVOUS = "rendezvous"  # an item's calls on its placed server, the same in every job
    LEAST_LOADED = "least_loaded"  # an item's calls on the server least loaded when it started
    ROTATION = "rotation"  # each request to the next server


@dataclass
class ServerState:
    """What the router knows about one server."""

    url: str
    in_flight: int = 0
    down_until: float = 0.0
    last_seen: dict[str, float] = field(default_factory=dict)  # item id -> time of its last request here


class ItemRouter:
    """Picks the server of each request; counts in-flight requests and failures per server.

    ``urls`` is never empty: ``VLLMServerBackend`` refuses an empty ``base_urls`` first.

    Not thread-safe by design: it is used from one event loop (the run's), where pick/finish never
    interleave inside a call.
    """

    def __init__(
        self,
        urls: Sequence[str],
        policy: RoutingPolicy | str = RoutingPolicy.RENDEZVOUS,
        cooldown_s: float = 30.0,
        load_epsilon: float = 0.0,
        active_window_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.policy = option(RoutingPolicy, policy, "backend.routing")
        self.servers = {u: ServerState(u) for u in urls}
        self.cooldown_s, self.active_window_s, self._clock = cooldown_s, active_window_s, clock
        self.load_epsilon = load_epsilon
        self._pinned: dict[str, str] = {}  # item id -> url (least_loaded)
        self._keys: dict[str, str] = {}  # item id -> placement key (rendezvous)
        # placement key -> servers in failover order (rendezvous); placing nothing checks epsilon now
        self._placed: dict[str, list[str]] = place([], urls, load_epsilon)
        self._rr = itertools.count()

    def expect(self, items: Sequence[Item]) -> None:
        """The job's whole item list, in benchmark order (finished items included): the placement's input."""
        if self.policy is not RoutingPolicy.RENDEZVOUS or len(self.servers) < 2:
            return  # nothing to place: no image is read for it
        self._keys = {item.id: item_key(item) for item in items}
        self._placed = place(list(self._keys.values()), list(self.servers), self.load_epsilon)

    def healthy(self, url: str) -> bool:
        return self.servers[url].down_until <= self._clock()

    def pick(self, item_id: str = "") -> str:
        """The server for the next request of ``item_id`` ("" = no item: least loaded)."""
        urls = list(self.servers)
        if self.policy is RoutingPolicy.ROTATION:
            live = [u for u in urls if self.healthy(u)] or urls
            return live[next(self._rr) % len(live)]
        if self.policy is RoutingPolicy.RENDEZVOUS and item_id:
            key = self._keys.get(item_id, item_id)
            order = self._placed.get(key) or ranking(key, urls)
            live = [u for u in order if self.healthy(u)]  # all down: the first to come back
            return live[0] if live else min(order, key=lambda u: self.servers[u].down_until)
        pinned = self._pinned.get(item_id)
        if pinned is not None and self.healthy(pinned):
            return pinned
        url = self._least_loaded()
        if item_id:
            self._pinned[item_id] = url
        return url

    def _least_loaded(self) -> str:
        now = self._clock()
        live = [s for s in self.servers.values() if s.down_until <= now]
        if not live:  # all down: the first to come back
            return min(self.servers.values(), key=lambda s: s.down_until).url
        window = self.active_window_s
        return min(
            live, key=lambda s: (sum(now - t <= window for t in s.last_seen.values()), s.in_flight)
        ).url

    def started(self, url: str, item_id: str = "") -> None:
        state = self.servers[url]
        state.in_flight += 1
        if item_id:
            state.last_seen[item_id] = self._clock()
            for other in self.servers.values():  # an item is active on one server only
                if other is not state:
                    other.last_seen.pop(item_id, None)

    def item_done(self, item_id: str) -> None:
        """``item_id`` sends no more requests: it stops counting as active and is unpinned."""
        self._pinned.pop(item_id, None)
        for state in self.servers.values():
            state.last_seen.pop(item_id, None)

    def finished(self, url: str, ok: bool) -> None:
        """One request ended; ``ok`` False (transport error, retryable status) takes the server out."""
        state = self.servers[url]
        state.in_flight -= 1
        if not ok:
            state.down_until = self._clock() + self.cooldown_s

    def assignment(self, item_id: str) -> str | None:
        """The server ``item_id`` is placed on (rendezvous) or pinned to (least_loaded), if any."""
        if self.policy is RoutingPolicy.RENDEZVOUS:
            placed = self._placed.get(self._keys.get(item_id, ""))
            return placed[0] if placed else None
        return self._pinned.get(item_id)
