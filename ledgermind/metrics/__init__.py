"""Trajectory faithfulness metrics (paper §3.4, App. F)."""

from ledgermind.metrics.faithfulness import summarize

__all__ = ["summarize"]
