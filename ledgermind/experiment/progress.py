"""Progress bar with running accuracy; tqdm supplies rate and ETA.

A Hydra multirun whose jobs run one after the other in this process (the basic launcher, e.g.
``make table3-sim``) gets ONE bar over the whole sweep (jobs × items) with one ETA, instead of a
bar per job that says nothing about when the sweep ends (``start_sweep``, called by ``scripts/run.py``).
"""

from __future__ import annotations

import sys
from typing import Any

from tqdm.auto import tqdm

from ledgermind.runs.results import ItemResult


def _tqdm(**kwargs: Any) -> Any:
    return tqdm(unit="item", file=sys.stderr, dynamic_ncols=True, **kwargs)


class SweepBar:
    """The one bar of a sweep: its total is jobs × items (re-estimated as each job reports its size)."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.sizes: list[int] = []  # items of each job started so far
        self.bar: Any = None

    def join(self, n_items: int, done: int) -> Any:
        """A job starts: its ``done`` (resumed) items count as progress already made."""
        self.sizes.append(n_items)
        started = len(self.sizes)
        total = sum(self.sizes) + n_items * max(self.jobs - started, 0)  # later jobs sized like this one
        if self.bar is None:
            self.bar = _tqdm(total=total, desc="sweep")
        self.bar.total = total
        self.bar.update(done)
        self.bar.set_description(f"sweep job {started}/{self.jobs}", refresh=False)
        return self.bar

    def leave(self) -> None:
        if len(self.sizes) >= self.jobs and self.bar is not None:
            self.bar.close()


_sweep: SweepBar | None = None


def start_sweep(jobs: int | None) -> None:
    """Announce a sweep of ``jobs`` jobs run in this process (None or 1: no sweep bar)."""
    global _sweep
    _sweep = SweepBar(jobs) if jobs and jobs > 1 else None


class Progress:
    """Counts resumed items too, so the bar and the accuracy describe the whole run."""

    def __init__(
        self, total: int, previous: list[ItemResult], *, enabled: bool = True, desc: str = "items"
    ) -> None:
        self.n = len(previous)
        self.score_sum = sum(r.score for r in previous if r.error is None)
        self.errors = sum(1 for r in previous if r.error)
        self._sweep = _sweep if enabled else None
        if self._sweep is not None:
            self._bar = self._sweep.join(total, self.n)
        else:
            self._bar = _tqdm(total=total, initial=self.n, desc=desc, disable=not enabled)
        self.desc = desc
        self._refresh()

    @property
    def accuracy(self) -> float:
        """Running accuracy over scored items: an errored item is not a wrong answer."""
        scored = self.n - self.errors
        return self.score_sum / scored if scored else 0.0

    def update(self, result: ItemResult) -> None:
        self.n += 1
        self.errors += result.error is not None
        self.score_sum += result.score if result.error is None else 0.0
        self._refresh()  # before the update, which draws the bar: the shown accuracy includes this item
        self._bar.update(1)

    def _refresh(self) -> None:
        postfix = {"acc": f"{100 * self.accuracy:.1f}%"}
        if self._sweep is not None:
            postfix = {"job": self.desc, **postfix}
        if self.errors:
            postfix["err"] = str(self.errors)
        self._bar.set_postfix(postfix, refresh=False)

    def close(self) -> None:
        if self._sweep is not None:
            self._sweep.leave()
        else:
            self._bar.close()
