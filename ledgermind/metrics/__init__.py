"""Trajectory faithfulness metrics (paper §3.4, App. F)."""

from ledgermind.metrics.faithfulness import (
    METRICS,
    eur,
    gdr,
    oc_err,
    per_trajectory,
    r4r,
    rc,
    rr,
    se,
    summarize,
    ucr_reason,
    wdg,
)

__all__ = [
    "METRICS",
    "eur",
    "gdr",
    "oc_err",
    "per_trajectory",
    "r4r",
    "rc",
    "rr",
    "se",
    "summarize",
    "ucr_reason",
    "wdg",
]
