"""Formulas of the experiment planner (``ledgermind plan``): how many items a Table 3 needs, and
what it will cost.

Why: whether a Table 3 can separate its variants is decided before the run, by the number of
items; the cost is decided by the distinct requests. Both follow from a pilot: its discordant-pair
rates (how often exactly one of ``full`` and a variant is right) and its requests and tokens per
item. Method and its check against simulation: ``docs/statistics.md`` ("Planning a Table 3").

The test is the one the table uses: the exact two-sided McNemar test of one seed's paired items
(``metrics.stats.mcnemar_exact``). The sample size is Connor's (1987) normal approximation for
McNemar with the pilot's total discordance ψ held fixed; ``simulated_power`` checks it by drawing
paired outcomes and running the exact test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from statistics import NormalDist

import numpy as np

ALPHA = 0.05
POWER = 0.80


@dataclass(frozen=True)
class Discordance:
    """Paired outcomes of ``full`` and a variant: the share of pairs where only full is right
    (``p_full``) and where only the variant is right (``p_variant``), over ``pairs`` pairs."""

    p_full: float
    p_variant: float
    pairs: int

    @classmethod
    def from_counts(cls, only_full: int, only_variant: int, pairs: int) -> Discordance:
        if pairs <= 0:
            return cls(0.0, 0.0, 0)
        return cls(only_full / pairs, only_variant / pairs, pairs)

    @property
    def psi(self) -> float:
        """Total discordance: the share of pairs the two disagree on."""
        return self.p_full + self.p_variant

    @property
    def delta(self) -> float:
        """Accuracy difference variant − full (a proportion)."""
        return self.p_variant - self.p_full


def _psi_for(psi: float, delta: float) -> float:
    """A difference of Δ needs at least |Δ| discordance: the pilot's ψ, raised to |Δ| if smaller."""
    return max(psi, abs(delta))


def mcnemar_sample_size(psi: float, delta: float, alpha: float = ALPHA, power: float = POWER) -> int | None:
    """Paired items needed to detect ``delta`` (a proportion) with the two-sided McNemar test:
    n = (z_{1−α/2}·√ψ + z_{power}·√(ψ − Δ²))² / Δ² (Connor 1987). None for Δ = 0."""
    if delta == 0:
        return None
    psi = _psi_for(psi, delta)
    za, zb = NormalDist().inv_cdf(1 - alpha / 2), NormalDist().inv_cdf(power)
    return math.ceil(
        (za * math.sqrt(psi) + zb * math.sqrt(max(psi - delta * delta, 0.0))) ** 2 / (delta * delta)
    )


def mcnemar_power(n: int, psi: float, delta: float, alpha: float = ALPHA) -> float:
    """Approximate power of the two-sided McNemar test with ``n`` pairs (the inverse of the above)."""
    if n <= 0 or delta == 0:
        return alpha
    psi = _psi_for(psi, delta)
    za = NormalDist().inv_cdf(1 - alpha / 2)
    spread = math.sqrt(max(psi - delta * delta, 1e-12))
    z = (abs(delta) * math.sqrt(n) - za * math.sqrt(psi)) / spread
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


def smallest_detectable_delta(n: int, psi: float, alpha: float = ALPHA, power: float = POWER) -> float | None:
    """The smallest |Δ| (a proportion) detected with probability ``power`` by ``n`` pairs when the
    discordance is ψ (raised to Δ where Δ exceeds it); None when even Δ = 1 is not."""
    if n <= 0 or mcnemar_power(n, psi, 1.0, alpha) < power:
        return None
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if mcnemar_power(n, psi, mid, alpha) >= power:
            hi = mid
        else:
            lo = mid
    return hi


def exact_rejects(b: np.ndarray, c: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """Vectorised exact two-sided McNemar (as ``stats.mcnemar_exact``): p = min(1, 2·P(X ≤ min(b, c)))
    with X ~ Binomial(b + c, ½); True where p < α."""
    out = np.zeros(len(b), dtype=bool)
    cache: dict[int, np.ndarray] = {}
    for i, (x, y) in enumerate(zip(b.tolist(), c.tolist(), strict=True)):
        n = x + y
        if n == 0:
            continue
        if n not in cache:
            logp = [
                math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) - n * math.log(2)
                for k in range(n + 1)
            ]
            cache[n] = np.cumsum(np.exp(logp))
        out[i] = min(1.0, 2.0 * float(cache[n][min(x, y)])) < alpha
    return out


def simulated_power(
    n: int, p_full: float, p_variant: float, alpha: float = ALPHA, trials: int = 2000, seed: int = 0
) -> float:
    """Share of ``trials`` simulated experiments of ``n`` paired items (each pair: only full right
    with ``p_full``, only the variant with ``p_variant``, else concordant) in which the exact
    McNemar test rejects at ``alpha``."""
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, [p_full, p_variant, max(0.0, 1.0 - p_full - p_variant)], size=trials)
    return float(exact_rejects(draws[:, 0], draws[:, 1], alpha).mean())


@dataclass
class Cost:
    """Model requests and tokens. ``made``: calls the agent made; ``sent``: distinct requests that
    reach a server with a sweep-shared cache; tokens are those of the sent requests."""

    made: float = 0.0
    sent: float = 0.0
    prompt_tokens: float = 0.0
    cached_prompt_tokens: float = 0.0  # prefix-cache hits the server reported (0 if it reports none)
    completion_tokens: float = 0.0
    model_seconds: float = 0.0  # sum of the sent requests' latencies

    @property
    def uncached_prompt_tokens(self) -> float:
        return self.prompt_tokens - self.cached_prompt_tokens

    @property
    def processed_tokens(self) -> float:
        """What a server computes: uncached prompt tokens (prefill) + generated tokens (decode)."""
        return self.uncached_prompt_tokens + self.completion_tokens

    def scaled(self, factor: float) -> Cost:
        return Cost(**{f.name: getattr(self, f.name) * factor for f in fields(self)})

    def __add__(self, other: Cost) -> Cost:
        return Cost(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})


def gpu_hours(cost: Cost, tokens_per_s: float) -> float:
    """Hours of one server at ``tokens_per_s`` processed tokens a second."""
    return cost.processed_tokens / tokens_per_s / 3600.0 if tokens_per_s > 0 else float("nan")
