"""Altair builders of the √d_k-vs-d_k page (conventions: :mod:`ui.common.charts`)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ui.common.axes import log_axis, positive_range
from ui.common.charts import (
    D_K,
    HALF_SUBTITLE_LINE_COLUMNS,
    ChartText,
    band_tooltip,
    chart_title,
    check_rows,
    gradient_legend_below,
    legend_above,
    legend_below,
    legend_colors,
    own_data,
    sweep_lines,
)
from ui.common.marks import SHAPES, shaped

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


def stat_lines(
    frames: tuple[pd.DataFrame, pd.DataFrame],
    text: ChartText,
    *,
    log_y: bool = False,
    y_domain: tuple[float, float] | None = None,
    reference_label: str = "above_left",
) -> alt.LayerChart:
    """One statistic against d_k (:func:`ui.common.charts.sweep_lines`) drawn half width
    (:func:`half_width`).

    Parameters
    ----------
    frames : (DataFrame, DataFrame)
        The sweep (``d``, ``series``, ``color``, ``value``, ``lo``, ``hi``) and its
        horizontal reference lines (``y``, ``label``; none if empty).
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``; ``tips``: ``series``, ``lo``, ``hi`` and, with
        reference lines, ``reference``.
    log_y, y_domain, reference_label
        As for :func:`ui.common.charts.sweep_lines`.
    """
    df, reference = frames
    chart = sweep_lines(
        df,
        text,
        log_y=log_y,
        y_domain=y_domain,
        reference=reference,
        reference_label=reference_label,
        legend_columns=HALF_LEGEND_COLUMNS,
        plot_px=HALF_PLOT_PX,
    )
    return half_width(shaped(own_data(chart)))


def alpha_heatmap(frames: tuple[pd.DataFrame, pd.DataFrame], text: ChartText) -> alt.LayerChart:
    """A statistic in [0, 1] over the grid (dₖ, α), with horizontal rules at chosen α.

    Parameters
    ----------
    frames : (DataFrame, DataFrame)
        The cells, one row per cell: ``d`` (ordinal x, ascending), ``alpha`` (evenly
        spaced), ``share`` (colour, 0 … 1), ``share_se``; and the rules: ``alpha``,
        ``label`` (legend text), ``color`` (hex) of the exponents to draw, e.g. α = ½
        and α = 1.
    text : ChartText
        ``title``, ``x``, ``y``, ``color`` (the share's legend), ``alt``; ``tips``:
        ``se`` (the cell's standard error), ``rule`` (a rule's label).
    """
    df, rules = frames
    check_rows(df)
    x_title, y_title, color_title, tips = text.x, text.y, text["color"], text.tips
    alphas = sorted(df["alpha"].unique())
    step = float(alphas[1] - alphas[0]) if len(alphas) > 1 else 0.05
    cells = df.assign(a0=df["alpha"] - step / 2, a1=df["alpha"] + step / 2)
    y_scale = alt.Scale(domain=[float(cells.a0.min()), float(cells.a1.max())], nice=False)
    rect = (
        alt.Chart(cells)
        .mark_rect()
        .encode(
            # no grid: its lines would run across the cells
            x=alt.X(
                "d:O", title=x_title, sort="ascending", axis=alt.Axis(labelAngle=0, grid=False)
            ),
            y=alt.Y("a0:Q", title=y_title, scale=y_scale, axis=alt.Axis(grid=False)),
            y2=alt.Y2("a1:Q"),
            color=alt.Color(
                "share:Q",
                title=color_title,
                scale=alt.Scale(scheme="greys", domain=[0, 1], reverse=True),
                legend=gradient_legend_below(),
            ),
            tooltip=[
                alt.Tooltip("d:O", title=D_K),
                alt.Tooltip("alpha:Q", title="α", format=".2f"),
                alt.Tooltip("share:Q", title=color_title, format=".3f"),
                alt.Tooltip("share_se:Q", title=tips["se"], format=".1g"),
            ],
        )
    )
    labels = list(rules["label"])
    lines = (
        alt.Chart(rules)
        .mark_rule(strokeWidth=3)
        .encode(
            y=alt.Y("alpha:Q", scale=y_scale),
            color=alt.Color(
                "label:N",
                title=None,
                sort=labels,
                scale=alt.Scale(domain=labels, range=list(rules["color"])),
                legend=legend_above(labels),
            ),
            tooltip=[
                alt.Tooltip("label:N", title=tips["rule"]),
                alt.Tooltip("alpha:Q", title="α", format=".2f"),
            ],
        )
    )
    chart = alt.layer(
        rect,
        lines,
        resolve=alt.Resolve(scale=alt.ScaleResolveMap(color="independent")),
        title=chart_title(text.title),
        description=text.description,
        height=440,  # a legend above and a colour ramp below the plot
    )
    # full-strength legend symbols, as on the page's other charts
    chart.config = alt.Config(legend=alt.LegendConfig(symbolOpacity=1))
    return chart
