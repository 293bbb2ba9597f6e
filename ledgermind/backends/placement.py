"""Which server owns each item: a function of the item ids and the server list, the same in every job.

Why: a Table 3 is 7 variants × 3 seeds over the same items, each a job with its own client, and
every job that sends an item's image to a server that has not seen it pays that image's prefill
again. Jobs do not talk, so they cannot balance on each other's load; they can all compute the
same answer from what each of them knows before its first request: the server list and the
benchmark's item ids in order.

Rendezvous (highest-random-weight) hashing ranks the servers of each item by a hash of
(server, item): the ranking does not depend on the order the servers are listed in, and a server
that joins or leaves moves only the items it ranks first. Hashing alone balances only on
average (30 items on 2 servers split 20/10 often enough), so the placement is bounded
(consistent hashing with bounded loads): the items are placed in benchmark order, each on the
first server of its ranking that holds fewer than ⌈(1 + ε) · m / S⌉ of the m items placed so
far. The bound grows with m, so the owner of item k depends only on items 0..k: a run with a
larger ``limit`` places its first items as a smaller one did, and a resumed run (its whole item
list, finished items included) as its first attempt did — and no server ends above
⌈(1 + ε) · N / S⌉ of the N items.

"Load" is items of the job's static item list, not requests in flight: in-flight counts differ
from job to job (another variant makes other calls at other times), and only what every job knows
in advance gives every job the same answer.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

from ledgermind.errors import ConfigError


def ranking(item: str, servers: Sequence[str]) -> list[str]:
    """The servers in ``item``'s order of preference: highest hash of (server, item) first."""
    return sorted(servers, key=lambda server: (_weight(server, item), server), reverse=True)


def _weight(server: str, item: str) -> int:
    # a keyed hash that every process computes alike (Python's ``hash`` is salted per process)
    return int.from_bytes(hashlib.blake2b(f"{server}\n{item}".encode(), digest_size=8).digest(), "big")


def load_bound(placed: int, servers: int, epsilon: float) -> int:
    """Most items one of ``servers`` may hold once ``placed`` items are placed: ⌈(1 + ε) · placed / S⌉."""
    return max(1, math.ceil((1 + epsilon) * placed / servers))


def place(items: Sequence[str], servers: Sequence[str], epsilon: float) -> dict[str, list[str]]:
    """``item -> servers in failover order``: its owner, then the rest of its ranking.

    A server that fails hands each of its items to the next server of that item's list, so the
    failed server's items spread over the others as their rankings say, the same in every job.
    """
    if epsilon < 0:
        raise ConfigError(f"backend.load_epsilon must be >= 0, got {epsilon}")
    load = dict.fromkeys(servers, 0)
    order: dict[str, list[str]] = {}
    for placed, item in enumerate(dict.fromkeys(items), start=1):
        ranked = ranking(item, list(load))
        bound = load_bound(placed, len(load), epsilon)
        owner = next(s for s in ranked if load[s] < bound)  # exists: S · bound >= placed > items placed
        load[owner] += 1
        order[item] = [owner, *(s for s in ranked if s != owner)]
    return order
