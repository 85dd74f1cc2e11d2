"""Altair builders of the variance page (conventions: :mod:`ui.common.charts`)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ui.common.charts import (
    COLORS,
    ChartText,
    chart_title,
    check_rows,
    legend_below,
)


def histogram_with_law(
    frames: tuple[pd.DataFrame, ...],
    text: ChartText,
    *,
    color: str = COLORS["sqrt"],
    shared_axis: bool = False,
) -> alt.LayerChart:
    """Histogram bars with the exact law and its Gaussian limit drawn over them.

    It draws its frames as they are and derives nothing from their values (one spec
    serves every d_k: ``workshop.chart(..., swap_data=True)``).

    Parameters
    ----------
    frames : (DataFrame, DataFrame[, DataFrame])
        From :func:`ui.variance.data.histogram_frames`: the bins, one row per bin:
        ``x0``, ``x1`` (bin edges), ``x`` (centre), ``density`` (empirical), ``exact``
        (exact law), ``gauss`` (Gaussian limit); the laws, one row per (law, bin):
        ``x``, ``law`` (its legend label), ``y``; and with ``shared_axis`` the x-axis
        ends, two rows of ``x``.
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``; ``law_exact`` and ``law_gauss``: the legend
        labels of the exact law and of the Gaussian limit; ``tips.law``: the curves'
        legend field.
    color : str
        Bar colour.
    shared_axis : bool
        The x-axis runs exactly over the ends (two histograms on one axis: the unscaled
        one's range); False: over the data, rounded.
    """
    hist, laws = frames[:2]
    check_rows(hist)
    check_rows(laws)
    x_title, y_title, tips = text.x, text.y, text.tips
    law_labels = [text["law_exact"], text["law_gauss"]]
    x_scale = alt.Scale(nice=False) if shared_axis else alt.Scale()
    tooltip = [
        alt.Tooltip("x:Q", title=x_title, format=".3g"),
        alt.Tooltip("density:Q", title=y_title, format=".4g"),
        alt.Tooltip("exact:Q", title=law_labels[0], format=".4g"),
    ]
    # rectangles from 0 to the density over [x0, x1] (a bar with x2 would be horizontal)
    bars = (
        alt.Chart(hist)
        .mark_rect(opacity=0.55, color=color)
        .encode(
            x=alt.X("x0:Q", title=x_title, scale=x_scale),
            x2=alt.X2("x1:Q"),
            y=alt.Y("density:Q", title=y_title),
            y2=alt.Y2(datum=0),
            tooltip=tooltip,
        )
    )
    lines = (
        alt.Chart(laws)
        .mark_line(strokeWidth=2, color=COLORS["theory"])
        .encode(
            x=alt.X("x:Q"),
            y=alt.Y("y:Q"),
            strokeDash=alt.StrokeDash(
                "law:N", title=None, sort=law_labels, legend=legend_below(law_labels)
            ),
            tooltip=[
                alt.Tooltip("law:N", title=tips["law"]),
                alt.Tooltip("x:Q", title=x_title, format=".3g"),
                alt.Tooltip("y:Q", title=y_title, format=".4g"),
            ],
        )
    )
    layers = [bars, lines]
    if shared_axis:  # the axis's ends as data: an invisible rule at each
        layers.append(
            alt.Chart(frames[2])
            .mark_rule(opacity=0, aria=False, tooltip=False)
            .encode(x=alt.X("x:Q"))
        )
    return alt.layer(
        *layers, title=chart_title(text.title), description=text.description, height=300
    )


def running_sums(frames: tuple[pd.DataFrame, pd.DataFrame], text: ChartText) -> alt.LayerChart:
    """Partial sums of qᵢkᵢ against i for several pairs, with ±√i and ±2√i envelopes.

    Parameters
    ----------
    frames : (DataFrame, DataFrame)
        ``paths``: ``i``, ``path`` (pair id), ``sum``; and ``envelope``: ``i``,
        ``band`` (legend label, e.g. "±√i·σ_qσ_k"), ``lo``, ``hi``.
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``; ``tips``: ``path`` (the pair's number),
        ``band`` (the envelope's label), ``lo``, ``hi`` (its lower and upper line).
    """
    paths, envelope = frames
    x_title, y_title, tips = text.x, text.y, text.tips
    check_rows(paths)
    check_rows(envelope)
    x = alt.X("i:Q", title=x_title, axis=alt.Axis(tickMinStep=1))  # dimensions are whole
    lines = (
        alt.Chart(paths)
        .mark_line(strokeWidth=1, opacity=0.7, color=COLORS["sqrt"])
        .encode(
            x=x,
            y=alt.Y("sum:Q", title=y_title),
            detail=alt.Detail("path:N"),
            tooltip=[
                alt.Tooltip("path:N", title=tips["path"]),
                alt.Tooltip("i:Q", title=x_title, format="d"),
                alt.Tooltip("sum:Q", title=y_title, format=".3g"),
            ],
        )
    )
    env = alt.Chart(envelope)
    bands = list(dict.fromkeys(envelope["band"]))
    dash = alt.StrokeDash("band:N", title=None, legend=legend_below(bands))
    lines_of = {"hi": tips["hi"], "lo": tips["lo"]}
    upper, lower = (
        env.mark_line(color=COLORS["theory"]).encode(
            x=x,
            y=alt.Y(f"{edge}:Q"),
            strokeDash=dash,
            tooltip=[
                alt.Tooltip("band:N", title=tips["band"]),
                alt.Tooltip("i:Q", title=x_title, format="d"),
                alt.Tooltip(f"{edge}:Q", title=lines_of[edge], format=".3g"),
            ],
        )
        for edge in ("hi", "lo")
    )
    return alt.layer(
        lines, upper, lower, title=chart_title(text.title), description=text.description, height=320
    )


def term_bars(df: pd.DataFrame, text: ChartText) -> alt.Chart:
    """Bars of the per-dimension products qᵢkᵢ of one pair, coloured by sign.

    Parameters
    ----------
    df : DataFrame
        ``i`` (1-based dimension), ``term`` (qᵢkᵢ), ``sign`` (legend label).
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``; ``color``: the sign's legend and tooltip
        title; ``sign_pos`` and ``sign_neg``: the labels of positive and negative terms
        (blue and vermillion).
    """
    check_rows(df)
    x_title, y_title, sign_title = text.x, text.y, text["color"]
    sign_order = (text["sign_pos"], text["sign_neg"])
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            # a band of outer padding, and the last label ending under the last bar: at
            # 64 bars on a phone or a half-width chart it would otherwise stick out past
            # the plot's right edge
            x=alt.X(
                "i:O",
                title=x_title,
                scale=alt.Scale(paddingOuter=1),
                axis=alt.Axis(
                    labelOverlap=True,
                    labelAngle=0,
                    # right-aligned under the last bar
                    labelAlign=alt.ConditionalAxisLabelAlign(
                        condition={"test": "datum.index === 1", "value": "right"}, value="center"
                    ),
                ),
            ),
            y=alt.Y("term:Q", title=y_title),
            color=alt.Color(
                "sign:N",
                title=sign_title,
                scale=alt.Scale(
                    domain=list(sign_order), range=[COLORS["sqrt"], COLORS["unscaled"]]
                ),
                legend=legend_below(sign_order),
            ),
            tooltip=[
                alt.Tooltip("i:O", title=x_title),
                alt.Tooltip("term:Q", title=y_title, format=".4g"),
                alt.Tooltip("sign:N", title=sign_title),
            ],
        )
        .properties(title=chart_title(text.title), description=text.description, height=300)
    )
