"""Altair builders of the story's answers with trained models: the training lab's final loss
against the learning rate, the language model's held-out loss against the learning rate,
and the real model's attention entropy per layer under each divisor; drawn by their pages
and, in small, by the recap (conventions: :mod:`ui.common.charts`).
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from ui.common.axes import log_axis
from ui.common.charts import (
    COLORS,
    MARKER_RULE,
    NARROW_CHART_PX,
    ChartText,
    band_and_line,
    chart_title,
    check_rows,
    legend_below,
    legend_colors,
)

# --- the training lab ---------------------------------------------------------------------
#: Dash patterns of the series, in legend order (solid, dashed, dotted, …): two series on
#: top of each other (no dead rows with either scale) still both show.
SERIES_DASHES = ([1, 0], [7, 3], [2, 2], [8, 3, 2, 3], [4, 4])


def series_legend(legend_columns: int) -> alt.Legend:
    return alt.Legend(
        orient="bottom",
        columns=legend_columns,
        symbolOpacity=1,
        labelLimit=220,
        symbolType="stroke",
    )


#: A series' legend text and colour (hex), in legend order.
Series = tuple[tuple[str, str], ...]


def legend_series(df: pd.DataFrame) -> Series:
    """The frame's series, (legend text, colour) in order of first appearance."""
    order, colors = legend_colors(df, "series")
    return tuple(zip(order, colors, strict=True))


def series_color(series: Series, legend_columns: int) -> alt.Color:
    """The series' colour channel in legend order (a frame's :func:`legend_series`, or
    given), with its legend below in ``legend_columns`` columns (the training lab's
    charts)."""
    order = [text for text, _ in series]
    return alt.Color(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(domain=order, range=[color for _, color in series]),
        legend=series_legend(legend_columns),
    )


def series_dash(series: Series, legend_columns: int) -> alt.StrokeDash:
    """The series' dash patterns (:data:`SERIES_DASHES`), in the colour legend's order: the lines
    differ by more than their hue."""
    order = [text for text, _ in series]
    return alt.StrokeDash(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(
            domain=order, range=[SERIES_DASHES[i % len(SERIES_DASHES)] for i in range(len(order))]
        ),
        legend=series_legend(legend_columns),
    )


def lr_lines(
    frames: pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame],
    text: ChartText,
    *,
    series: Series,
    lr_range: tuple[float, float],
    y_domain: tuple[float, float],
    current_lr: float | None = None,
    uniform: float | None = None,
    legend_columns: int = 2,
    height: int = 400,
    width_px: float = 300,
) -> alt.LayerChart:
    """Final loss against learning rate (log–log), one line per variant with a band.

    It draws its frames as they are: the legend, the axes and their ranges come from the
    options, so one spec serves every d_k of a sweep (``workshop.chart(...,
    swap_data=True)``) and the browser moves only the lines.

    Parameters
    ----------
    frames : DataFrame, or (DataFrame, DataFrame)
        The sweep, one row per (variant, rate): ``lr``, ``series``, ``value`` (median over
        seeds, > 0), ``lo``, ``hi`` (min and max over seeds), ``ratio`` (median gap left),
        ``diverged`` (seeds that diverged), and possibly ``color`` (not drawn); optionally
        with ℓ₀ of each variant: ``series``, ``y`` — dashed rules in its colour.
    text : ChartText
        ``title`` (a ``|`` breaks its line), ``x``, ``y``, ``alt``; ``tips``:
        ``series``, ``lr``, ``value``, ``lo``, ``hi``, ``ratio``, ``diverged``, and
        ``initial`` with ℓ₀, ``uniform`` with ``uniform``.
    series : tuple of (str, str)
        Each variant's legend text and colour, in legend order
        (:func:`ui.story.lr_sweep.lines_options`).
    lr_range : (float, float)
        The sweep's lowest and highest rate (the rate axis).
    y_domain : (float, float)
        The loss axis's range, shared by every d_k shown
        (:func:`ui.story.lr_sweep.loss_domain`).
    current_lr : float or None
        The learner's learning rate, marked with a vertical rule (None: no rule).
    uniform : float, optional
        The loss of uniform attention on the task: a solid grey rule; a run that ends
        above it fails.
    width_px : float
        The narrowest the plot is drawn, px (the rate axis is labelled to fit).
    """
    df, initial = frames if isinstance(frames, tuple) else (frames, None)
    check_rows(df)
    x_title, y_title, tips = text.x, text.y, text.tips
    color = series_color(series, legend_columns)
    x_axis = log_axis(*lr_range, length=width_px, orient="x")
    x = alt.X("lr:Q", title=x_title, scale=alt.Scale(type="log"), axis=x_axis)
    y_scale = alt.Scale(type="log", domain=list(y_domain))
    # the plot takes about half the chart's height (title and legend the rest)
    y_axis = log_axis(*y_domain, length=height / 2)
    tooltip = [
        alt.Tooltip("series:N", title=tips["series"]),
        alt.Tooltip("lr:Q", title=tips["lr"], format=".3~g"),
        alt.Tooltip("value:Q", title=tips["value"], format=".4g"),
        alt.Tooltip("lo:Q", title=tips["lo"], format=".4g"),
        alt.Tooltip("hi:Q", title=tips["hi"], format=".4g"),
        alt.Tooltip("ratio:Q", title=tips["ratio"], format=".3g"),
        alt.Tooltip("diverged:Q", title=tips["diverged"], format="d"),
    ]
    layers = band_and_line(
        df,
        x=x,
        y_scale=y_scale,
        y_title=y_title,
        color=color,
        tooltip=tooltip,
        band_opacity=0.15,
        y_axis=y_axis,
    )
    layers[1] = layers[1].encode(strokeDash=series_dash(series, legend_columns))
    if initial is not None:
        layers.append(
            alt.Chart(initial)
            .mark_rule(strokeDash=[5, 4], strokeWidth=1.2, opacity=0.8)
            .encode(
                y=alt.Y("y:Q", scale=y_scale),
                color=color,
                tooltip=[
                    alt.Tooltip("series:N", title=tips["series"]),
                    alt.Tooltip("y:Q", title=tips["initial"], format=".4g"),
                ],
            )
        )
    if uniform is not None:
        layers.append(
            alt.Chart(pd.DataFrame({"y": [uniform]}))
            .mark_rule(color=COLORS["theory"], strokeWidth=1.5)
            .encode(
                y=alt.Y("y:Q", scale=y_scale),
                tooltip=[alt.Tooltip("y:Q", title=tips["uniform"], format=".4g")],
            )
        )
    if current_lr is not None:
        layers.append(
            alt.Chart(pd.DataFrame({"lr": [current_lr]}))
            .mark_rule(**MARKER_RULE)
            .encode(x=alt.X("lr:Q"), tooltip=[alt.Tooltip("lr:Q", title=tips["lr"], format=".3~g")])
        )
    lines = text.title.split("|")  # a title of several lines, or one string
    title = alt.Title(lines if len(lines) > 1 else text.title)
    return alt.layer(*layers, title=title, description=text.description, height=height)


# --- the language model ----------------------------------------------------------------
#: Height of a chart drawn half width (two side by side), px: plot, title and legend.
HALF_HEIGHT = 330


def variants_color(df: pd.DataFrame, lines: bool = False) -> alt.Color:
    """The variants' colour channel, in the frame's order, with its legend below
    (``lines``: its symbols are strokes, for the dashed lines of :func:`variants_dash`)."""
    order, colors = legend_colors(df, "series")
    symbols = {"symbolType": "stroke"} if lines else {}
    return alt.Color(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(domain=order, range=colors),
        legend=legend_below(order, columns=2, symbolOpacity=1, **symbols),
    )


#: Dash patterns of the variants, in legend order: lines that meet (every variant at the
#: lowest rates) still show each one.
VARIANT_DASHES = ([1, 0], [7, 3], [2, 2], [8, 3, 2, 3])


def variants_dash(df: pd.DataFrame) -> alt.StrokeDash:
    """The variants' dash patterns (:data:`VARIANT_DASHES`), in the colour legend's order."""
    order, _ = legend_colors(df, "series")
    return alt.StrokeDash(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(
            domain=order, range=[VARIANT_DASHES[i % len(VARIANT_DASHES)] for i in range(len(order))]
        ),
        legend=legend_below(order, columns=2, symbolOpacity=1, symbolType="stroke"),
    )


#: Where a reference line's label goes: above its left or its right end.
REFERENCE_LABEL_AT = {
    "left": {"align": "left", "x": 4},
    "right": {"align": "right", "x": "width", "dx": -4},
}


def reference_line(y: float, label: str, tip: str, y_title: str, side: str) -> list[alt.Chart]:
    """A dashed grey horizontal line at ``y`` with ``label`` above its ``side`` end
    (where the curves leave room)."""
    ref = pd.DataFrame({"y": [y], "label": [label]})
    rule = (
        alt.Chart(ref)
        .mark_rule(color=COLORS["theory"], strokeDash=[4, 3])
        .encode(
            y=alt.Y("y:Q"),
            tooltip=[
                alt.Tooltip("label:N", title=tip),
                alt.Tooltip("y:Q", title=y_title, format=".4g"),
            ],
        )
    )
    words = (
        alt.Chart(ref)
        .mark_text(baseline="bottom", dy=-2, tooltip=False, **REFERENCE_LABEL_AT[side])
        .encode(y=alt.Y("y:Q"), text=alt.Text("label:N"))
    )
    return [rule, words]


def loss_against_rate(
    df: pd.DataFrame,
    text: ChartText,
    *,
    reference: float,
    y_domain: tuple[float, float],
    rates: tuple[float, float],
    current_lr: float | None = None,
) -> alt.LayerChart:
    """Final held-out loss against the learning rate (log axis), one line per variant
    through the seed mean, a band from the lowest to the highest seed, each variant's best
    rate as a large point, a reference loss (Wortsman et al. 2023, Figure 1) and the
    learner's rate as a dashed rule.

    Parameters
    ----------
    df : DataFrame
        One row per (variant, rate): ``series``, ``color``, ``lr``, ``value``, ``lo``,
        ``hi``, ``best`` (bool), ``sensitivity``.
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``, ``reference`` (the reference line's label);
        ``tips``: ``series``, ``lr``, ``lo``, ``hi``, ``sensitivity``, ``best``,
        ``reference``.
    reference : float
        The reference loss (the held-out unigram loss), nats/character.
    y_domain : (float, float)
        The y-range, shared by the charts of both head sizes.
    rates : (float, float)
        The lowest and highest rate of the grid.
    current_lr : float, optional
        The learner's rate, marked by a dashed vertical rule (``tips.rate``).
    """
    check_rows(df)
    tips = text.tips
    lo, hi = rates
    # the labels are short plain numbers (0.001 … 0.1): a phone's width fits all of them,
    # and so does a half-width chart's
    x_axis = log_axis(lo, hi, length=NARROW_CHART_PX, orient="x")
    x = alt.X(
        "lr:Q",
        title=text.x,
        scale=alt.Scale(type="log", domain=[lo / 1.5, hi * 1.5], nice=False),
        axis=x_axis,
    )
    y_scale = alt.Scale(domain=list(y_domain), nice=False)
    color = variants_color(df, lines=True)
    tooltip = [
        alt.Tooltip("series:N", title=tips["series"]),
        alt.Tooltip("lr:Q", title=tips["lr"], format=".3~g"),
        alt.Tooltip("value:Q", title=text.y, format=".4g"),
        alt.Tooltip("lo:Q", title=tips["lo"], format=".4g"),
        alt.Tooltip("hi:Q", title=tips["hi"], format=".4g"),
        alt.Tooltip("sensitivity:Q", title=tips["sensitivity"], format=".3f"),
    ]
    layers = band_and_line(
        df.drop(columns="best"),
        x=x,
        y_scale=y_scale,
        y_title=text.y,
        color=color,
        tooltip=tooltip,
        band_opacity=0.2,
    )
    layers[1] = layers[1].encode(strokeDash=variants_dash(df))
    best = (
        alt.Chart(df[df["best"]].drop(columns=["color", "best"]))
        .mark_point(size=150, filled=True, opacity=1, stroke="white", strokeWidth=1)
        .encode(
            x=x,
            y=alt.Y("value:Q", scale=y_scale),
            color=color,
            tooltip=[
                alt.Tooltip("series:N", title=tips["series"]),
                alt.Tooltip("lr:Q", title=tips["best"], format=".3~g"),
                alt.Tooltip("value:Q", title=text.y, format=".4g"),
            ],
        )
    )
    # the top rates climb toward the reference on the right
    layers += [
        best,
        *reference_line(reference, text["reference"], tips["reference"], text.y, "left"),
    ]
    if current_lr is not None:
        layers.append(
            alt.Chart(pd.DataFrame({"lr": [current_lr]}))
            .mark_rule(**MARKER_RULE)
            .encode(
                x=alt.X("lr:Q"), tooltip=[alt.Tooltip("lr:Q", title=tips["rate"], format=".3~g")]
            )
        )
    return alt.layer(
        *layers,
        title=chart_title(text.title, text.subtitle),
        description=text.description,
        height=HALF_HEIGHT,
    )


# --- the real model ----------------------------------------------------------------------
#: Colour of each counterfactual divisor (as the rest of the app: none, √d_k, d_k).
REAL_DIVISOR_COLORS = {
    "none": COLORS["unscaled"],
    "sqrt_d_k": COLORS["sqrt"],
    "d_k": COLORS["linear"],
}


def _q(field: str, title: str, fmt: str) -> alt.Tooltip:
    return alt.Tooltip(field=field, type="quantitative", title=title, format=fmt)


def divisor_layer_bars(
    df: pd.DataFrame,
    text: ChartText,
    *,
    value: str,
    labels: tuple[tuple[str, str], ...],
    fmt: str = ".3f",
    axis_format: str = "~g",
    reference: float | None = None,
) -> alt.LayerChart:
    """Grouped bars: one statistic per layer, one bar per counterfactual divisor.

    Parameters
    ----------
    df : DataFrame
        One row per (divisor, layer): ``divisor`` (a name of
        :data:`core.real_models.DIVISORS`), ``layer`` and the column ``value``.
    text : ChartText
        ``title``, ``x`` (layers), ``y``, ``alt``; ``tips.series`` (the divisor); with a
        ``reference``, ``reference`` (its label) and ``tips.reference``.
    labels : tuple of (str, str)
        (divisor name, legend text) pairs, in display order.
    fmt, axis_format : str
        d3 formats of the tooltip value and the y-axis labels (e.g. ``".1%"``, ``"%"``).
    reference : float, optional
        A dashed horizontal line at this y (e.g. the mean ln T).

    Raises
    ------
    ValueError
        If ``reference`` is given and ``text`` has no ``tips.reference`` (its tooltip
        title).
    """
    check_rows(df)
    if reference is not None and "reference" not in text.tips:
        raise ValueError("a reference line needs tips.reference (its tooltip title)")
    x_title, y_title = text.x, text.y
    labels = dict(labels)
    order = list(labels.values())
    data = df.assign(series=df["divisor"].map(labels))[["series", "layer", value]]
    bars = (
        alt.Chart(data)
        .mark_bar()
        .encode(
            x=alt.X(field="layer", type="ordinal", title=x_title, axis=alt.Axis(labelAngle=0)),
            xOffset=alt.XOffset(field="series", type="nominal", sort=order),
            y=alt.Y(
                field=value, type="quantitative", title=y_title, axis=alt.Axis(format=axis_format)
            ),
            color=alt.Color(
                field="series",
                type="nominal",
                title=None,
                sort=order,
                scale=alt.Scale(domain=order, range=[REAL_DIVISOR_COLORS[n] for n in labels]),
                legend=legend_below(order, columns=1),
            ),
            tooltip=[
                alt.Tooltip(field="series", type="nominal", title=text.tips["series"]),
                alt.Tooltip(field="layer", type="ordinal", title=x_title),
                _q(value, y_title, fmt),
            ],
        )
    )
    layers = [bars]
    if reference is not None:
        layers.append(
            alt.Chart(pd.DataFrame({"y": [reference], "label": [text["reference"]]}))
            .mark_rule(color=COLORS["theory"], strokeDash=[4, 3], strokeWidth=1.5)
            .encode(
                y=alt.Y(field="y", type="quantitative"),
                tooltip=[
                    alt.Tooltip(field="label", type="nominal", title=text.tips["reference"]),
                    _q("y", y_title, ".3f"),
                ],
            )
        )
    # the plot's own height, the title and the legend add to it: drawn half width, the
    # title and the legend take more lines (fitted into one height, the plot shrank)
    return alt.layer(
        *layers,
        title=chart_title(text.title),
        description=text.description,
        height=190,
        autosize=alt.AutoSizeParams(type="fit-x", contains="padding"),
    )
