"""Altair builders of the gradients page (conventions: :mod:`ui.common.charts`)."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from ui.common.axes import log_axis, positive_range
from ui.common.charts import (
    COLORS,
    D_K,
    HALF_SUBTITLE_LINE_COLUMNS,
    MARKER_RULE,
    ChartText,
    chart_title,
    check_rows,
    gradient_legend_below,
    legend_above,
    legend_below,
    legend_colors,
    own_data,
    sweep_lines,
)
from ui.common.marks import shaped

#: Diverging, colour-blind-safe scheme for signed Jacobian entries (blue < 0 < orange).
JACOBIAN_SCHEME = "blueorange"


#: Height of the gap explorer's plot, px (its title and legend add to it): 15 decades of a
#: log axis at 16 px each, so that the two curves, a decade apart, are 16 px apart.
GAP_PLOT_PX = 240


def jacobian_heatmap(df: pd.DataFrame, text: ChartText, *, domain_max: float) -> alt.Chart:
    """Heatmap of one row's softmax Jacobian Jᵢⱼ = ∂pᵢ/∂zⱼ on a fixed diverging scale.

    Parameters
    ----------
    df : DataFrame
        One row per cell: ``i``, ``j`` (key numbers), ``value`` (Jᵢⱼ), ``p_i``, ``p_j``.
    text : ChartText
        ``title``, ``subtitle``, ``x`` (j), ``y`` (i), ``color`` (the legend: Jᵢⱼ),
        ``alt``; ``tips``: ``p_i``, ``p_j`` (the two weights).
    domain_max : float
        The colour scale spans [−domain_max, domain_max], centred on 0. Pass the same
        value to the unscaled and the scaled heatmap so they share one scale.
    """
    check_rows(df)
    x_title, y_title, color_title, tips = text.x, text.y, text["color"], text.tips
    m = float(domain_max) if domain_max > 0 else 1.0
    # no grid: its lines would run across the cells
    return (
        alt.Chart(df)
        .mark_rect()
        .encode(
            x=alt.X(
                "j:O", title=x_title, axis=alt.Axis(labelAngle=0, labelOverlap=True, grid=False)
            ),
            y=alt.Y("i:O", title=y_title, axis=alt.Axis(labelOverlap=True, grid=False)),
            color=alt.Color(
                "value:Q",
                title=color_title,
                scale=alt.Scale(scheme=JACOBIAN_SCHEME, domain=[-m, m], domainMid=0),
                legend=gradient_legend_below(format=".2~g"),
            ),
            tooltip=[
                alt.Tooltip("i:O", title=y_title),
                alt.Tooltip("j:O", title=x_title),
                alt.Tooltip("value:Q", title=color_title, format=".3e"),
                alt.Tooltip("p_i:Q", title=tips["p_i"], format=".4g"),
                alt.Tooltip("p_j:Q", title=tips["p_j"], format=".4g"),
            ],
        )
        .properties(
            title=chart_title(
                text.title, text.subtitle, subtitle_columns=HALF_SUBTITLE_LINE_COLUMNS
            ),
            description=text.description,
            height=380,
        )
    )


def gap_explorer(df: pd.DataFrame, text: ChartText, *, current_g: float) -> alt.LayerChart:
    """‖J‖_F and the largest off-diagonal |Jᵢⱼ| against the logit gap g, exact and laws.

    The plot is :data:`GAP_PLOT_PX` tall at every width (title and legend add to it); the
    log axis is labelled every other decade, and each curve is named beside its line
    (in the theme's ink: the blue and the purple fall below 4.5:1 on one background or the
    other; the label's place beside its line names it).

    Parameters
    ----------
    df : DataFrame
        ``g``, ``quantity`` (legend label), ``kind`` (legend label: exact or law), ``value``.
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``; the labels of ‖J‖_F (blue) and of the
        off-diagonal entry (reddish purple), ``fro`` and ``offdiag``, and of the exact
        curves (solid) and the laws (dashed), ``exact`` and ``law``; ``tips``:
        ``quantity``, ``kind`` (the two legend fields).
    current_g : float
        The gap marked with a vertical rule.
    """
    check_rows(df)
    x_title, y_title, tips = text.x, text.y, text.tips
    quantity_order = (text["fro"], text["offdiag"])
    kind_order = (text["exact"], text["law"])
    palette = [COLORS["sqrt"], COLORS["custom"]]
    color = alt.Color(
        "quantity:N",
        title=None,
        sort=list(quantity_order),
        scale=alt.Scale(domain=list(quantity_order), range=palette),
        legend=None,  # each curve is named at its end
    )
    dash = alt.StrokeDash(
        "kind:N",
        title=None,
        sort=list(kind_order),
        scale=alt.Scale(domain=list(kind_order), range=[[1, 0], [6, 4]]),
        legend=legend_below(
            kind_order, symbolType="stroke", symbolStrokeWidth=2, symbolStrokeColor=COLORS["theory"]
        ),
    )
    x = alt.X("g:Q", title=x_title, scale=alt.Scale(nice=False))
    y_scale = alt.Scale(type="log")
    y = alt.Y(
        "value:Q",
        title=y_title,
        scale=y_scale,
        axis=log_axis(*positive_range(df["value"]), length=GAP_PLOT_PX),
    )
    tooltip = [
        alt.Tooltip("quantity:N", title=tips["quantity"]),
        alt.Tooltip("kind:N", title=tips["kind"]),
        alt.Tooltip("g:Q", title=x_title, format=".1f"),
        alt.Tooltip("value:Q", title=y_title, format=".3e"),
    ]
    # one line layer: exact curves wide and translucent, laws thin and dashed, so both
    # stay visible where they coincide
    # (width and opacity as literal values, not scales of "kind": a second and third
    # legend-less scale on the field of the dash legend makes Vega-Lite warn)
    exact = (df["kind"] == kind_order[0]).to_numpy()
    df = df.assign(width=np.where(exact, 4.0, 1.5), alpha=np.where(exact, 0.55, 1.0))
    lines = (
        alt.Chart(df)
        .mark_line()
        .encode(
            x=x,
            y=y,
            color=color,
            strokeDash=dash,
            strokeWidth=alt.StrokeWidth(field="width", type="quantitative", scale=None),
            opacity=alt.Opacity(field="alpha", type="quantitative", scale=None),
            tooltip=tooltip,
        )
    )
    # each curve named beside it, where both fall: ‖J‖_F (the upper one) above its line,
    # starting at the point (the line falls away to the right), the entry below its line,
    # ending at the point (the line rises to the left)
    exact_df = df[exact]
    at = float(exact_df["g"].min() + 0.6 * (exact_df["g"].max() - exact_df["g"].min()))
    spots = exact_df.loc[(exact_df["g"] - at).abs().groupby(exact_df["quantity"]).idxmin()]
    names = [
        alt.Chart(spots[spots["quantity"] == name])
        .mark_text(align=align, dy=dy, fontSize=12, fontWeight="bold", tooltip=False)
        .encode(x=alt.X("g:Q"), y=alt.Y("value:Q", scale=y_scale), text=alt.Text("quantity:N"))
        for name, align, dy in zip(quantity_order, ("left", "right"), (-10, 14), strict=True)
    ]
    marker = (
        alt.Chart(pd.DataFrame({"g": [current_g]}))
        .mark_rule(**MARKER_RULE)
        .encode(x=alt.X("g:Q"), tooltip=[alt.Tooltip("g:Q", title=x_title, format=".1f")])
    )
    return alt.layer(
        lines,
        *names,
        marker,
        title=chart_title(text.title),
        description=text.description,
        height=GAP_PLOT_PX,
        autosize=alt.AutoSizeParams(type="fit-x", contains="padding"),
    )


def median_mean_sweep(df: pd.DataFrame, text: ChartText) -> alt.LayerChart:
    """:func:`sweep_lines` on a log y-axis (median line, quantile band) plus dashed means.

    Parameters
    ----------
    df : DataFrame
        One row per (series, d_k): ``d``, ``series``, ``color``, ``value`` (median),
        ``lo``, ``hi`` (e.g. 10 % and 90 % quantiles), ``mean``. All positive.
    text : ChartText
        ``title``, ``subtitle``, ``x``, ``y``, ``alt``, ``mean_label`` (the legend text of
        the dashed mean lines); ``tips``: those of :func:`sweep_lines` (``series``,
        ``value``, ``lo``, ``hi``) and ``mean``.
    """
    check_rows(df)
    mean_label, tips = text["mean_label"], text.tips
    df = df.assign(stat=mean_label)  # one dataset for every layer
    base = shaped(
        own_data(
            sweep_lines(
                df,
                text,
                log_y=True,
                legend_columns=2,
                height=440,  # two legends, a subtitle and a log axis spanning 30 decades
            )
        )
    )
    order, colors = legend_colors(df, "series")
    means = (
        alt.Chart(df.drop(columns="color"))
        .mark_line(strokeWidth=1.5)
        .encode(
            x=alt.X("d:Q", scale=alt.Scale(type="log", base=2)),
            y=alt.Y("mean:Q", scale=alt.Scale(type="log")),
            color=alt.Color("series:N", sort=order, scale=alt.Scale(domain=order, range=colors)),
            strokeDash=alt.StrokeDash(
                "stat:N",
                title=None,
                scale=alt.Scale(domain=[mean_label], range=[[6, 4]]),
                legend=legend_above([mean_label]),
            ),
            tooltip=[
                alt.Tooltip("series:N", title=tips["series"]),
                alt.Tooltip("d:Q", title=D_K, format="d"),
                alt.Tooltip("mean:Q", title=tips["mean"], format=".4g"),
            ],
        )
    )
    # extend the freshly built chart in place: a second alt.layer(...) would redo the
    # (slow) merging of the layers' parameters each time the spec is built (a cache miss)
    chart = base
    chart.layer.append(means)
    chart.title = chart_title(
        text.title, text.subtitle, subtitle_columns=HALF_SUBTITLE_LINE_COLUMNS
    )
    return chart


def log_histogram(
    df: pd.DataFrame,
    text: ChartText,
    *,
    median: float,
    median_log10: float,
    x_domain: tuple[float, float],
    color: str,
) -> alt.LayerChart:
    """Histogram on a log10 axis with its median as a dashed rule.

    Parameters
    ----------
    df : DataFrame
        ``x0``, ``x1`` (bin edges in decades), ``share`` (% of rows).
    text : ChartText
        ``title``, ``subtitle``, ``x``, ``y``, ``alt``; ``tips``: ``bin_from``,
        ``bin_to`` (a bin's lower and upper edge), ``median`` (the rule's value).
    median, median_log10 : float
        The median (for the tooltip) and its log10 (where the rule is drawn).
    x_domain : (float, float)
        Fixed x-range in decades: pass the same range to charts shown side by side.
    color : str
        The bars' colour (hex).
    """
    check_rows(df)
    x_title, y_title, tips = text.x, text.y, text.tips
    x = alt.X(
        "x0:Q",
        title=x_title,
        scale=alt.Scale(domain=list(x_domain), nice=False),
        axis=alt.Axis(format="d", tickMinStep=1),
    )
    bars = (
        alt.Chart(df)
        .mark_bar(color=color, opacity=0.8, binSpacing=0)
        .encode(
            x=x,
            x2=alt.X2("x1:Q"),
            y=alt.Y("share:Q", title=y_title),
            y2=alt.Y2(datum=0),
            tooltip=[
                alt.Tooltip("x0:Q", title=tips["bin_from"], format=".2f"),
                alt.Tooltip("x1:Q", title=tips["bin_to"], format=".2f"),
                alt.Tooltip("share:Q", title=y_title, format=".2f"),
            ],
        )
    )
    rule_data = pd.DataFrame({"x": [median_log10], "median": [median]})
    rule = (
        alt.Chart(rule_data)
        .mark_rule(color=COLORS["theory"], strokeDash=[6, 3], strokeWidth=2)
        .encode(
            x=alt.X("x:Q", scale=alt.Scale(domain=list(x_domain), nice=False)),
            tooltip=[alt.Tooltip("median:Q", title=tips["median"], format=".3~e")],
        )
    )
    return alt.layer(
        bars,
        rule,
        # drawn half width (unscaled beside scaled)
        title=chart_title(text.title, text.subtitle, subtitle_columns=HALF_SUBTITLE_LINE_COLUMNS),
        description=text.description,
        height=300,
    )
