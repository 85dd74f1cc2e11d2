"""Altair builders of the story's answers at initialisation: each page's chart that answers
its question, drawn by the page and, in small, by the recap (conventions:
:mod:`ui.common.charts`).

Variance against d_k (variance), the mean largest weight against d_k (saturation), the
share of dead rows against d_k (gradients), the logits' spread against d_k (√d_k vs d_k)
and the logit std per divisor (which d). The trained models' answers are in
:mod:`ui.story.trained_charts`.
"""

from __future__ import annotations

import re

import altair as alt
import pandas as pd

from ui.common.axes import log_axis, positive_range
from ui.common.charts import (
    COLORS,
    D_K,
    HALF_SUBTITLE_LINE_COLUMNS,
    ChartText,
    band_tooltip,
    chart_title,
    check_rows,
    legend_below,
    legend_colors,
    own_data,
    sweep_lines,
    text_columns,
)
from ui.common.marks import SHAPES, shaped


# --- variance ---------------------------------------------------------------------------
def variance_sweep(df: pd.DataFrame, text: ChartText) -> alt.LayerChart:
    """Empirical Var(q·k) and Var(q·k/√d_k) against d_k on log–log axes (the learner's
    d_k: ``marker=``).

    Parameters
    ----------
    df : DataFrame
        Rows per (d_k, series): ``d``, ``series`` (legend label), ``var``, ``lo``,
        ``hi`` (95 % interval), ``theory``.
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``; ``series_raw`` and ``series_scaled``: the
        unscaled and the scaled series' labels (drawn as vermillion circles and blue
        squares); ``tips``:
        ``series``, ``value`` (the variance), ``lo``, ``hi`` (the interval's ends),
        ``theory``.
    """
    check_rows(df)
    x_title, y_title, tips = text.x, text.y, text.tips
    series_order = (text["series_raw"], text["series_scaled"])
    x = alt.X("d:Q", title=x_title, scale=alt.Scale(type="log", base=2))
    y_scale = alt.Scale(type="log")
    # the plot takes about 200 of the chart's 320 px
    y_axis = log_axis(*positive_range(df["lo"], df["hi"], df["theory"]), length=200)
    series = alt.Color(
        "series:N",
        title=None,
        scale=alt.Scale(domain=list(series_order), range=[COLORS["unscaled"], COLORS["sqrt"]]),
        legend=legend_below(series_order),
    )
    # told apart by shape too, not only by hue
    shape = alt.Shape(
        "series:N",
        title=None,
        scale=alt.Scale(domain=list(series_order), range=["circle", "square"]),
        legend=series["legend"],
    )
    theory_tip = alt.Tooltip("theory:Q", title=tips["theory"], format=".4g")
    tooltip = band_tooltip(tips, "var", theory_tip)
    # each layer names the one dataset itself, the chart's shape with the d_k marker's own
    # data layered on: Altair lifts a frame object that every layer shares to the top
    # level, so the theory line gets an equal copy
    base = alt.Chart(df)
    theory = (
        alt.Chart(df.copy(deep=False))
        .mark_line(color=COLORS["theory"], strokeDash=[4, 3], strokeWidth=1.5)
        .encode(
            x=x,
            y=alt.Y("theory:Q", scale=y_scale, title=y_title, axis=y_axis),
            detail=alt.Detail("series:N"),
            tooltip=[
                alt.Tooltip("series:N", title=tips["series"]),
                alt.Tooltip("d:Q", title=D_K, format="d"),
                theory_tip,
            ],
        )
    )
    bars = base.mark_rule(strokeWidth=2).encode(
        x=x, y=alt.Y("lo:Q", scale=y_scale), y2=alt.Y2("hi:Q"), color=series, tooltip=tooltip
    )
    points = base.mark_point(filled=True, size=50).encode(
        x=x,
        y=alt.Y("var:Q", scale=y_scale, title=y_title, axis=y_axis),
        color=series,
        shape=shape,
        tooltip=tooltip,
    )
    return alt.layer(
        theory,
        bars,
        points,
        title=chart_title(text.title),
        description=text.description,
        height=320,
    )


# --- saturation -------------------------------------------------------------------------
#: Each scaling's point shape and line dash, by its colour
#: (:func:`ui.common.charts.alpha_color`): its series is told apart by more than its hue,
#: where lines cross or lie on top of each other.
SERIES_SHAPES = {
    COLORS["unscaled"]: "circle",
    COLORS["sqrt"]: "square",
    COLORS["linear"]: "triangle-up",
    COLORS["custom"]: "diamond",
}


SERIES_DASHES = {
    COLORS["unscaled"]: [1, 0],
    COLORS["sqrt"]: [6, 3],
    COLORS["linear"]: [2, 2],
    COLORS["custom"]: [8, 3, 2, 3],
}


def series_channels(
    df: pd.DataFrame, legend: alt.Legend, *, dash: bool = True
) -> dict[str, alt.Shape | alt.StrokeDash]:
    """The ``shape`` (and with ``dash`` the ``strokeDash``) encodings of ``df``'s
    ``series`` by the scaling's colour (:data:`SERIES_SHAPES`, :data:`SERIES_DASHES`). The shape shares
    the colour encoding's ``legend``, so that the legend is one, its symbols in shape and
    hue (a dashed outline around a symbol reads badly: the dash stays on the lines)."""
    order, colors = legend_colors(df, "series")
    common = {"title": None, "sort": order}
    channels = {
        "shape": alt.Shape(
            "series:N",
            scale=alt.Scale(domain=order, range=[SERIES_SHAPES[c] for c in colors]),
            legend=legend,
            **common,
        )
    }
    if dash:
        channels["strokeDash"] = alt.StrokeDash(
            "series:N",
            scale=alt.Scale(domain=order, range=[SERIES_DASHES[c] for c in colors]),
            legend=None,
            **common,
        )
    return channels


def saturation_sweep_lines(
    frames: tuple[pd.DataFrame, pd.DataFrame], text: ChartText, *, y_domain: tuple[float, float]
) -> alt.LayerChart:
    """:func:`sweep_lines` of ``frames`` (the sweep, its reference lines) made taller (its
    legend sits below the plot, inside the height), with full-strength legend symbols and
    each scaling in its own dash and point shape (:func:`series_channels`)."""
    df, reference = frames
    chart = sweep_lines(df, text, y_domain=y_domain, reference=reference)
    chart.height = 380  # set in place: .properties() would copy and re-merge every layer
    # in place too (.configure_legend would copy): else the legend takes the bands' fill
    # filled symbols without the lines' dashed outline
    chart.config = alt.Config(legend=alt.LegendConfig(symbolOpacity=1, symbolStrokeWidth=0))
    line = chart.layer[1]  # the band, then the line with its points
    chart.layer[1] = line.encode(**series_channels(df, line.encoding.color["legend"]))
    return chart


# --- gradients --------------------------------------------------------------------------
def dead_share_lines(df: pd.DataFrame, text: ChartText) -> alt.LayerChart:
    """The share of dead rows against d_k (:func:`sweep_lines` on a 0–1 axis, half width).

    Parameters
    ----------
    df : DataFrame
        One row per (series, d_k): ``d``, ``series``, ``color``, ``value`` (share of rows
        with ‖J‖_F < 10⁻³), ``lo``, ``hi`` (±2 s.e., within [0, 1]).
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``; ``tips``: ``series``, ``lo``, ``hi``.
    """
    # hollow points of a shape per series: 1/√d_k and 1/d_k both lie at 0, one on the other
    return shaped(own_data(sweep_lines(df, text, y_domain=(0, 1), legend_columns=2, height=360)))


# --- √d_k vs d_k --------------------------------------------------------------------------
#: Height of a half-width chart's plot, px (without its title, axes and legend).
HALF_PLOT_PX = 220


#: Legend entries per row of a half-width chart: it cannot fit four Chinese α labels in
#: one row (beside the open sidebar it takes one a row).
HALF_LEGEND_COLUMNS = 2


def half_width(chart: alt.LayerChart) -> alt.LayerChart:
    """``chart`` sized for half the page, changed in place: the plot :data:`HALF_PLOT_PX`
    tall, with the title and legend below and above it adding to the chart's height
    (fitted into one fixed height, a four-row legend left a plot a few dozen pixels
    tall), and full-strength legend symbols (a legend otherwise takes its band's
    opacity)."""
    chart.height = HALF_PLOT_PX
    chart.autosize = alt.AutoSizeParams(type="fit-x", contains="padding")
    chart.config = alt.Config(legend=alt.LegendConfig(symbolOpacity=1))
    return chart


def logit_scale(df: pd.DataFrame, text: ChartText) -> alt.LayerChart:
    """Measured points with error bars and theory lines against d_k, log–log, per series,
    drawn half width (:func:`half_width`).

    Parameters
    ----------
    df : DataFrame
        One row per (series, d_k): ``d``, ``series`` (legend label), ``color`` (hex, one
        per series), ``value`` (measured, > 0), ``lo``, ``hi`` (error bar, > 0),
        ``theory`` (> 0).
    text : ChartText
        ``title``, ``subtitle`` (which marks are measured and which are theory), ``x``,
        ``y`` (also the measured value's tooltip title), ``alt``; ``tips``: ``series``,
        ``lo``, ``hi`` (the error bar's ends), ``theory`` (the theory value).
    """
    check_rows(df)
    x_title, y_title, tips = text.x, text.y, text.tips
    order, colors = legend_colors(df, "series")
    legend = legend_below(order, columns=HALF_LEGEND_COLUMNS)
    color = alt.Color(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(domain=order, range=colors),
        legend=legend,
    )
    x = alt.X("d:Q", title=x_title, scale=alt.Scale(type="log", base=2))
    y_scale = alt.Scale(type="log")
    y_axis = log_axis(*positive_range(df["lo"], df["hi"], df["theory"]), length=HALF_PLOT_PX)
    theory_tip = alt.Tooltip("theory:Q", title=tips["theory"], format=".4g")
    tooltip = band_tooltip({"value": y_title, **tips}, "value", theory_tip)
    base = alt.Chart(df.drop(columns="color"))
    theory = base.mark_line(strokeWidth=1.5, opacity=0.75).encode(
        x=x,
        y=alt.Y("theory:Q", scale=y_scale, title=y_title, axis=y_axis),
        color=color,
        tooltip=[tooltip[0], tooltip[1], theory_tip],
    )
    bars = base.mark_rule(strokeWidth=2).encode(
        x=x, y=alt.Y("lo:Q", scale=y_scale), y2=alt.Y2("hi:Q"), color=color, tooltip=tooltip
    )
    shapes = [SHAPES.get(c, ("circle", 60))[0] for c in colors]  # told apart by more than hue
    points = base.mark_point(filled=True, size=45, opacity=1).encode(
        x=x,
        y=alt.Y("value:Q", scale=y_scale, title=y_title, axis=y_axis),
        color=color,
        shape=alt.Shape(
            "series:N", title=None, sort=order, scale=alt.Scale(domain=order, range=shapes),
            legend=legend,
        ),
        tooltip=tooltip,
    )  # fmt: skip
    chart = alt.layer(
        theory,
        bars,
        points,
        # drawn half width: two side by side
        title=chart_title(text.title, text.subtitle, subtitle_columns=HALF_SUBTITLE_LINE_COLUMNS),
        description=text.description,
    )
    return half_width(own_data(chart))


# --- which d ----------------------------------------------------------------------------
#: Width of one column of axis label text, px, with room to spare (10 px labels; 15 px
#: when presenting).
AXIS_PX_PER_COLUMN = 7.5


#: Space between two labels, px.
AXIS_LABEL_GAP_PX = 8


#: Where a divisor label breaks on a narrow plot, in order: before its `` = `` (``÷√d_q``
#: over ``= ÷22.6``), before its bracket (``none`` over ``(÷1)``, ``不除`` over ``（÷1）``).
LABEL_BREAKS = (" = ", " (", "（")


def _two_line_labels(labels: list[str]) -> str:
    """An axis ``labelExpr`` that breaks each divisor label in two (:data:`LABEL_BREAKS`)
    when the plot is too narrow for every label on one line: the first lines are then
    short enough to sit side by side (a half-width chart beside the open sidebar; the
    axis draws every label, none dropped as overlapping).

    The same for every value a label prints (its numbers count as four columns, the most
    a divisor of three significant digits takes), so that one spec serves every input."""
    widest = max(text_columns(re.sub(r"\d+(?:\.\d+)?", "00.0", label)) for label in labels)
    need = round(len(labels) * (widest * AXIS_PX_PER_COLUMN + AXIS_LABEL_GAP_PX))
    expr = "datum.label"
    for mark in reversed(LABEL_BREAKS):
        cut = f"indexof(datum.label, '{mark}')"
        skip = 1 if mark.startswith(" ") else 0  # the space goes with the break
        lines = f"[slice(datum.label, 0, {cut}), slice(datum.label, {cut} + {skip})]"
        expr = f"{cut} > 0 ? {lines} : {expr}"
    return f"width < {need} ? ({expr}) : datum.label"


def divisor_bars(
    frames: tuple[pd.DataFrame, pd.DataFrame],
    text: ChartText,
    *,
    value: str,
    theory: bool = True,
    value_labels: bool = True,
    reference_y: float | None = None,
    unit_y: bool = False,
) -> alt.LayerChart:
    """One bar per divisor (mean over heads), each head as a dot, theory as a black tick.

    It draws its frames as they are: the order, colours, highlight and value positions
    come from their columns, and the axis's line breaks from the shape of the labels (a
    number counted as four columns, :func:`_two_line_labels`), so one spec serves every
    input (``workshop.chart(..., swap_data=True)``).

    Parameters
    ----------
    frames : (DataFrame, DataFrame)
        ``points``, one row per (divisor, head): ``label``, ``head``, the column
        ``value`` and ``rank`` (its bar's place; first: the chart's CSV); and ``bars``,
        one row per divisor (:func:`ui.story.data.divisor_frames`): ``rank`` (its place
        from the left), ``label`` (axis text),
        ``color`` (hex), ``opacity`` and ``outline`` (the highlighted bar), the column
        ``value``, ``top_<value>`` (where its value is printed) and, with ``theory``,
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
    unit_y : bool
        A y-axis from 0 to 1: every value is 0 (W_q = 0), and a degenerate range would
        draw no axis.

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
    # in the order of their rank: with no sort, Vega keeps the order labels first came
    # in, and a label that changes as the data is swapped in place goes last
    x = alt.X(
        field="label",
        type="nominal",
        title=x_title,
        sort=alt.EncodingSortField(field="rank", op="min"),
        axis=alt.Axis(
            labelAngle=0,
            labelLimit=220,
            labelOverlap=False,
            labelExpr=_two_line_labels(list(bars["label"])),
        ),
    )
    y_scale = alt.Scale(domain=[0, 1]) if unit_y else alt.Scale(zero=True)
    y = alt.Y(field=value, type="quantitative", title=y_title, scale=y_scale)
    value_tip = alt.Tooltip(field=value, type="quantitative", title=y_title, format=".4g")
    divisor_tip = alt.Tooltip(field="label", type="nominal", title=x_title)
    marks = [
        alt.Chart()
        .mark_bar(stroke=COLORS["theory"])
        .encode(
            color=alt.Color(field="color", type="nominal", scale=None, legend=None),
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
                y=alt.Y(field=f"top_{value}", type="quantitative"),
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
        return alt.layer(*marks, data=bars, encoding=shared, **options)
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
    return alt.layer(alt.layer(*marks, data=bars, encoding=shared), rule, **options)
