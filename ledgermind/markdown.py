"""The Markdown table every printed report uses (Table 3, the census, the sweeps, the benchmarks).

Why its own bottom-layer module: the readers that print tables sit in different layers (metrics,
experiment, simulator, scripts); one function keeps their tables in one form."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def md_table(
    head: Sequence[str], rows: Iterable[Sequence[object]], first: str = "---", rest: str = "---:"
) -> list[str]:
    """The lines of a table: the first column aligned by ``first``, the others by ``rest``."""
    lines = ["| " + " | ".join(map(str, r)) + " |" for r in [head, *rows]]
    return [lines[0], "|" + "|".join([first] + [rest] * (len(head) - 1)) + "|", *lines[1:]]
