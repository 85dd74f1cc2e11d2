"""Altair builders of the language-model page (conventions: :mod:`ui.common.charts`)."""

from __future__ import annotations

import math

import altair as alt
import pandas as pd

from ui.common.axes import log_axis, positive_range
from ui.common.charts import (
    ChartText,
    chart_title,
    check_rows,
    legend_colors,
)
from ui.story.trained_charts import (  # noqa: F401  (loss_against_rate: the page's)
    HALF_HEIGHT,
    loss_against_rate,
    reference_line,
    variants_color,
    variants_dash,
)


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
            color=variants_color(df),
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
    color = variants_color(df, lines=True)
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
        strokeDash=variants_dash(df),
        tooltip=tooltip,
    )
    layers = [band, line]
    if reference is not None:
        # the curves start near it on the left (the loss from above, entropy near even)
        layers += reference_line(reference, text["reference"], tips["reference"], text.y, "right")
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
            color=variants_color(df),
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
