"""Altair builders of the √d_k-vs-d_k page (conventions: :mod:`ui.common.charts`)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ui.common.axes import log_axis
from ui.common.charts import (
    COLORS,
    D_K,
    MARKER_DATASET,
    ChartText,
    chart_title,
    check_rows,
    gradient_legend_below,
    legend_above,
    legend_below,
    own_data,
    sweep_lines,
)
from ui.common.expr import Expr, field, live_layer, param, power, vega_text, where
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


#: The closed-form chart's y-axis: its smallest value, 1/√4096 (the other keys' std under
#: ÷d_k at the largest d_k) is 0.0156, its largest 0.95·√4096 = 60.8.
THEORY_Y = (0.01, 100.0)
#: The closed-form chart's plot height, px.
THEORY_PLOT_PX = 300


def logit_mean(alpha: Expr | float) -> Expr:
    """The relevant key's mean logit ρ·d^(1−α) at d_k (field ``d``), ρ from the slider
    ``alignment``, as the browser computes it (:func:`core.scaling.relevant_logit_mean`)."""
    return param("alignment") * power(field("d"), 1 - alpha)


def logit_std(alpha: Expr | float) -> Expr:
    """Another key's logit std d^(½−α) at d_k (field ``d``), as the browser computes it
    (:func:`core.scaling.independent_logit_std`)."""
    return power(field("d"), 0.5 - alpha)


def logit_theory() -> Expr:
    """:func:`logit_mean` (field ``signal`` 1) or :func:`logit_std` (``signal`` 0) under
    the divisor d^α (field ``alpha``).

    :func:`core.scaling.relevant_logit_mean` and :func:`core.scaling.independent_logit_std`
    are the source of truth: tests/ui/sqrt_vs_d compares them. References:
    docs/mathematics.md §2.2.
    """
    alpha = field("alpha")
    return where(field("signal") > 0.5, logit_mean(alpha), logit_std(alpha))


def logit_theory_lines(df: pd.DataFrame, text: ChartText, *, inputs: tuple) -> alt.LayerChart:
    """The relevant key's mean logit (solid) and the other keys' logit std (dashed)
    against d_k under ÷√d_k and ÷d_k, for the alignment ρ of the slider under the chart
    (``inputs``: the (key, label, lo, hi, step, value) of ``alignment``,
    :func:`ui.common.live.live_chart`), computed in the browser (:func:`logit_theory`);
    a rule at 1 (logits of order one), the page's d_k marked, the four values at it above
    the plot.

    Parameters
    ----------
    df : DataFrame
        One row per (divisor, quantity, d): ``d``, ``divisor`` and ``quantity`` (legend
        labels), ``alpha`` (½ or 1), ``signal`` (1 the mean, 0 the std).
    text : ChartText
        ``title``, ``subtitle`` (which line is which), ``x``, ``y``, ``alt``; ``sqrt``,
        ``linear`` (the divisors' labels),
        ``mean``, ``std`` (the quantities'); ``point_sqrt`` and ``point_linear``: the
        values at d_k under each divisor, written by the browser, fields ``{m}`` (the
        mean) and ``{s}`` (the std), doubled braces in the catalog; ``tips``:
        ``divisor``, ``quantity``.

    The values at the page's d_k come from the marker's dataset
    (:data:`ui.common.charts.MARKER_DATASET`): draw it with ``marker=d_k``.
    """
    check_rows(df)
    divisors, quantities = [text["sqrt"], text["linear"]], [text["mean"], text["std"]]
    x = alt.X("d:Q", title=text.x, scale=alt.Scale(type="log", base=2))
    y_scale = alt.Scale(type="log", domain=list(THEORY_Y))
    value = logit_theory().vega
    lines = (
        alt.Chart(df)
        .transform_calculate(value=value)
        .mark_line(strokeWidth=2.5)
        .encode(
            x=x,
            y=alt.Y(
                "value:Q", title=text.y, scale=y_scale,
                axis=log_axis(*THEORY_Y, length=THEORY_PLOT_PX),
            ),
            color=alt.Color(
                "divisor:N", title=None, sort=divisors,
                scale=alt.Scale(domain=divisors, range=[COLORS["sqrt"], COLORS["linear"]]),
                legend=legend_below(divisors, columns=2, symbolType="stroke"),
            ),
            strokeDash=alt.StrokeDash(
                "quantity:N", title=None, sort=quantities,
                scale=alt.Scale(domain=quantities, range=[[1, 0], [6, 4]]),
                legend=None,  # the subtitle says which is which (the values lines sit above)
            ),
            tooltip=[
                alt.Tooltip("divisor:N", title=text.tips["divisor"]),
                alt.Tooltip("quantity:N", title=text.tips["quantity"]),
                alt.Tooltip("d:Q", title=text.x, format="d"),
                alt.Tooltip("value:Q", title=text.y, format=".3~g"),
            ],
        )
    )  # fmt: skip
    one = (
        alt.Chart(alt.InlineData(values=[{"y": 1.0}]))
        .mark_rule(color=COLORS["theory"], strokeDash=[2, 2])
        .encode(
            y=alt.Y("y:Q", scale=y_scale), tooltip=[alt.Tooltip("y:Q", title=text.y, format=".1~f")]
        )
    )
    # the values at the page's d_k above the plot, one line per divisor (one long line
    # would squeeze the plot on a phone: the chart fits its text in too); d_k is the
    # marker's row (live_chart(..., marker=d_k) layers the rule itself)
    fields = {
        "ms": logit_mean(0.5).vega, "ss": logit_std(0.5).vega,  # ÷√d_k
        "ml": logit_mean(1.0).vega, "sl": logit_std(1.0).vega,  # ÷d_k
    }  # fmt: skip
    here = alt.Chart(alt.NamedData(name=MARKER_DATASET)).transform_calculate(**fields)
    values = []
    for name, tag, dy in (("point_sqrt", "s", -22), ("point_linear", "l", -6)):
        line = vega_text(text[name], d=("d", "d"), m=(f"m{tag}", ".3~g"), s=(f"s{tag}", ".3~g"))
        values.append(
            here.transform_calculate(line=line)
            .mark_text(align="left", baseline="bottom", fontSize=12, tooltip=False)
            .encode(x=alt.value(0), y=alt.value(dy), text=alt.Text("line:N"))
        )
    return live_layer(lines, one, *values, text=text, height=THEORY_PLOT_PX, inputs=inputs)
