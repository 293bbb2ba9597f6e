"""Small bar charts as inline SVG geometry (no chart library, no network, no script).

Python computes every coordinate; the template only writes ``<rect>``/``<text>`` elements, so
labels (which may be dataset text such as a question type) go through autoescaping like
everything else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

BAR_W, GAP, PLOT_H, TOP, BOTTOM, LEFT = 34, 14, 120, 18, 46, 8
LEGEND_STEP = 110  # px between series names in a legend (the template writes them at 8 + k·LEGEND_STEP)
LEGEND_TEXT = 90  # px a series name may take


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    text: str
    x: float
    y: float
    w: float
    h: float
    series: int = 0
    label_x: float = 0.0  # centre of the bar group, where the group label goes


@dataclass(frozen=True)
class Chart:
    id: str
    title: str
    width: int
    height: int
    bars: list[Bar]
    baseline: float
    series_names: tuple[str, ...] = ()


def bar_chart(
    chart_id: str,
    title: str,
    data: Sequence[tuple[str, Sequence[float]]],
    *,
    series_names: Sequence[str] = ("",),
    max_value: float | None = None,
    fmt: str = "{:g}",
    bar_w: int = BAR_W,
) -> Chart:
    """``data``: (group label, one value per series). Zero bars are kept (drawn flat) on purpose."""
    n_series = max(1, len(series_names))
    top = (max_value if max_value is not None else max((v for _, vs in data for v in vs), default=0.0)) or 1.0
    group_w = n_series * bar_w + GAP
    bars = []
    for gi, (label, values) in enumerate(data):
        for si, v in enumerate(values):
            h = PLOT_H * max(0.0, float(v)) / top
            x = LEFT + gi * group_w + si * bar_w
            centre = LEFT + gi * group_w + (n_series * bar_w - 4) / 2
            bars.append(
                Bar(str(label), float(v), fmt.format(v), x, TOP + PLOT_H - h, bar_w - 4, h, si, centre)
            )
    width = int(LEFT * 2 + max(1, len(data)) * group_w)
    if n_series > 1:  # the legend must fit: the last name starts at 8 + (n − 1)·LEGEND_STEP
        width = max(width, 8 + (n_series - 1) * LEGEND_STEP + LEGEND_TEXT)
    return Chart(chart_id, title, width, TOP + PLOT_H + BOTTOM, bars, TOP + PLOT_H, tuple(series_names))
