"""Which server owns each item: a function of the job's items and the server list, the same in every job.

Why: a Table 3 is 7 variants × 3 seeds over the same items, each a job with its own client, and
every job that sends an item's image to a server that has not seen it pays that image's prefill
again. Jobs do not talk, so they cannot balance on each other's load; they can all compute the
same answer from what each of them knows before its first request: the server list and the
benchmark's items in order.

An item is placed by its *key*: the content digest of its first image (the prefix every call of
the item starts with; two items that share an image share its server), or its id when it has no
image. Rendezvous (highest-random-weight) hashing ranks the servers of each key by a hash of
(server, key): the ranking does not depend on the order the servers are listed in, and a server
that joins or leaves moves only the keys it ranks first. Hashing alone balances only on average
(30 items on 2 servers split 19/11 here), so the placement is bounded (consistent hashing with
bounded loads): the keys are placed in benchmark order, each on the first server of its ranking
that holds fewer than ⌈(1 + ε) · m / S⌉ of the m keys placed so far. The bound grows with m, so
the owner of key k depends only on keys 0..k: a run with a larger ``limit`` places its first items
as a smaller one did, and a resumed run (its whole item list, finished items included) as its
first attempt did — and no server ends above ⌈(1 + ε) · N / S⌉ of the N keys.

"Load" is keys of the job's static item list, not requests in flight: in-flight counts differ
from job to job (another variant makes other calls at other times), and only what every job knows
in advance gives every job the same answer.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

from ledgermind.backends.images import image_digest
from ledgermind.benchmarks.item import Item
from ledgermind.errors import ConfigError, DataError


def item_key(item: Item) -> str:
    """What ``item`` is placed by: its first image's content digest, else (no image) its id."""
    try:
        return image_digest(item.images[0]) if item.images else item.id
    except DataError:  # the item fails with this cause when it runs; its place does not matter
        return item.id


def ranking(key: str, servers: Sequence[str]) -> list[str]:
    """The servers in ``key``'s order of preference: highest hash of (server, key) first."""
    return sorted(servers, key=lambda server: (_weight(server, key), server), reverse=True)


def _weight(server: str, key: str) -> int:
    # a hash that every process computes alike (Python's ``hash`` is salted per process)
    return int.from_bytes(hashlib.blake2b(f"{server}\n{key}".encode(), digest_size=8).digest(), "big")


def load_bound(placed: int, servers: int, epsilon: float) -> int:
    """Most keys one of ``servers`` may hold once ``placed`` keys are placed: ⌈(1 + ε) · placed / S⌉."""
    return max(1, math.ceil((1 + epsilon) * placed / servers))


def place(keys: Sequence[str], servers: Sequence[str], epsilon: float) -> dict[str, list[str]]:
    """``key -> servers in failover order``: its owner, then the rest of its ranking.

    A server that fails hands each of its keys to the next server of that key's list, so the
    failed server's items spread over the others as their rankings say, the same in every job.
    """
    if epsilon < 0:
        raise ConfigError(f"backend.load_epsilon must be >= 0, got {epsilon}")
    load = dict.fromkeys(servers, 0)
    order: dict[str, list[str]] = {}
    for placed, key in enumerate(dict.fromkeys(keys), start=1):
        ranked = ranking(key, list(load))
        bound = load_bound(placed, len(load), epsilon)
        owner = next(s for s in ranked if load[s] < bound)  # exists: S · bound >= placed > items placed
        load[owner] += 1
        order[key] = [owner, *(s for s in ranked if s != owner)]
    return order
