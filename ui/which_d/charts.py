"""Altair builders of the "Which d?" page (conventions: :mod:`ui.common.charts`).

Encodings are channel objects with field= and type= (alt.X(field=..., type=...),
alt.XValue, ...): Altair turns a shorthand string, alt.value() or alt.condition() into
one through a schema lookup, and parses shorthands against the data frame in to_dict —
milliseconds per channel each time a spec is built (once per distinct input:
:mod:`ui.common.specs`).
"""

from __future__ import annotations

import json

import altair as alt
import numpy as np
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
    text_columns,
)

#: Width of one column of axis label text, px, with room to spare (10 px labels; 15 px
#: when presenting).
AXIS_PX_PER_COLUMN = 7.5
#: Space between two labels, px.
AXIS_LABEL_GAP_PX = 8


def _two_line_labels(labels: list[str]) -> str:
    """An axis ``labelExpr`` that breaks each divisor label at its `` = `` (``÷√d_q`` over
    ``= ÷22.6``) when the plot is too narrow for every label on one line: Vega would
    otherwise drop the labels that overlap (a half-width chart beside the open sidebar)."""
    widest = max(text_columns(label) for label in labels)
    need = round(len(labels) * (widest * AXIS_PX_PER_COLUMN + AXIS_LABEL_GAP_PX))
    expr = "datum.label"
    for label in labels:
        cut = label.find(" = ")
        if cut > 0:
            lines = json.dumps([label[:cut], label[cut + 1 :]], ensure_ascii=False)
            expr = f"datum.label === {json.dumps(label, ensure_ascii=False)} ? {lines} : {expr}"
    return f"width < {need} ? ({expr}) : datum.label"


def divisor_bars(
    frames: tuple[pd.DataFrame, pd.DataFrame],
    text: ChartText,
    *,
    value: str,
    theory: bool = True,
    value_labels: bool = True,
    reference_y: float | None = None,
) -> alt.LayerChart:
    """One bar per divisor (mean over heads), each head as a dot, theory as a black tick.

    Parameters
    ----------
    frames : (DataFrame, DataFrame)
        ``points``, one row per (divisor, head): ``label``, ``head`` and the column
        ``value`` (first: the chart's CSV); and ``bars``, one row per divisor, in
        display order: ``label`` (axis text), ``color`` (hex), ``selected`` (bool: drawn
        opaque with an outline), the column ``value`` and, with ``theory``,
        ``theory_std``.
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``; ``tips``: ``head`` (the head's number),
        ``theory`` (with ``theory``) and ``reference`` (with ``reference_y``); with
        ``reference_y``, ``reference``: the line's label.
    value : str
        The statistic shown, e.g. ``"std"`` or ``"entropy"``.
    theory : bool
        Draw ``theory_std`` as a black tick on each bar.
    value_labels : bool
        Print each bar's value above it.
    reference_y : float, optional
        A horizontal dashed reference line at this value, e.g. ln n_keys.

    Notes
    -----
    Each layer costs about 1.5 ms when the spec is built (once per distinct input): x
    and y are written once on the layer and inherited by its marks, which share its data.
    """
    points, bars = frames
    x_title, y_title, tips = text.x, text.y, text.tips
    head_title = tips["head"]
    check_rows(bars)
    check_rows(points)
    order = list(bars["label"])
    selected = bars["selected"].astype(bool)
    # each bar's value is printed above the highest of its bar, its heads' dots and its
    # theory tick: drawn on them, the text fell to 1.8:1 against the grey dots
    highest = points.groupby("label")[value].max().reindex(bars["label"]).to_numpy()
    above = np.fmax(bars[value].to_numpy(dtype=float), highest)
    if theory:
        above = np.fmax(above, bars["theory_std"].to_numpy(dtype=float))
    data = bars.drop(columns="color").assign(
        opacity=selected.map({True: 1.0, False: 0.45}),
        outline=selected.map({True: 2.5, False: 0.0}),
        label_y=above,
    )
    x = alt.X(
        field="label",
        type="nominal",
        title=x_title,
        sort=order,
        axis=alt.Axis(labelAngle=0, labelLimit=220, labelExpr=_two_line_labels(order)),
    )
    top = max(bars[value].max(), points[value].max(), bars["theory_std"].max() if theory else 0)
    # all zero (W_q = 0): give the axis a unit range instead of a degenerate one
    y_scale = alt.Scale(domain=[0, 1]) if not top > 0 else alt.Scale(zero=True)
    y = alt.Y(field=value, type="quantitative", title=y_title, scale=y_scale)
    value_tip = alt.Tooltip(field=value, type="quantitative", title=y_title, format=".4g")
    divisor_tip = alt.Tooltip(field="label", type="nominal", title=x_title)
    marks = [
        alt.Chart()
        .mark_bar(stroke=COLORS["theory"])
        .encode(
            color=alt.Color(
                field="label",
                type="nominal",
                scale=alt.Scale(domain=order, range=list(bars["color"])),
                legend=None,
            ),
            opacity=alt.Opacity(field="opacity", type="quantitative", scale=None, legend=None),
            strokeWidth=alt.StrokeWidth(
                field="outline", type="quantitative", scale=None, legend=None
            ),
            tooltip=[divisor_tip, value_tip],
        ),
        alt.Chart(points)
        .mark_circle(size=28, color=COLORS["theory"], opacity=0.55)
        .encode(
            tooltip=[
                divisor_tip,
                alt.Tooltip(field="head", type="quantitative", title=head_title, format="d"),
                value_tip,
            ]
        ),
    ]
    if value_labels:  # three significant digits without exponent: 0.354, 4,100
        marks.append(
            alt.Chart()
            .mark_text(dy=-9, fontWeight="bold", tooltip=False)
            .encode(
                y=alt.Y(field="label_y", type="quantitative"),
                text=alt.Text(field=value, type="quantitative", format=",.3~r"),
            )
        )
    if theory:
        marks.append(
            alt.Chart()
            .mark_tick(color=COLORS["theory"], thickness=2.5, size=46)
            .encode(
                y=alt.Y(field="theory_std", type="quantitative"),
                tooltip=[
                    divisor_tip,
                    alt.Tooltip(
                        field="theory_std", type="quantitative", title=tips["theory"], format=".4g"
                    ),
                ],
            )
        )
    options = {"title": chart_title(text.title), "description": text.description, "height": 280}
    shared = alt.FacetedEncoding(x=x, y=y)  # given to the constructor: .encode() copies
    if reference_y is None:
        return alt.layer(*marks, data=data, encoding=shared, **options)
    reference = pd.DataFrame({"y": [reference_y], "label": [text["reference"]]})
    rule = (
        alt.Chart(reference)
        .mark_rule(color=COLORS["theory"], strokeDash=[4, 3], strokeWidth=1.5)
        .encode(
            y=alt.Y(field="y", type="quantitative"),
            tooltip=[
                alt.Tooltip(field="label", type="nominal", title=tips["reference"]),
                alt.Tooltip(field="y", type="quantitative", title=y_title, format=".4g"),
            ],
        )
    )
    return alt.layer(alt.layer(*marks, data=data, encoding=shared), rule, **options)


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
    scales = sorted(float(s) for s in df["scale"].unique())
    x = alt.X(
        "scale:Q",
        title=x_title,
        scale=alt.Scale(type="log", base=2),
        axis=alt.Axis(values=scales, format="~g", grid=False),
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
