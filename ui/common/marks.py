"""Series told apart by more than their hue: hollow points of a shape and size per series.

A chart with lines against d_k (:func:`ui.common.charts.sweep_lines`) colours each scaling
exponent; :func:`shaped` adds a shape and a size to its points, from the series' colour
(:data:`SHAPES`), and puts the shapes in the colour's legend. Hollow and of different
sizes, two series lying on one another (two shares at 0) both stay visible, one ring
around the other.
"""

from __future__ import annotations

import altair as alt

from ui.common.charts import COLORS

#: Point shape and size (px²) of each series colour.
SHAPES = {
    COLORS["unscaled"]: ("triangle-up", 60),
    COLORS["sqrt"]: ("circle", 120),
    COLORS["linear"]: ("square", 30),
    COLORS["custom"]: ("diamond", 70),
}


def shaped(chart: alt.LayerChart, line: int = 1) -> alt.LayerChart:
    """``chart`` with its layer ``line`` (a line with points over a frame with ``series``
    and ``color``, as :func:`ui.common.charts.band_and_line` makes it) drawn without
    points, and hollow points of a shape and size per series layered right above it;
    changed in place.
    """
    layer = chart.layer[line]
    enc = layer.encoding
    color = enc.color.to_dict()  # its scale's domain (the series) and range (their colours)
    order, legend = color["scale"]["domain"], alt.Legend(**color["legend"])
    if len(order) < 2:  # one series: nothing to tell apart
        return chart
    shapes, sizes = zip(
        *(SHAPES.get(c, ("circle", 60)) for c in color["scale"]["range"]), strict=True
    )
    points = (
        alt.Chart(layer.data)
        .mark_point(filled=False, strokeWidth=1.5, opacity=1)
        .encode(
            x=enc.x, y=enc.y, color=enc.color, tooltip=enc.tooltip,
            shape=alt.Shape("series:N", title=None, sort=order, legend=legend,
                            scale=alt.Scale(domain=order, range=list(shapes))),
            size=alt.Size("series:N", sort=order, legend=None,
                          scale=alt.Scale(domain=order, range=list(sizes))),
        )
    )  # fmt: skip
    chart.layer[line] = layer.mark_line(strokeWidth=2)
    chart.layer.insert(line + 1, points)
    return chart
