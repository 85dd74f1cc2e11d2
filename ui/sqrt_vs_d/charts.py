"""Altair builders of the √d_k-vs-d_k page (conventions: :mod:`ui.common.charts`)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ui.common.axes import log_axis, positive_range
from ui.common.charts import (
    D_K,
    HALF_SUBTITLE_LINE_COLUMNS,
    band_tooltip,
    chart_title,
    check_rows,
    d_marker,
    gradient_legend_below,
    legacy_sweep_lines,
    legend_above,
    legend_below,
    legend_colors,
)

#: Height of a half-width chart's plot, px (without its title, axes and legend).
HALF_PLOT_PX = 220


def logit_scale(
    df: pd.DataFrame,
    *,
    title: str,
    subtitle: str,
    x_title: str,
    y_title: str,
    theory_title: str,
    description: str,
    tips: dict[str, str],
    legend_columns: int = 4,
    plot_px: float = HALF_PLOT_PX,
) -> alt.LayerChart:
    """Measured points with error bars and theory lines against d_k, log–log, per series.

    Parameters
    ----------
    df : DataFrame
        One row per (series, d_k): ``d``, ``series`` (legend label), ``color`` (hex, one
        per series), ``value`` (measured, > 0), ``lo``, ``hi`` (error bar, > 0),
        ``theory`` (> 0).
    subtitle : str
        Says which marks are measured and which are theory.
    theory_title : str
        Tooltip title of the theory value.
    tips : dict
        Tooltip titles: ``series``, ``lo``, ``hi`` (the error bar's ends); the measured
        value is titled ``y_title``.
    legend_columns : int
        Legend entries per row (2 fits a half-width chart).
    plot_px : float
        The plot's height, px (the log axis is labelled to fit it).
    """
    check_rows(df)
    order, colors = legend_colors(df, "series")
    color = alt.Color(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(domain=order, range=colors),
        legend=legend_below(order, columns=legend_columns),
    )
    x = alt.X("d:Q", title=x_title, scale=alt.Scale(type="log", base=2))
    y_scale = alt.Scale(type="log")
    y_axis = log_axis(*positive_range(df["lo"], df["hi"], df["theory"]), length=plot_px)
    theory_tip = alt.Tooltip("theory:Q", title=theory_title, format=".4g")
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
    points = base.mark_point(filled=True, size=45, opacity=1).encode(
        x=x,
        y=alt.Y("value:Q", scale=y_scale, title=y_title, axis=y_axis),
        color=color,
        tooltip=tooltip,
    )
    marker = d_marker()
    return alt.layer(
        theory,
        bars,
        points,
        marker,
        # drawn half width: two side by side
        title=chart_title(title, subtitle, subtitle_columns=HALF_SUBTITLE_LINE_COLUMNS),
        description=description,
        height=300,
    )


def alpha_heatmap(
    df: pd.DataFrame,
    rules: pd.DataFrame,
    *,
    title: str,
    x_title: str,
    y_title: str,
    color_title: str,
    description: str,
    tips: dict[str, str],
) -> alt.LayerChart:
    """A statistic in [0, 1] over the grid (dₖ, α), with horizontal rules at chosen α.

    Parameters
    ----------
    df : DataFrame
        One row per cell: ``d`` (ordinal x, ascending), ``alpha`` (evenly spaced),
        ``share`` (colour, 0 … 1), ``share_se``.
    rules : DataFrame
        ``alpha``, ``label`` (legend text), ``color`` (hex) of the exponents to draw,
        e.g. α = ½ and α = 1.
    tips : dict
        Tooltip titles: ``se`` (the cell's standard error), ``rule`` (a rule's label).
    """
    check_rows(df)
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
    return alt.layer(
        rect,
        lines,
        resolve=alt.Resolve(scale=alt.ScaleResolveMap(color="independent")),
        title=chart_title(title),
        description=description,
        height=440,  # a legend above and a colour ramp below the plot
    )


#: The builders :func:`chart` styles, by name.
BUILDERS = {
    "sweep_lines": legacy_sweep_lines,
    "logit_scale": logit_scale,
    "alpha_heatmap": alpha_heatmap,
}


def chart(
    builder: str, *frames: pd.DataFrame, legend_cols: int | None = 2, **options
) -> alt.LayerChart:
    """``BUILDERS[builder](*frames, **options)``, styled for this page.

    ``legend_cols`` entries per legend row at most (half-width charts cannot fit four
    Chinese α labels in one row; beside the open sidebar they take one a row), with the
    plot :data:`HALF_PLOT_PX` tall and the title and legend below and above it adding
    to the chart's height (fitted into one fixed height, a four-row legend left a plot
    a few dozen pixels tall); None keeps the builder's legend and height. Sections pass
    this call deferred to ``workshop.chart``, which builds it once per distinct input.
    """
    if legend_cols:
        options = {**options, "legend_columns": legend_cols, "plot_px": HALF_PLOT_PX}
    out = BUILDERS[builder](*frames, **options)
    if legend_cols:
        out.height = HALF_PLOT_PX
        out.autosize = alt.AutoSizeParams(type="fit-x", contains="padding")
    # full-strength legend symbols (a legend otherwise takes its band's opacity)
    out.config = alt.Config(legend=alt.LegendConfig(symbolOpacity=1))
    return out
