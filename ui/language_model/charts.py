"""Altair builders of the language-model page (conventions: :mod:`ui.common.charts`)."""

from __future__ import annotations

import math

import altair as alt
import pandas as pd

from ui.common.axes import log_axis, positive_range
from ui.common.charts import (
    COLORS,
    MARKER_RULE,
    NARROW_CHART_PX,
    ChartText,
    band_and_line,
    chart_title,
    check_rows,
    legend_below,
    legend_colors,
)

#: Height of a chart drawn half width (two side by side), px: plot, title and legend.
HALF_HEIGHT = 330


def _color(df: pd.DataFrame, lines: bool = False) -> alt.Color:
    """The variants' colour channel, in the frame's order, with its legend below
    (``lines``: its symbols are strokes, for the dashed lines of :func:`_dash`)."""
    order, colors = legend_colors(df, "series")
    symbols = {"symbolType": "stroke"} if lines else {}
    return alt.Color(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(domain=order, range=colors),
        legend=legend_below(order, columns=2, symbolOpacity=1, **symbols),
    )


#: Dash patterns of the variants, in legend order: lines that meet (every variant at the
#: lowest rates) still show each one.
DASHES = ([1, 0], [7, 3], [2, 2], [8, 3, 2, 3])


def _dash(df: pd.DataFrame) -> alt.StrokeDash:
    """The variants' dash patterns (:data:`DASHES`), in the colour legend's order."""
    order, _ = legend_colors(df, "series")
    return alt.StrokeDash(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(domain=order, range=[DASHES[i % len(DASHES)] for i in range(len(order))]),
        legend=legend_below(order, columns=2, symbolOpacity=1, symbolType="stroke"),
    )


#: Where a reference line's label goes: above its left or its right end.
_LABEL_AT = {
    "left": {"align": "left", "x": 4},
    "right": {"align": "right", "x": "width", "dx": -4},
}


def _reference(y: float, label: str, tip: str, y_title: str, side: str) -> list[alt.Chart]:
    """A dashed grey horizontal line at ``y`` with ``label`` above its ``side`` end
    (where the curves leave room)."""
    ref = pd.DataFrame({"y": [y], "label": [label]})
    rule = (
        alt.Chart(ref)
        .mark_rule(color=COLORS["theory"], strokeDash=[4, 3])
        .encode(
            y=alt.Y("y:Q"),
            tooltip=[
                alt.Tooltip("label:N", title=tip),
                alt.Tooltip("y:Q", title=y_title, format=".4g"),
            ],
        )
    )
    words = (
        alt.Chart(ref)
        .mark_text(baseline="bottom", dy=-2, tooltip=False, **_LABEL_AT[side])
        .encode(y=alt.Y("y:Q"), text=alt.Text("label:N"))
    )
    return [rule, words]


def logit_histogram(df: pd.DataFrame, text: ChartText) -> alt.LayerChart:
    """The step-0 attention logits of every variant: one histogram outline per variant on
    a square-root share axis (÷dₕ's logits fill two bins, ÷1's spread over dozens).

    Parameters
    ----------
    df : DataFrame
        One row per (variant, bin): ``series``, ``color``, ``x`` (bin centre), ``x0``,
        ``x1``, ``share``.
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``, optional ``subtitle``; ``tips``: ``series``,
        ``x0``, ``x1``.
    """
    check_rows(df)
    tips = text.tips
    # "step" draws each bin flat across its width: the outline of a histogram; invisible
    # points carry the tooltip of the bin under the pointer
    line = (
        alt.Chart(df.drop(columns="color"))
        .mark_line(
            interpolate="step",
            strokeWidth=2,
            point=alt.OverlayMarkDef(opacity=0, size=40, filled=True),
        )
        .encode(
            x=alt.X("x:Q", title=text.x),
            y=alt.Y("share:Q", title=text.y, scale=alt.Scale(type="sqrt")),
            color=_color(df),
            tooltip=[
                alt.Tooltip("series:N", title=tips["series"]),
                alt.Tooltip("x0:Q", title=tips["x0"], format=".4g"),
                alt.Tooltip("x1:Q", title=tips["x1"], format=".4g"),
                alt.Tooltip("share:Q", title=text.y, format=".2%"),
            ],
        )
    )
    return alt.layer(
        line,
        title=chart_title(text.title, text.subtitle),
        description=text.description,
        height=340,
    )


def loss_against_rate(
    df: pd.DataFrame,
    text: ChartText,
    *,
    reference: float,
    y_domain: tuple[float, float],
    rates: tuple[float, float],
    current_lr: float | None = None,
) -> alt.LayerChart:
    """Final held-out loss against the learning rate (log axis), one line per variant
    through the seed mean, a band from the lowest to the highest seed, each variant's best
    rate as a large point, a reference loss (Wortsman et al. 2023, Figure 1) and the
    learner's rate as a dashed rule.

    Parameters
    ----------
    df : DataFrame
        One row per (variant, rate): ``series``, ``color``, ``lr``, ``value``, ``lo``,
        ``hi``, ``best`` (bool), ``sensitivity``.
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``, ``reference`` (the reference line's label);
        ``tips``: ``series``, ``lr``, ``lo``, ``hi``, ``sensitivity``, ``best``,
        ``reference``.
    reference : float
        The reference loss (the held-out unigram loss), nats/character.
    y_domain : (float, float)
        The y-range, shared by the charts of both head sizes.
    rates : (float, float)
        The lowest and highest rate of the grid.
    current_lr : float, optional
        The learner's rate, marked by a dashed vertical rule (``tips.rate``).
    """
    check_rows(df)
    tips = text.tips
    lo, hi = rates
    # the labels are short plain numbers (0.001 … 0.1): a phone's width fits all of them,
    # and so does a half-width chart's
    x_axis = log_axis(lo, hi, length=NARROW_CHART_PX, orient="x")
    x = alt.X(
        "lr:Q",
        title=text.x,
        scale=alt.Scale(type="log", domain=[lo / 1.5, hi * 1.5], nice=False),
        axis=x_axis,
    )
    y_scale = alt.Scale(domain=list(y_domain), nice=False)
    color = _color(df, lines=True)
    tooltip = [
        alt.Tooltip("series:N", title=tips["series"]),
        alt.Tooltip("lr:Q", title=tips["lr"], format=".3~g"),
        alt.Tooltip("value:Q", title=text.y, format=".4g"),
        alt.Tooltip("lo:Q", title=tips["lo"], format=".4g"),
        alt.Tooltip("hi:Q", title=tips["hi"], format=".4g"),
        alt.Tooltip("sensitivity:Q", title=tips["sensitivity"], format=".3f"),
    ]
    layers = band_and_line(
        df.drop(columns="best"),
        x=x,
        y_scale=y_scale,
        y_title=text.y,
        color=color,
        tooltip=tooltip,
        band_opacity=0.2,
    )
    layers[1] = layers[1].encode(strokeDash=_dash(df))
    best = (
        alt.Chart(df[df["best"]].drop(columns=["color", "best"]))
        .mark_point(size=150, filled=True, opacity=1, stroke="white", strokeWidth=1)
        .encode(
            x=x,
            y=alt.Y("value:Q", scale=y_scale),
            color=color,
            tooltip=[
                alt.Tooltip("series:N", title=tips["series"]),
                alt.Tooltip("lr:Q", title=tips["best"], format=".3~g"),
                alt.Tooltip("value:Q", title=text.y, format=".4g"),
            ],
        )
    )
    # the top rates climb toward the reference on the right
    layers += [best, *_reference(reference, text["reference"], tips["reference"], text.y, "left")]
    if current_lr is not None:
        layers.append(
            alt.Chart(pd.DataFrame({"lr": [current_lr]}))
            .mark_rule(**MARKER_RULE)
            .encode(
                x=alt.X("lr:Q"), tooltip=[alt.Tooltip("lr:Q", title=tips["rate"], format=".3~g")]
            )
        )
    return alt.layer(
        *layers,
        title=chart_title(text.title, text.subtitle),
        description=text.description,
        height=HALF_HEIGHT,
    )


def over_training(
    df: pd.DataFrame,
    text: ChartText,
    *,
    log_y: bool = False,
    y_domain: tuple[float, float] | None = None,
    reference: float | None = None,
) -> alt.LayerChart:
    """A quantity recorded during training against the step, one line per variant
    through the seed mean, a band from the lowest to the highest seed.

    Parameters
    ----------
    df : DataFrame
        One row per (variant, recorded step): ``series``, ``color``, ``step``, ``value``,
        ``lo``, ``hi``; optionally ``onehot`` (share of one-hot rows, in the tooltip).
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``; ``tips``: ``series``, ``step``, ``lo``, ``hi``,
        ``onehot`` (with that column); with a ``reference``, ``reference`` (its label) and
        ``tips.reference``.
    log_y : bool
        A log y-axis (:func:`ui.common.axes.log_axis`).
    y_domain : (float, float), optional
        The y-range (shared by the charts of both layers).
    reference : float, optional
        A horizontal reference line's height.
    """
    check_rows(df)
    tips = text.tips
    span = y_domain or positive_range(df["lo"], df["value"], df["hi"])
    if log_y:
        y_scale = alt.Scale(type="log", domain=list(span), nice=False)
        # the plot takes about half the chart's height (title and legend the rest)
        y_axis = log_axis(*span, length=HALF_HEIGHT / 2)
        fmt = ",.4r"  # up to 10⁵: whole digits, not 2.743e+5
    else:
        y_scale = (
            alt.Scale(domain=list(y_domain), nice=False) if y_domain else alt.Scale(zero=False)
        )
        y_axis = alt.Undefined
        fmt = ".4g"
    tooltip = [
        alt.Tooltip("series:N", title=tips["series"]),
        alt.Tooltip("step:Q", title=tips["step"], format="d"),
        alt.Tooltip("value:Q", title=text.y, format=fmt),
        alt.Tooltip("lo:Q", title=tips["lo"], format=fmt),
        alt.Tooltip("hi:Q", title=tips["hi"], format=fmt),
    ]
    if "onehot" in df:
        tooltip.append(alt.Tooltip("onehot:Q", title=tips["onehot"], format=".1%"))
    x = alt.X("step:Q", title=text.x)
    color = _color(df, lines=True)
    base = alt.Chart(df.drop(columns="color"))
    # clipped: a y-range that leaves out step 0 (the held-out loss) draws the line from
    # above the plot, not over the title
    band = base.mark_area(opacity=0.2, tooltip=False, clip=True).encode(
        x=x,
        y=alt.Y("lo:Q", scale=y_scale, title=text.y, axis=y_axis),
        y2=alt.Y2("hi:Q"),
        color=color,
    )
    line = base.mark_line(point=True, strokeWidth=2, clip=True).encode(
        x=x,
        y=alt.Y("value:Q", scale=y_scale, title=text.y, axis=y_axis),
        color=color,
        strokeDash=_dash(df),
        tooltip=tooltip,
    )
    layers = [band, line]
    if reference is not None:
        # the curves start near it on the left (the loss from above, entropy near even)
        layers += _reference(reference, text["reference"], tips["reference"], text.y, "right")
    return alt.layer(
        *layers,
        title=chart_title(text.title, text.subtitle),
        description=text.description,
        height=HALF_HEIGHT,
    )


def next_char_bars(df: pd.DataFrame, text: ChartText) -> alt.Chart:
    """Grouped horizontal bars: for each likely next character (a row, likeliest first),
    the probability each variant gives it.

    Parameters
    ----------
    df : DataFrame
        One row per (variant, character): ``series``, ``color``, ``char``, ``p``,
        ``rank``.
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``; ``tips.series``.
    """
    check_rows(df)
    # up to the next quarter above the likeliest: the bars use the width, the axis stays
    # one of ¼, ½, ¾ or 1
    top = min(1.0, math.ceil(float(df["p"].max()) * 4 + 1e-9) / 4)
    order = list(df.sort_values("rank", kind="stable")["char"].drop_duplicates())
    series, _ = legend_colors(df, "series")
    y = alt.Y("char:N", title=text.y, sort=order, axis=alt.Axis(labelFontSize=14, grid=False))
    return (
        alt.Chart(df.drop(columns="color"))
        .mark_bar()
        .encode(
            x=alt.X(
                "p:Q",
                title=text.x,
                scale=alt.Scale(domain=[0, top], nice=False),
                axis=alt.Axis(format="%", tickCount=5),
            ),
            y=y,
            yOffset=alt.YOffset("series:N", sort=series),
            color=_color(df),
            tooltip=[
                alt.Tooltip("series:N", title=text.tips["series"]),
                alt.Tooltip("char:N", title=text.y),
                alt.Tooltip("p:Q", title=text.x, format=".1%"),
            ],
        )
        .properties(
            title=chart_title(text.title, text.subtitle),
            description=text.description,
            height=120 + 22 * len(order),
        )
    )
