"""Progress bar with running accuracy; tqdm supplies rate and ETA."""

from __future__ import annotations

import sys

from tqdm.auto import tqdm

from ledgermind.experiment.results import ItemResult


class Progress:
    """Counts resumed items too, so the bar and the accuracy describe the whole run."""

    def __init__(self, total: int, previous: list[ItemResult], *, enabled: bool = True, desc: str = "items") -> None:
        self.n = len(previous)
        self.score_sum = sum(r.score for r in previous if r.error is None)
        self.errors = sum(1 for r in previous if r.error)
        self._bar = tqdm(
            total=total,
            initial=self.n,
            desc=desc,
            unit="item",
            disable=not enabled,
            file=sys.stderr,
            dynamic_ncols=True,
        )
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
        self._bar.update(1)
        self._refresh()

    def _refresh(self) -> None:
        postfix = {"acc": f"{100 * self.accuracy:.1f}%"}
        if self.errors:
            postfix["err"] = str(self.errors)
        self._bar.set_postfix(postfix, refresh=False)

    def close(self) -> None:
        self._bar.close()
