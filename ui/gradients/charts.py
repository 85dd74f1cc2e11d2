"""Altair builders of the gradients page (conventions: :mod:`ui.common.charts`)."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from ui.common.charts import (
    COLORS,
    HALF_SUBTITLE_LINE_COLUMNS,
    chart_title,
    check_rows,
    gradient_legend_below,
    legend_above,
    legend_below,
    legend_colors,
    sweep_lines,
)

#: Diverging, colour-blind-safe scheme for signed Jacobian entries (blue < 0 < orange).
JACOBIAN_SCHEME = "blueorange"


#: Log-axis labels: 0.01, 0.1, 1 as decimals, smaller values as 1e-6.
LOG_LABELS = "datum.value >= 0.001 ? format(datum.value, '~g') : format(datum.value, '.0e')"


#: Ticks of the gap explorer's log axis: whole powers of ten (its values lie in 1e-14 … 1).
GAP_DECADES = [10.0**k for k in range(-20, 2)]


def jacobian_heatmap(
    df: pd.DataFrame,
    *,
    domain_max: float,
    title: str,
    subtitle: str,
    x_title: str,
    y_title: str,
    color_title: str,
    description: str,
) -> alt.Chart:
    """Heatmap of one row's softmax Jacobian J_ij = ∂p_i/∂z_j on a fixed diverging scale.

    Parameters
    ----------
    df : DataFrame
        One row per cell: ``i``, ``j`` (key numbers), ``value`` (J_ij), ``p_i``, ``p_j``.
    domain_max : float
        The colour scale spans [−domain_max, domain_max], centred on 0. Pass the same
        value to the unscaled and the scaled heatmap so they share one scale.
    """
    check_rows(df)
    m = float(domain_max) if domain_max > 0 else 1.0
    return (
        alt.Chart(df)
        .mark_rect()
        .encode(
            x=alt.X("j:O", title=x_title, axis=alt.Axis(labelAngle=0, labelOverlap=True)),
            y=alt.Y("i:O", title=y_title, axis=alt.Axis(labelOverlap=True)),
            color=alt.Color(
                "value:Q",
                title=color_title,
                scale=alt.Scale(scheme=JACOBIAN_SCHEME, domain=[-m, m], domainMid=0),
                legend=gradient_legend_below(format=".2~g"),
            ),
            tooltip=[
                alt.Tooltip("i:O", title="i"),
                alt.Tooltip("j:O", title="j"),
                alt.Tooltip("value:Q", title=color_title, format=".3e"),
                alt.Tooltip("p_i:Q", title="p_i", format=".6~g"),
                alt.Tooltip("p_j:Q", title="p_j", format=".6~g"),
            ],
        )
        .properties(
            title=chart_title(title, subtitle, subtitle_columns=HALF_SUBTITLE_LINE_COLUMNS),
            description=description,
            height=380,
        )
    )


def gap_explorer(
    df: pd.DataFrame,
    *,
    current_g: float,
    quantity_order: tuple[str, str],
    kind_order: tuple[str, str],
    title: str,
    x_title: str,
    y_title: str,
    description: str,
) -> alt.LayerChart:
    """‖J‖_F and the largest off-diagonal |J_ij| against the logit gap g, exact and laws.

    Parameters
    ----------
    df : DataFrame
        ``g``, ``quantity`` (legend label), ``kind`` (legend label: exact or law), ``value``.
    current_g : float
        The gap marked with a vertical rule.
    quantity_order : (str, str)
        Labels of ‖J‖_F (blue) and of the off-diagonal entry (reddish purple).
    kind_order : (str, str)
        Labels of the exact curves (solid) and of the laws (dashed).
    """
    check_rows(df)
    color = alt.Color(
        "quantity:N",
        title=None,
        sort=list(quantity_order),
        scale=alt.Scale(domain=list(quantity_order), range=[COLORS["sqrt"], COLORS["custom"]]),
        legend=legend_below(quantity_order),
    )
    dash = alt.StrokeDash(
        "kind:N",
        title=None,
        sort=list(kind_order),
        scale=alt.Scale(domain=list(kind_order), range=[[1, 0], [6, 4]]),
        legend=legend_above(kind_order),
    )
    x = alt.X("g:Q", title=x_title)
    y = alt.Y(
        "value:Q",
        title=y_title,
        scale=alt.Scale(type="log"),
        axis=alt.Axis(values=GAP_DECADES, labelExpr=LOG_LABELS),
    )
    tooltip = [
        alt.Tooltip("quantity:N"),
        alt.Tooltip("kind:N"),
        alt.Tooltip("g:Q", format=".2f"),
        alt.Tooltip("value:Q", format=".4~e"),
    ]
    # one line layer: exact curves wide and translucent, laws thin and dashed, so both
    # stay visible where they coincide
    # (width and opacity as literal values, not scales of "kind": a second and third
    # legend-less scale on the field of the dash legend makes Vega-Lite warn)
    exact = (df["kind"] == kind_order[0]).to_numpy()
    df = df.assign(width=np.where(exact, 4.0, 1.5), alpha=np.where(exact, 0.45, 1.0))
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
    marker = (
        alt.Chart(pd.DataFrame({"g": [current_g]}))
        .mark_rule(color=COLORS["accent"], strokeWidth=2)
        .encode(x=alt.X("g:Q"), tooltip=[alt.Tooltip("g:Q", format=".2f")])
    )
    return alt.layer(lines, marker, title=chart_title(title), description=description, height=320)


def median_mean_sweep(
    df: pd.DataFrame,
    *,
    title: str,
    subtitle: str,
    x_title: str,
    y_title: str,
    mean_label: str,
    description: str,
) -> alt.LayerChart:
    """:func:`sweep_lines` on a log y-axis (median line, quantile band) plus dashed means.

    Parameters
    ----------
    df : DataFrame
        One row per (series, d_k): ``d``, ``series``, ``color``, ``value`` (median),
        ``lo``, ``hi`` (e.g. 10 % and 90 % quantiles), ``mean``. All positive.
    mean_label : str
        Legend text of the dashed mean lines.
    """
    check_rows(df)
    df = df.assign(stat=mean_label)  # one dataset for every layer
    base = sweep_lines(
        df,
        title=title,
        x_title=x_title,
        y_title=y_title,
        description=description,
        log_y=True,
        legend_columns=2,
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
                alt.Tooltip("series:N"),
                alt.Tooltip("d:Q", title="d_k"),
                alt.Tooltip("mean:Q", title=mean_label, format=".4g"),
            ],
        )
    )
    # extend the freshly built chart in place: a second alt.layer(...) would redo the
    # (slow) merging of the layers' parameters on every rerun
    chart = base
    chart.layer.append(means)
    chart.title = chart_title(title, subtitle, subtitle_columns=HALF_SUBTITLE_LINE_COLUMNS)
    chart.height = 440  # two legends, a subtitle and a log axis spanning 30 decades
    return chart
