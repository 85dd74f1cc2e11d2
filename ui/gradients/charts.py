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
from ui.common.expr import Expr, exp, live_layer, maximum, minimum, param, sqrt, vega_text
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


def gap_point(n_keys: int, gap2: float | None) -> dict[str, Expr]:
    """p_k, ‖J‖_F and the largest off-diagonal |Jᵢⱼ| of the gap explorer's row at the gap
    the browser's slider holds (``gap``), as :func:`core.gradients.gap_curve` computes
    them in closed form: with ε = e^(−min(gap2, g)) for the runner-up (e^(−g) without
    one) and e^(−g) for each of the other n_keys − 2 keys, S = 1 + Σε, p_k = 1/S,
    ‖J‖_F² = (Σε)²/S⁴ + Σε²(1 + 2/S² + Σε²/S²)/S² − 2Σε³/S³ and max|Jᵢⱼ| = ε_runner-up/S².

    :func:`core.gradients.gap_curve` is the source of truth: tests/ui/gradients compares
    them. References: docs/mathematics.md §4.2.
    """
    g = param("gap")
    bulk = exp(-g)
    runner = bulk if gap2 is None else exp(-minimum(float(gap2), g))
    others = float(n_keys - 2)
    s1 = runner + others * bulk
    s2 = runner * runner + others * (bulk * bulk)
    s3 = runner * runner * runner + others * (bulk * bulk * bulk)
    total = 1 + s1
    total_sq = total * total
    fro_sq = (
        s1 * s1 / (total_sq * total_sq)
        + s2 * (1 + 2 / total_sq + s2 / total_sq) / total_sq
        - 2 * s3 / (total_sq * total)
    )
    return {"p_top": 1 / total, "fro": sqrt(maximum(fro_sq, 0)), "offdiag": runner / total_sq}


#: The line of values at the top of the gap explorer's plot (12 px text 4 px down) ends
#: above this many pixels; the slider's rule starts there.
VALUES_LINE_PX = 20


def gap_explorer(
    df: pd.DataFrame, text: ChartText, *, n_keys: int, gap2: float | None, inputs: tuple
) -> alt.LayerChart:
    """‖J‖_F and the largest off-diagonal |Jᵢⱼ| against the logit gap g, exact and laws,
    with the gap of the slider under the chart (``inputs``: the one (key, label, lo, hi,
    step, value) of ``gap``, :func:`ui.common.live.live_chart`) marked by a rule, a point
    on each exact curve and a line of its values, computed in the browser
    (:func:`gap_point`).

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
        curves (solid) and the laws (dashed), ``exact`` and ``law``; ``point``, the line of
        values at the marked gap, written by the browser: fields ``{g}``, ``{p}``, ``{fro}``
        and ``{offdiag}`` (doubled braces in the catalog, where the server's fields are
        single);
        ``tips``: ``quantity``, ``kind`` (the two legend fields).
    n_keys, gap2 : int, float or None
        The row's keys and runner-up gap (:func:`core.gradients.gap_logits`).
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
    # the slider's gap, computed in the browser: a rule, a point on each exact curve, and
    # the values written above the plot
    point = gap_point(n_keys, gap2)
    here = alt.Chart(alt.InlineData(values=[{"at": 0}])).transform_calculate(
        g=param("gap").vega, **{k: e.vega for k, e in point.items()}
    )
    # the rule stops under the line of values at the top, which may run across it
    marker = here.mark_rule(**MARKER_RULE).encode(
        x=alt.X("g:Q"),
        y=alt.YValue(VALUES_LINE_PX),
        y2=alt.Y2Value({"expr": "height"}),
        tooltip=[alt.Tooltip("g:Q", title=x_title, format=".1f")],
    )
    dots = [
        here.mark_point(filled=True, size=60, color=COLORS[c], opacity=1).encode(
            x=alt.X("g:Q"),
            y=alt.Y(f"{name}:Q", scale=y_scale),
            tooltip=[
                alt.Tooltip("g:Q", title=x_title, format=".1f"),
                alt.Tooltip(f"{name}:Q", title=text[name], format=".3e"),
            ],
        )
        for name, c in (("fro", "sqrt"), ("offdiag", "custom"))
    ]
    values = here.transform_calculate(
        line=vega_text(
            text["point"], g=("g", ".3~f"), p=("p_top", ".4~g"), fro=("fro", ".3~e"),
            offdiag=("offdiag", ".3~e"),
        )
    ).mark_text(align="right", baseline="top", fontSize=12, tooltip=False).encode(
        x=alt.XValue(value={"expr": "width - 4"}), y=alt.value(4), text=alt.Text("line:N")
    )  # fmt: skip
    return live_layer(
        lines, *names, marker, *dots, values, text=text, height=GAP_PLOT_PX, inputs=inputs
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
