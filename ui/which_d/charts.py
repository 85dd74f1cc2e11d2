"""Altair builders of the "Which d?" page (conventions: :mod:`ui.common.charts`).

Encodings are channel objects with field= and type= (alt.X(field=..., type=...),
alt.XValue, ...): Altair turns a shorthand string, alt.value() or alt.condition() into
one through a schema lookup, and parses shorthands against the data frame in to_dict —
milliseconds per channel each time a spec is built (once per distinct input:
:mod:`ui.common.specs`).
"""

from __future__ import annotations

import math

import altair as alt
import pandas as pd

from ui.common.axes import log_axis, positive_range
from ui.common.charts import (
    COLORS,
    MARKER_RULE,
    ChartText,
    chart_title,
    check_rows,
    legend_below,
    legend_colors,
)


def scale_lines(
    df: pd.DataFrame, text: ChartText, *, current: float, alt_entry: str = "alt"
) -> alt.LayerChart:
    """A statistic against an input scale on log–log axes, one line per series, with
    dashed theory lines and a rule at the current scale.

    Parameters
    ----------
    df : DataFrame
        One row per (series, scale): ``scale`` (> 0), ``series`` (legend label),
        ``color`` (hex, one per series), ``value`` (> 0), ``theory`` (> 0).
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``; ``tips``: ``series`` (the legend field),
        ``theory`` (the theory value).
    current : float
        The scale marked with a vertical rule.
    alt_entry : str
        The entry of ``text`` that describes the chart (``alt``, or a variant such as
        ``alt_one_dim`` for data that lack a series).
    """
    check_rows(df)
    x_title, y_title, tips = text.x, text.y, text.tips
    theory_title = tips["theory"]
    order, colors = legend_colors(df, "series")
    color = alt.Color(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(domain=order, range=colors),
        legend=legend_below(order),
    )
    # labels at every other power of two, counted from s = 1 (the default, where the
    # marker starts): with a label at every scale, a phone's axis kept every other one
    # counted from the smallest, and s = 1 had none
    scales = sorted(float(s) for s in df["scale"].unique())
    ticks = [s for s in scales if round(math.log2(s)) % 2 == 0] or scales
    x = alt.X(
        "scale:Q",
        title=x_title,
        scale=alt.Scale(type="log", base=2),
        axis=alt.Axis(values=ticks, format="~g", grid=False),
    )
    y_scale = alt.Scale(type="log")
    # the plot takes about 200 of the chart's 320 px
    y_axis = log_axis(*positive_range(df["value"], df["theory"]), length=200)
    tooltip = [
        alt.Tooltip(field="series", type="nominal", title=tips["series"]),
        alt.Tooltip(field="scale", type="quantitative", title=x_title, format=".3~g"),
        alt.Tooltip(field="value", type="quantitative", title=y_title, format=".4g"),
        alt.Tooltip(field="theory", type="quantitative", title=theory_title, format=".4g"),
    ]
    base = alt.Chart()  # line and theory share the top-level data
    line = base.mark_line(point=True, strokeWidth=2.5).encode(
        x=x,
        y=alt.Y(field="value", type="quantitative", scale=y_scale, title=y_title, axis=y_axis),
        color=color,
        tooltip=tooltip,
    )
    theory = base.mark_line(color=COLORS["theory"], strokeDash=[5, 4], strokeWidth=1.2).encode(
        x=x,
        y=alt.Y(field="theory", type="quantitative", scale=y_scale, title=y_title, axis=y_axis),
        detail=alt.Detail(field="series", type="nominal"),
        tooltip=[tooltip[0], tooltip[1], tooltip[3]],
    )
    marker = (
        alt.Chart(pd.DataFrame({"scale": [current]}))
        .mark_rule(**MARKER_RULE)
        .encode(
            x=alt.X(field="scale", type="quantitative"),
            tooltip=[alt.Tooltip(field="scale", type="quantitative", title=x_title, format=".3~g")],
        )
    )
    return alt.layer(
        line,
        theory,
        marker,
        data=df.drop(columns="color"),
        title=chart_title(text.title),
        description=text[alt_entry],
        height=320,
    )
