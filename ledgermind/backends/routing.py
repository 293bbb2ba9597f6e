"""Which server answers a request when a run has several (``backend.base_urls``).

Why item-affine: the ~10 calls of one FULLPIPE item all start with the same image, so that the
server's prefix cache (vLLM's automatic prefix caching) can reuse the image's prefill. Spread in
rotation over N servers, every server prefills that image again; kept on one server, it is
prefilled once. So all calls of one item go to one server, and a *new* item goes to the
least-loaded healthy server (fewest items active on it, then fewest requests in flight).

An item is active from its first request until the agent says it is done (``item_done``, called
by the backend's ``item_done`` hook when ``solve`` returns). Why not a time window alone: counted
for a window after it finished, a done item still weighs on its server, so the balance follows
how many items each server *has had* rather than how many it is serving — a server whose long
items are still running gets new items beside them (they queue at its request limit) while
another server's slots stand empty. The window remains only for callers that never signal
(a request without an agent), so such records do not pile up.

A server that fails (a transport error or a retryable HTTP status) leaves the rotation for
``cooldown_s``; the items pinned to it move, at their next attempt, to the least-loaded healthy
server (the retry policy's delays still apply). When every server is down, the one that comes
back first is tried. ``rotation`` (each request to the next server) is kept for
comparison (``scripts/bench_runner.py``).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum

from ledgermind.errors import ConfigError


class RoutingPolicy(str, Enum):
    AFFINE = "affine"  # all calls of an item on one server
    ROTATION = "rotation"  # each request to the next server


@dataclass
class ServerState:
    """What the router knows about one server."""

    url: str
    in_flight: int = 0
    down_until: float = 0.0
    failures: int = 0
    last_seen: dict[str, float] = field(default_factory=dict)  # item id -> time of its last request here

    def active_items(self, now: float, window_s: float) -> int:
        return sum(1 for t in self.last_seen.values() if now - t <= window_s)


class ItemRouter:
    """Picks the server of each request; counts in-flight requests and failures per server.

    Not thread-safe by design: it is used from one event loop (the run's), where pick/finish never
    interleave inside a call.
    """

    def __init__(
        self,
        urls: Sequence[str],
        policy: RoutingPolicy | str = RoutingPolicy.AFFINE,
        cooldown_s: float = 30.0,
        active_window_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not urls:
            raise ConfigError("routing needs at least one server URL")
        try:
            self.policy = RoutingPolicy(policy)
        except ValueError:
            raise ConfigError(
                f"backend.routing must be one of {[p.value for p in RoutingPolicy]}, got {policy!r}"
            ) from None
        self.servers = {u: ServerState(u) for u in urls}
        self.cooldown_s, self.active_window_s, self._clock = cooldown_s, active_window_s, clock
        self._pinned: dict[str, str] = {}  # item id -> url
        self._rr = itertools.count()

    def healthy(self, url: str) -> bool:
        return self.servers[url].down_until <= self._clock()

    def pick(self, item_id: str = "") -> str:
        """The server for the next request of ``item_id`` ("" = no item: least loaded)."""
        urls = list(self.servers)
        if self.policy is RoutingPolicy.ROTATION:
            live = [u for u in urls if self.healthy(u)] or urls
            return live[next(self._rr) % len(live)]
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
        return min(live, key=lambda s: (s.active_items(now, self.active_window_s), s.in_flight)).url

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
        if ok:
            state.failures = 0
        else:
            state.failures += 1
            state.down_until = self._clock() + self.cooldown_s

    def assignment(self, item_id: str) -> str | None:
        return self._pinned.get(item_id)

    def forget_idle(self) -> None:
        """Drop item records older than the activity window (bounded memory over a long run)."""
        now = self._clock()
        for state in self.servers.values():
            for item, t in list(state.last_seen.items()):
                if now - t > self.active_window_s:
                    del state.last_seen[item]
