"""Altair builders of the √d_k-vs-d_k page (conventions: :mod:`ui.common.charts`)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ui.common.charts import (
    D_K,
    ChartText,
    chart_title,
    check_rows,
    gradient_legend_below,
    legend_above,
    own_data,
    sweep_lines,
)
from ui.common.marks import shaped
from ui.story.charts import HALF_LEGEND_COLUMNS, HALF_PLOT_PX, half_width


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
