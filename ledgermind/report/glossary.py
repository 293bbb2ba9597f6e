"""One definition per metric name, with its direction, for the run page's hover titles and glossary.

Why read from ``ledgermind.metrics.faithfulness``: the docstring of the function that computes a
metric is its definition (equation, meaning, ↑/↓); copying it here would let the page and the code
drift apart. Only what a docstring does not say (the direction of RC and SE, the cost summaries)
is written here.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from ledgermind.metrics import faithfulness as tm

HIGHER, LOWER = "higher is better", "lower is better"

# metric name -> the function whose docstring defines it (metrics/faithfulness.py)
DEFINED_BY = {
    "UCR_reason": tm.ucr_reason,
    "GDR": tm.gdr,
    "R4R": tm.r4r,
    "WDG": tm.wdg,
    "OCErr": tm.oc_err,
    "EUR": tm.eur,
    "RR": tm.rr,
    "RC": tm.rc,
    "SE": tm.se,
}
DIRECTION_NOT_IN_DOCSTRING = {"RC": LOWER, "SE": HIGHER}
# the run's cost summaries (``metrics.json`` keys), in the order the run page lists them
COST_SUMMARIES = {
    "model_calls_per_item": ("model requests actually sent, per item", LOWER),
    "tool_calls_per_item": ("tool outputs recorded in the ledger, per item", LOWER),
    "tokens_per_item": ("prompt + completion tokens, per item", LOWER),
    "latency_s_per_item": ("wall-clock seconds of model calls, per item", LOWER),
    "wall_time_s": ("wall-clock seconds of the run", LOWER),
}
OTHER = {
    "gamma": ("γ, the decision-grounding threshold of R4R and WDG (§3.4)", ""),
    "n": ("items the trajectory metrics were averaged over", ""),
    **COST_SUMMARIES,
}


@dataclass(frozen=True)
class Definition:
    name: str
    text: str
    direction: str  # HIGHER / LOWER / "" (not a quality)

    @property
    def title(self) -> str:
        """The hover text: definition, then direction."""
        return f"{self.name}: {self.text}" + (f" ({self.direction})" if self.direction else "")


def definition(name: str) -> Definition | None:
    if name in DEFINED_BY:
        doc = " ".join((inspect.getdoc(DEFINED_BY[name]) or "").split("\n\n")[0].split())
        direction = (
            HIGHER if "(↑)" in doc else LOWER if "(↓)" in doc else DIRECTION_NOT_IN_DOCSTRING.get(name, "")
        )
        return Definition(name, doc.replace(" (↑)", "").replace(" (↓)", ""), direction)
    return Definition(name, *OTHER[name]) if name in OTHER else None


def glossary(names: list[str]) -> list[Definition]:
    """The definitions of the given metric names that have one, in the given order."""
    return [d for d in map(definition, names) if d is not None]
