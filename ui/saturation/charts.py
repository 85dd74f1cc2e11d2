"""Altair builders of the saturation page (conventions: :mod:`ui.common.charts`)."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from core.softmax import overflow_threshold
from ui.common.axes import log_axis
from ui.common.charts import (
    COLORS,
    D_K,
    MARKER_RULE,
    NARROW_CHART_PX,
    ChartText,
    cell_ink,
    chart_title,
    check_rows,
    gradient_legend_below,
    legend_above,
    legend_below,
    legend_colors,
)
from ui.common.expr import (
    Expr,
    bound_input,
    exp,
    field,
    live_layer,
    normal_cdf,
    param,
    power,
    vega_text,
    where,
)
from ui.story.charts import series_channels


def two_score_weight() -> Expr:
    """The weight of key k (field ``k``, 1 or 2) of softmax([z₁, z₂] / d), d = c for the
    divided version (field ``divided``) else 1, as the browser computes it from the
    sliders ``score_1``, ``score_2`` and ``divisor``: the logistic of the scaled gap for
    key 1, of minus it for key 2 (not 1 − p₁, which loses a tiny p₂).

    :func:`core.softmax.softmax` is the source of truth: tests/ui/saturation compares
    them. References: docs/mathematics.md §3.1.
    """
    gap = (param("score_1") - param("score_2")) / where(field("divided") > 0.5, param("divisor"), 1)
    return 1 / (1 + exp((2 * field("k") - 3) * gap))


#: Below this expected count n·Q of overflowing logits, the chance is n·Q itself (relative
#: error < (n − 1)·Q/2 < 5·10⁻⁷); above it 1 − (1 − Q)ⁿ has lost at most ~10⁻⁹ of its digits.
_SMALL_CHANCE = 1e-6
#: The overflow chart's y-axis floor: its smallest chance, 2·Q(11.09) at σ = 1 and 2 keys,
#: is 1.4·10⁻²⁸.
GAUSS_FLOOR = 1e-30
#: The Gaussian-limit chart's plot height, px.
GAUSS_PLOT_PX = 300


def gaussian_overflow() -> Expr:
    """The chance that a row of ``n`` (field) independent N(0, σ²) logits overflows a naive
    float16 softmax, σ from field ``fixed_std`` where it is positive, else from the slider
    ``logit_std``: 1 − (1 − Q)ⁿ with Q = Φ(−t/σ), t = ln 65504, as the browser computes it
    (n·Q where that is below :data:`_SMALL_CHANCE`: Vega has no expm1 or log1p).

    :func:`core.softmax.gaussian_overflow_chance` is the source of truth: tests/ui/saturation
    compares them. References: docs/mathematics.md §5.2.
    """
    std = where(field("fixed_std") > 0, field("fixed_std"), param("logit_std"))
    tail = normal_cdf(-overflow_threshold(np.float16) / std)
    n = field("n")
    return where(n * tail < _SMALL_CHANCE, n * tail, 1 - power(1 - tail, n))


def gaussian_overflow_lines(
    df: pd.DataFrame, text: ChartText, *, n_keys: int, inputs: tuple
) -> alt.LayerChart:
    """The chance that a row of Gaussian logits overflows float16, against n_keys (log
    axes), for σ = 1 (dashed: ÷√d_k, the limit of large d_k) and for the σ of the slider
    under the chart (``inputs``: the (key, label, lo, hi, step, value) of ``logit_std``,
    :func:`ui.common.live.live_chart`), computed in the browser
    (:func:`gaussian_overflow`); the page's ``n_keys`` marked by a rule, a point and its
    values above the plot.

    Parameters
    ----------
    df : DataFrame
        One row per (curve, n): ``n`` (keys), ``curve`` (legend label), ``fixed_std`` (σ
        of the curve, 0 for the slider's).
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``; ``yours`` and ``scaled`` (the two curves'
        labels); ``point``, the line of values at n_keys written by the browser: fields
        ``{s}`` (σ) and ``{p}`` (the chance), doubled braces in the catalog;
        ``tips.curve``.
    """
    check_rows(df)
    order = [text["yours"], text["scaled"]]
    keys = (float(df["n"].min()), float(df["n"].max()))
    x_axis = log_axis(*keys, length=NARROW_CHART_PX, orient="x")
    x = alt.X("n:Q", title=text.x, scale=alt.Scale(type="log", nice=False), axis=x_axis)
    y_scale = alt.Scale(type="log", domain=[GAUSS_FLOOR, 1])
    y_axis = log_axis(GAUSS_FLOOR, 1.0, length=GAUSS_PLOT_PX)
    chance = gaussian_overflow().vega
    lines = (
        alt.Chart(df)
        .transform_calculate(chance=chance)
        .mark_line(strokeWidth=2.5)
        .encode(
            x=x,
            y=alt.Y("chance:Q", title=text.y, scale=y_scale, axis=y_axis),
            color=alt.Color(
                "curve:N",
                title=None,
                sort=order,
                scale=alt.Scale(domain=order, range=[COLORS["unscaled"], COLORS["sqrt"]]),
                legend=legend_below(order, columns=1, symbolType="stroke"),
            ),
            strokeDash=alt.StrokeDash(
                "curve:N", sort=order, scale=alt.Scale(domain=order, range=[[1, 0], [6, 4]]),
                legend=None,
            ),
            tooltip=[
                alt.Tooltip("curve:N", title=text.tips["curve"]),
                alt.Tooltip("n:Q", title=text.x, format=",d"),
                alt.Tooltip("chance:Q", title=text.y, format=".3~e"),
            ],
        )
    )  # fmt: skip
    here = alt.Chart(alt.InlineData(values=[{"n": n_keys, "fixed_std": 0}])).transform_calculate(
        chance=chance, s=param("logit_std").vega
    )
    rule = here.mark_rule(**MARKER_RULE).encode(
        x=alt.X("n:Q"), tooltip=[alt.Tooltip("n:Q", title=text.x, format=",d")]
    )
    dot = here.mark_point(filled=True, size=70, color=COLORS["unscaled"], opacity=1).encode(
        x=alt.X("n:Q"),
        y=alt.Y("chance:Q", scale=y_scale),
        tooltip=[
            alt.Tooltip("n:Q", title=text.x, format=",d"),
            alt.Tooltip("chance:Q", title=text.y, format=".3~e"),
        ],
    )
    values = (
        here.transform_calculate(
            line=vega_text(text["point"], s=("s", ".2~f"), p=("chance", ".3~g"))
        )
        .mark_text(align="left", baseline="bottom", fontSize=12, tooltip=False)
        .encode(x=alt.value(0), y=alt.value(-6), text=alt.Text("line:N"))
    )  # fmt: skip  (above the plot, under the title: the curves reach every corner)
    return live_layer(lines, rule, dot, values, text=text, height=GAUSS_PLOT_PX, inputs=inputs)


def two_score_bars(df: pd.DataFrame, text: ChartText, *, inputs: tuple) -> alt.LayerChart:
    """Grouped bars of two softmaxes of the same two scores (raw and divided by c),
    labelled, computed in the browser (:func:`two_score_weight`) from the sliders under
    the chart: ``inputs``, (key, label, lo, hi, step, value) of ``score_1``, ``score_2``
    and ``divisor`` (:func:`ui.common.live.live_chart`).

    Parameters
    ----------
    df : DataFrame
        One row per (version, key): ``key`` (label, e.g. "key 1"), ``k`` (1 or 2),
        ``version`` (legend label), ``divided`` (0 raw, 1 divided), ``color`` (hex).
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``; ``tips.version``: the legend field's title.
    """
    check_rows(df)
    x_title, y_title, tips = text.x, text.y, text.tips
    order, colors = legend_colors(df, "version")
    x = alt.X("key:N", title=x_title, axis=alt.Axis(labelAngle=0))
    offset = alt.XOffset("version:N", sort=order)
    y = alt.Y("weight:Q", title=y_title, scale=alt.Scale(domain=[0, 1]))
    bars = (
        alt.Chart()
        .mark_bar()
        .encode(
            x=x,
            xOffset=offset,
            y=y,
            color=alt.Color(
                "version:N",
                title=None,
                sort=order,
                scale=alt.Scale(domain=order, range=colors),
                legend=legend_below(order, columns=1, symbolOpacity=1),
            ),
            tooltip=[
                alt.Tooltip("version:N", title=tips["version"]),
                alt.Tooltip("key:N", title=x_title),
                alt.Tooltip("weight:Q", title=y_title, format=".4g"),
            ],
        )
    )
    labels = (
        alt.Chart()
        .mark_text(dy=-6, fontSize=12, tooltip=False)
        .encode(x=x, xOffset=offset, y=y, text=alt.Text("weight:Q", format=".4f"))
    )
    # Vega lists bound inputs last added first: add them in reverse to show z₁, z₂, c
    params = [bound_input(*spec) for spec in reversed(inputs)]
    return (
        alt.layer(
            bars,
            labels,
            data=df.drop(columns="color"),
            title=chart_title(text.title),
            description=text.description,
            height=360,
        )
        .transform_calculate(weight=two_score_weight().vega)
        .add_params(*params)
    )


def weight_bars(df: pd.DataFrame, text: ChartText, *, color: str) -> alt.Chart:
    """The attention weights of one query row over its keys, on a fixed 0–1 axis.

    Parameters
    ----------
    df : DataFrame
        One row per key: ``key`` (1-based), ``score`` (q·k), ``logit``, ``weight``.
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``; ``tips``: ``score`` (q·k), ``logit``.
    color : str
        Bar colour (e.g. :func:`alpha_color` of the row's scaling).
    """
    check_rows(df)
    x_title, y_title, tips = text.x, text.y, text.tips
    return (
        alt.Chart(df)
        .mark_bar(color=color)
        .encode(
            x=alt.X("key:O", title=x_title, axis=alt.Axis(labelAngle=0, labelOverlap=True)),
            y=alt.Y("weight:Q", title=y_title, scale=alt.Scale(domain=[0, 1])),
            tooltip=[
                alt.Tooltip("key:O", title=x_title),
                alt.Tooltip("score:Q", title=tips["score"], format=".4g"),
                alt.Tooltip("logit:Q", title=tips["logit"], format=".4g"),
                alt.Tooltip("weight:Q", title=y_title, format=".4g"),
            ],
        )
        .properties(title=chart_title(text.title), description=text.description, height=260)
    )


def attention_heatmap(df: pd.DataFrame, text: ChartText) -> alt.LayerChart:
    """Heatmap of an attention matrix (queries × keys, 0–1 colour scale) with each row's max.

    Parameters
    ----------
    df : DataFrame
        One row per cell: ``i`` (query, 1-based), ``j`` (key), ``score``, ``logit``,
        ``weight``, ``is_max`` (True in the cell holding the row's largest weight),
        ``row_max``. The text of each row's max is written in that cell (white or
        black, whichever contrasts more with the cell).
    text : ChartText
        ``title``, ``x`` (keys), ``y`` (queries), ``color`` (the weight's legend),
        ``alt``; ``tips``: ``score`` (q·k), ``logit``, ``row_max``.
    """
    check_rows(df)
    x_title, y_title, color_title, tips = text.x, text.y, text["color"], text.tips
    n = int(df["j"].max())
    font = 11 if n <= 12 else 9 if n <= 20 else 7
    # no grid: its lines would run across the cells
    x = alt.X("j:O", title=x_title, axis=alt.Axis(labelAngle=0, labelOverlap=True, grid=False))
    y = alt.Y("i:O", title=y_title, axis=alt.Axis(labelOverlap=True, grid=False))
    cells = (
        alt.Chart()
        .mark_rect()
        .encode(
            x=x,
            y=y,
            color=alt.Color(
                "weight:Q",
                title=color_title,
                scale=alt.Scale(scheme="blues", domain=[0, 1]),
                legend=gradient_legend_below(),
            ),
            tooltip=[
                alt.Tooltip("i:O", title=y_title),
                alt.Tooltip("j:O", title=x_title),
                alt.Tooltip("score:Q", title=tips["score"], format=".4g"),
                alt.Tooltip("logit:Q", title=tips["logit"], format=".4g"),
                alt.Tooltip("weight:Q", title=color_title, format=".4g"),
                alt.Tooltip("row_max:Q", title=tips["row_max"], format=".4g"),
            ],
        )
    )
    labels = (
        alt.Chart()
        .transform_filter(alt.datum.is_max)
        .mark_text(fontSize=font, color=cell_ink("weight"), tooltip=False)
        .encode(x=x, y=y, text=alt.Text("weight:Q", format=".2f"))
    )
    side = 160 + max(200, min(520, 22 * n))  # plot area + axes, title and colour ramp
    return alt.layer(
        cells,
        labels,
        data=df,
        title=chart_title(text.title),
        description=text.description,
        height=side,
    )


def rowmax_histogram(frames: tuple[pd.DataFrame, pd.DataFrame], text: ChartText) -> alt.LayerChart:
    """Overlaid histograms of the row max (unscaled, scaled) with rules at summary values.

    The y-axis (share of rows) is on a square-root scale, so that a pile-up next to 1
    does not flatten every other bar.

    Parameters
    ----------
    frames : (DataFrame, DataFrame)
        ``hist``, one row per (series, bin): ``series`` (legend label), ``color`` (hex),
        ``x0``, ``x1`` (bin edges in [0, 1]), ``share`` (fraction of rows); and
        ``marks``, the vertical rules: ``series``, ``color``, ``value`` (x), ``kind``
        (legend label of the dash style, e.g. "mean of rows", "largest entry of a tensor
        (median)").
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``; ``tips``: ``series`` (the legend field),
        ``kind`` (a rule's statistic), ``value`` (its value), ``bin_from`` and ``bin_to``
        (a bin's edges).
    """
    hist, marks = frames
    x_title, y_title, tips = text.x, text.y, text.tips
    check_rows(hist)
    check_rows(marks)
    order, colors = legend_colors(hist, "series")
    color = alt.Color(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(domain=order, range=colors),
        legend=legend_below(order, columns=1, symbolOpacity=1),
    )
    x_scale = alt.Scale(domain=[0, 1])
    bars = (
        alt.Chart(hist.drop(columns="color"))
        .mark_bar(opacity=0.55, binSpacing=0)
        .encode(
            x=alt.X("x0:Q", title=x_title, scale=x_scale),
            x2=alt.X2("x1"),
            y=alt.Y(
                "share:Q",
                title=y_title,
                axis=alt.Axis(format="%"),
                scale=alt.Scale(type="sqrt"),
                stack=None,
            ),
            y2=alt.Y2(datum=0),  # bars rise from 0 (x/x2 alone would make them ranged in x)
            color=color,
            tooltip=[
                alt.Tooltip("series:N", title=tips["series"]),
                alt.Tooltip("x0:Q", title=tips["bin_from"], format=".2f"),
                alt.Tooltip("x1:Q", title=tips["bin_to"], format=".2f"),
                alt.Tooltip("share:Q", title=y_title, format=".1%"),
            ],
        )
    )
    kinds = list(dict.fromkeys(marks["kind"]))
    rules = (
        alt.Chart(marks.drop(columns="color"))
        .mark_rule(strokeWidth=2)
        .encode(
            x=alt.X("value:Q", scale=x_scale),
            color=color,
            strokeDash=alt.StrokeDash(
                "kind:N",
                title=None,
                sort=kinds,
                scale=alt.Scale(domain=kinds, range=[[1, 0], [6, 3], [2, 2]][: len(kinds)]),
                legend=legend_above(kinds, columns=1),
            ),
            tooltip=[
                alt.Tooltip("series:N", title=tips["series"]),
                alt.Tooltip("kind:N", title=tips["kind"]),
                alt.Tooltip("value:Q", title=tips["value"], format=".4g"),
            ],
        )
    )
    return alt.layer(
        bars, rules, title=chart_title(text.title), description=text.description, height=420
    )


def overflow_lines(df: pd.DataFrame, text: ChartText) -> alt.LayerChart:
    """Share of rows overflowing in a naive softmax against d_k (log₂ axis).

    Colour = scaling, dash = dtype, band = ±2 s.e. (the learner's d_k: ``marker=``).

    Parameters
    ----------
    df : DataFrame
        One row per (series, dtype, d): ``d``, ``series`` (scaling label), ``color``
        (hex, one per series), ``dtype`` (legend label, e.g. "float16"), ``rate``
        (0…1), ``lo``, ``hi``.
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``; ``tips``: ``series`` (the scaling), ``dtype``,
        ``lo`` and ``hi`` (the band's edges).
    """
    check_rows(df)
    x_title, y_title, tips = text.x, text.y, text.tips
    order, colors = legend_colors(df, "series")
    dtypes = list(dict.fromkeys(df["dtype"]))
    color = alt.Color(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(domain=order, range=colors),
        legend=legend_below(order, columns=4, symbolOpacity=1),
    )
    # the scaled series lie on top of each other at 0: each has its own point shape
    shape = series_channels(df, color["legend"], dash=False)["shape"]
    x = alt.X("d:Q", title=x_title, scale=alt.Scale(type="log", base=2))
    y_scale = alt.Scale(domain=[0, 1])
    tooltip = [
        alt.Tooltip("series:N", title=tips["series"]),
        alt.Tooltip("dtype:N", title=tips["dtype"]),
        alt.Tooltip("d:Q", title=D_K, format="d"),
        alt.Tooltip("rate:Q", title=y_title, format=".2%"),
        alt.Tooltip("lo:Q", title=tips["lo"], format=".2%"),
        alt.Tooltip("hi:Q", title=tips["hi"], format=".2%"),
    ]
    band = (
        alt.Chart()
        .mark_area(opacity=0.15, tooltip=False)
        .encode(
            x=x,
            y=alt.Y("lo:Q", scale=y_scale, title=y_title),
            y2=alt.Y2("hi"),
            color=color,
            detail=alt.Detail("dtype:N"),
        )
    )
    line = (
        alt.Chart()
        .mark_line(strokeWidth=2)
        .encode(
            x=x,
            y=alt.Y("rate:Q", scale=y_scale, title=y_title, axis=alt.Axis(format="%")),
            color=color,
            strokeDash=alt.StrokeDash(
                "dtype:N",
                title=None,
                sort=dtypes,
                scale=alt.Scale(domain=dtypes, range=[[1, 0], [6, 3]][: len(dtypes)]),
                legend=legend_above(dtypes, symbolStrokeColor=COLORS["theory"]),
            ),
            tooltip=tooltip,
        )
    )
    points = (
        alt.Chart()
        .mark_point(filled=True, size=30)
        .encode(x=x, y=alt.Y("rate:Q", scale=y_scale), color=color, shape=shape, tooltip=tooltip)
    )
    return alt.layer(
        band,
        line,
        points,
        data=df.drop(columns="color"),
        title=chart_title(text.title),
        description=text.description,
        height=400,
    )
