"""Altair builders of the "In real models" page (conventions: :mod:`ui.common.charts`).

Titles are short or a list of lines and legends sit at the bottom, so every chart reads
on a 390-px phone screen as well as at 1400 px.
"""

from __future__ import annotations

import json

import altair as alt
import pandas as pd

from ui.common.charts import COLORS, ChartText, cell_ink, chart_title, check_rows
from ui.story.trained_charts import divisor_layer_bars  # noqa: F401  (the page's)


def _q(field: str, title: str, fmt: str) -> alt.Tooltip:
    return alt.Tooltip(field=field, type="quantitative", title=title, format=fmt)


def head_grid_heatmap(
    df: pd.DataFrame,
    text: ChartText,
    *,
    value: str,
    extremes: tuple[str, str] | None = None,
    scheme: str = "viridis",
    fmt: str = ".2f",
    log_color: bool = False,
) -> alt.LayerChart:
    """Layer × head heatmap of one per-head statistic, its value printed in each cell.

    Parameters
    ----------
    df : DataFrame
        One row per (layer, head): ``layer``, ``head`` (0-based), the column ``value``
        and ``<value>_min``, ``<value>_max`` (range over sentences, for the tooltip).
    text : ChartText
        ``title``, ``x`` (heads), ``y`` (layers), ``color`` (the legend's title),
        ``alt``; ``tips``: ``layer``, ``head``, ``value``, ``min``, ``max``.
    extremes : (str, str), optional
        The columns of ``df`` that hold the tooltip's range when they are named for
        what they are rather than ``<value>_min``, ``<value>_max`` (the std grid of one
        sentence: its smallest and largest logit, ``logit_min``, ``logit_max``).
    scheme : str
        Vega colour scheme (sequential, colour-blind safe).
    log_color : bool
        Logarithmic colour scale (values must be > 0): one outlying head does not wash
        out the others.
    """
    check_rows(df)
    if extremes is not None:  # the chart's fields keep one naming whatever the CSV says
        df = df.rename(columns=dict(zip(extremes, (f"{value}_min", f"{value}_max"), strict=True)))
    x_title, y_title, tooltips = text.x, text.y, text.tips
    # no grid: its lines would run across the cells
    x = alt.X(field="head", type="ordinal", title=x_title, axis=alt.Axis(labelAngle=0, grid=False))
    y = alt.Y(field="layer", type="ordinal", title=y_title, axis=alt.Axis(grid=False))
    rect = (
        alt.Chart()
        .mark_rect(stroke="white", strokeWidth=0.5)
        .encode(
            color=alt.Color(
                field=value,
                type="quantitative",
                title=text["color"],
                scale=alt.Scale(scheme=scheme, type="log")
                if log_color
                else alt.Scale(scheme=scheme, zero=True),
                # the ramp and its end labels stay inside a half-width chart's plot
                legend=alt.Legend(
                    orient="bottom",
                    gradientLength=alt.ExprRef("clamp(width - 50, 60, 200)"),
                    titleLimit=300,
                ),
            ),
            tooltip=[
                alt.Tooltip(field="layer", type="ordinal", title=tooltips["layer"]),
                alt.Tooltip(field="head", type="ordinal", title=tooltips["head"]),
                _q(value, tooltips["value"], ".3f"),
                _q(f"{value}_min", tooltips["min"], ".3f"),
                _q(f"{value}_max", tooltips["max"], ".3f"),
            ],
        )
    )
    # the numbers in the cells only where a cell is wide enough for them (a half-width
    # chart beside the open sidebar is not); the tooltip always gives them
    min_width = 17 * df["head"].nunique()
    numbers = (
        alt.Chart()
        .mark_text(
            fontSize=9,
            opacity=alt.ExprRef(f"width >= {min_width} ? 1 : 0"),
            color=cell_ink(value),  # black or white, whichever reads on the cell
            tooltip=False,  # the cell's own tooltip gives the number
        )
        .encode(text=alt.Text(field=value, type="quantitative", format=fmt))
    )
    return alt.layer(
        rect,
        numbers,
        data=df,
        encoding=alt.FacetedEncoding(x=x, y=y),
        title=chart_title(text.title),
        description=text.description,
        # the whole chart's height (Streamlit fits the view): title, axes and the colour
        # legend below take about 200 px, the six layer rows the rest
        height=360,
    )


def logit_histogram(frames: tuple[pd.DataFrame, pd.DataFrame], text: ChartText) -> alt.LayerChart:
    """Pooled histogram of the scaled logits (bars) against the N(0, 1) density (line).

    Parameters
    ----------
    frames : (DataFrame, DataFrame)
        The bars: ``x0``, ``x1`` (bin edges), ``density``; and the curve: ``x``,
        ``density`` of N(0, 1).
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``; ``bars`` and ``curve`` (legend entries);
        ``tips``: ``bin_from``, ``bin_to`` (a bin's lower and upper edge).
    """
    bars, curve = frames
    x_title, y_title = text.x, text.y
    bars_label, curve_label = text["bars"], text["curve"]
    check_rows(bars)
    check_rows(curve)
    color = alt.Color(
        field="series",
        type="nominal",
        title=None,
        scale=alt.Scale(domain=[bars_label, curve_label], range=[COLORS["sqrt"], COLORS["theory"]]),
        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=300, symbolOpacity=1),
    )
    x_scale = alt.Scale(domain=[float(bars["x0"].min()), float(bars["x1"].max())], nice=False)
    hist = (
        alt.Chart(bars.assign(series=bars_label))
        .mark_bar(opacity=0.7, binSpacing=0)
        .encode(
            x=alt.X(field="x0", type="quantitative", title=x_title, scale=x_scale),
            x2=alt.X2(field="x1"),
            y=alt.Y(field="density", type="quantitative", title=y_title),
            # without a base, a bar ranged in x is drawn as a thin horizontal tick at y
            y2=alt.datum(0),
            color=color,
            tooltip=[
                _q("x0", text.tips["bin_from"], ".2f"),
                _q("x1", text.tips["bin_to"], ".2f"),
                _q("density", y_title, ".4f"),
            ],
        )
    )
    line = (
        alt.Chart(curve.assign(series=curve_label))
        .mark_line(strokeWidth=2, strokeDash=[5, 3])
        .encode(
            x=alt.X(field="x", type="quantitative", scale=x_scale),
            y=alt.Y(field="density", type="quantitative"),
            color=color,
            tooltip=[_q("x", x_title, ".2f"), _q("density", y_title, ".4f")],
        )
    )
    # the whole chart's height (Streamlit fits the view): title, x axis and the legend
    # below take about 190 px, the plot the rest
    return alt.layer(
        hist, line, title=chart_title(text.title), description=text.description, height=450
    )


def attention_heatmap(df: pd.DataFrame, text: ChartText, *, tokens: tuple[str, ...]) -> alt.Chart:
    """One head's attention weights: rows queries, columns keys, labelled with tokens.

    Parameters
    ----------
    df : DataFrame
        One row per (query, key): ``query``, ``key`` (positions), ``query_token``,
        ``key_token``, ``trained`` (q·k/√d_k), ``logit`` (q·k/c), ``weight``.
    text : ChartText
        ``title``, ``x`` (keys), ``y`` (queries), ``color``, ``alt``; ``tips``:
        ``query``, ``key``, ``trained``, ``logit``, ``weight``.
    tokens : tuple of str
        The sentence's tokens, by position (axis labels; repeated tokens stay apart
        because the axes are positions).
    """
    check_rows(df)
    x_title, y_title, tooltips = text.x, text.y, text.tips
    labels = f"{json.dumps(list(tokens), ensure_ascii=False)}[datum.value]"
    axis = {
        "labelExpr": labels,
        "labelLimit": 70,
        "labelFontSize": 11,
        "labelOverlap": False,
        "ticks": False,
        "grid": False,  # its lines would run across the cells
    }
    # the whole chart's height (Streamlit fits the view): title, key labels and legend
    # take about 190 px, each query row 22
    return (
        alt.Chart(df.drop(columns=["row_entropy", "row_max"], errors="ignore"))
        .mark_rect()
        .encode(
            x=alt.X(
                field="key",
                type="ordinal",
                title=x_title,
                # upright labels stay over their own column: a slanted last label
                # would reach past the chart's right edge on a phone
                axis=alt.Axis(
                    labelAngle=-90, labelAlign="left", labelBaseline="middle", orient="top", **axis
                ),
            ),
            y=alt.Y(field="query", type="ordinal", title=y_title, axis=alt.Axis(**axis)),
            color=alt.Color(
                field="weight",
                type="quantitative",
                title=text["color"],
                scale=alt.Scale(scheme="blues", domain=[0, 1]),
                legend=alt.Legend(orient="bottom", gradientLength=200),
            ),
            tooltip=[
                alt.Tooltip(field="query_token", type="nominal", title=tooltips["query"]),
                alt.Tooltip(field="key_token", type="nominal", title=tooltips["key"]),
                _q("trained", tooltips["trained"], ".3f"),
                _q("logit", tooltips["logit"], ".3f"),
                _q("weight", tooltips["weight"], ".4f"),
            ],
        )
        .properties(
            title=chart_title(text.title),
            description=text.description,
            height=190 + 22 * len(tokens),
        )
    )
