"""Altair builders of the training page (conventions: :mod:`ui.common.charts`)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ui.common.axes import log_axis, positive_range
from ui.common.charts import (
    COLORS,
    HALF_SUBTITLE_LINE_COLUMNS,
    MARKER_RULE,
    ChartText,
    band_and_line,
    chart_title,
    check_rows,
    legend_colors,
)

#: Pixels of one probe row's height in the probe heatmap (a key's width is the chart's
#: width over the keys: about 20 px on a phone, 35 at 1400 px with two charts to a row).
PROBE_ROW_PX = 14
#: Gap between two steps' bands, as a share of a band's step.
PROBE_STEP_GAP = 0.2


#: Dash patterns of the series, in legend order (solid, dashed, dotted, …): two series on
#: top of each other (no dead rows with either scale) still both show.
DASHES = ([1, 0], [7, 3], [2, 2], [8, 3, 2, 3], [4, 4])


def _legend(legend_columns: int) -> alt.Legend:
    return alt.Legend(
        orient="bottom",
        columns=legend_columns,
        symbolOpacity=1,
        labelLimit=220,
        symbolType="stroke",
    )


def _color(df: pd.DataFrame, legend_columns: int) -> alt.Color:
    order, colors = legend_colors(df, "series")
    return alt.Color(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(domain=order, range=colors),
        legend=_legend(legend_columns),
    )


def _dash(df: pd.DataFrame, legend_columns: int) -> alt.StrokeDash:
    """The series' dash patterns (:data:`DASHES`), in the colour legend's order: the lines
    differ by more than their hue."""
    order, _ = legend_colors(df, "series")
    return alt.StrokeDash(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(domain=order, range=[DASHES[i % len(DASHES)] for i in range(len(order))]),
        legend=_legend(legend_columns),
    )


def curves(
    df: pd.DataFrame,
    text: ChartText,
    *,
    log_y: bool = False,
    y_domain: tuple[float, float] | None = None,
    reference: float | None = None,
    legend_columns: int = 1,
    height: int = 380,
) -> alt.LayerChart:
    """A per-step statistic, one colour per variant: faint raw points, a smoothed line.

    Parameters
    ----------
    df : DataFrame
        ``step``, ``series`` (legend label), ``color`` (hex), ``raw`` (the batch's
        value), ``smooth`` (moving average).
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``; ``tips``: ``series``, ``step``, ``smooth``,
        ``raw``; with a ``reference``, ``reference`` (its label) and ``tips.reference``.
    log_y : bool
        Logarithmic y-axis (values must be positive).
    y_domain : (float, float), optional
        Fixed y-range, e.g. (0, 1) for shares.
    reference : float, optional
        A horizontal dashed line at this y (e.g. ln n_keys, 1/C(n_keys, m)), labelled
        ``text["reference"]``.
    """
    check_rows(df)
    x_title, y_title, tips = text.x, text.y, text.tips
    color = _color(df, legend_columns)
    x = alt.X("step:Q", title=x_title)
    y_axis = alt.Undefined
    if log_y:  # the range of the smoothed line; single batches beyond it are clipped
        lo, hi = positive_range(df["smooth"])
        y_scale = alt.Scale(type="log", domain=[lo / 2, hi * 1.5], nice=False)
        # the plot takes about 200 of the chart's 380 px
        y_axis = log_axis(lo / 2, hi * 1.5, length=height / 2)
    elif y_domain is not None:
        y_scale = alt.Scale(domain=list(y_domain))
    else:
        y_scale = alt.Scale(zero=False)
    tooltip = [
        alt.Tooltip("series:N", title=tips["series"]),
        alt.Tooltip("step:Q", title=tips["step"], format="d"),
        alt.Tooltip("smooth:Q", title=tips["smooth"], format=".4g"),
        alt.Tooltip("raw:Q", title=tips["raw"], format=".4g"),
    ]
    base = alt.Chart(df.drop(columns="color"))
    points = base.mark_circle(size=10, opacity=0.25, clip=True).encode(
        x=x,
        y=alt.Y("raw:Q", scale=y_scale, title=y_title, axis=y_axis),
        color=color,
        tooltip=tooltip,
    )
    # a hover anywhere along the line finds its nearest step: the line's own tooltip would
    # show the first point's values, so invisible points on the line carry it
    line = base.mark_line(
        strokeWidth=2, point=alt.OverlayMarkDef(opacity=0, size=60, filled=True)
    ).encode(
        x=x,
        y=alt.Y("smooth:Q", scale=y_scale, title=y_title, axis=y_axis),
        color=color,
        strokeDash=_dash(df, legend_columns),
        tooltip=tooltip,
    )
    layers = [points, line]
    if reference is not None:
        ref = pd.DataFrame({"y": [reference], "label": [text["reference"]]})
        layers.append(
            alt.Chart(ref)
            .mark_rule(color=COLORS["theory"], strokeDash=[4, 3])
            .encode(
                y=alt.Y("y:Q"),
                tooltip=[
                    alt.Tooltip("label:N", title=tips["reference"]),
                    alt.Tooltip("y:Q", title=y_title, format=".4g"),
                ],
            )
        )
        layers.append(
            alt.Chart(ref)
            .mark_text(align="right", baseline="bottom", x="width", dx=-4, dy=-2, tooltip=False)
            .encode(y=alt.Y("y:Q"), text=alt.Text("label:N"))
        )
    return alt.layer(
        *layers, title=alt.Title(text.title), description=text.description, height=height
    )


def probe_heatmap(df: pd.DataFrame, text: ChartText) -> alt.LayerChart:
    """Attention weights of the probe rows under one scaling: a column per key, a band per
    snapshot step down the side, one thin row per probe row within a band.

    The chart takes its container's width (one per scaling, side by side on a wide
    screen), so the cells grow with the screen; its height is fixed by the rows.

    Parameters
    ----------
    df : DataFrame
        ``snapshot`` (step), ``row`` (probe row), ``key``, ``weight`` (0 … 1), ``target``
        (1 on the row's target keys, which get an orange outline), ``series`` (the
        scaling's label).
    text : ChartText
        ``title``, ``x`` (the keys), ``y`` (the steps), ``color``, ``alt``; ``tips``:
        ``series``, ``row``, ``key``, ``weight``.
    """
    check_rows(df)
    x_title, step_title, tips = text.x, text.y, text.tips
    n_rows = int(df["row"].max()) + 1 if len(df) else 1
    n_steps = df["snapshot"].nunique() if len(df) else 1
    # no grid: its lines would run across the cells
    x = alt.X(
        "key:O",
        title=x_title,
        axis=alt.Axis(labelAngle=0, grid=False, ticks=False, labelFontSize=10),
    )
    y = alt.Y(
        "snapshot:O",
        title=step_title,
        sort="ascending",
        scale=alt.Scale(paddingInner=PROBE_STEP_GAP),
        axis=alt.Axis(labelAngle=0, grid=False, ticks=False),
    )
    y_offset = alt.YOffset("row:O", sort="ascending")
    tooltip = [
        alt.Tooltip("series:N", title=tips["series"]),
        alt.Tooltip("snapshot:O", title=step_title),
        alt.Tooltip("row:O", title=tips["row"]),
        alt.Tooltip("key:O", title=tips["key"]),
        alt.Tooltip("weight:Q", title=tips["weight"], format=".3f"),
    ]
    rect = (
        alt.Chart()
        .mark_rect()
        .encode(
            x=x,
            y=y,
            yOffset=y_offset,
            color=alt.Color(
                "weight:Q",
                title=text["color"],
                scale=alt.Scale(scheme="blues", domain=[0, 1]),
                # the ramp and its end labels stay inside a chart two to a row at 800 px
                legend=alt.Legend(
                    orient="bottom", gradientLength=alt.ExprRef("clamp(width - 50, 60, 140)")
                ),
            ),
            tooltip=tooltip,
        )
    )
    target = (
        alt.Chart()
        .mark_rect(fill=None, stroke=COLORS["accent"], strokeWidth=1.5)
        .encode(x=x, y=y, yOffset=y_offset, tooltip=tooltip)
        .transform_filter(alt.datum.target == 1)
    )
    band = n_rows * PROBE_ROW_PX
    return alt.layer(
        rect,
        target,
        data=df,
        height=round(n_steps * band / (1 - PROBE_STEP_GAP)),
        title=chart_title(text.title, text.subtitle, subtitle_columns=HALF_SUBTITLE_LINE_COLUMNS),
        description=text.description,
    )


def lr_lines(
    frames: pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame],
    text: ChartText,
    *,
    current_lr: float | None = None,
    uniform: float | None = None,
    y_domain: tuple[float, float] | None = None,
    legend_columns: int = 2,
    height: int = 400,
    width_px: float = 300,
) -> alt.LayerChart:
    """Final loss against learning rate (log–log), one line per variant with a band.

    Parameters
    ----------
    frames : DataFrame, or (DataFrame, DataFrame)
        The sweep, one row per (variant, rate): ``lr``, ``series``, ``color``,
        ``value`` (median over seeds, > 0), ``lo``, ``hi`` (min and max over seeds),
        ``ratio`` (median gap left), ``diverged`` (seeds that diverged); optionally with
        ℓ₀ of each variant: ``series``, ``color``, ``y`` — dashed rules in its colour.
    text : ChartText
        ``title`` (a ``|`` breaks its line), ``x``, ``y``, ``alt``; ``tips``:
        ``series``, ``lr``, ``value``, ``lo``, ``hi``, ``ratio``, ``diverged``, and
        ``initial`` with ℓ₀, ``uniform`` with ``uniform``.
    current_lr : float or None
        The learner's learning rate, marked with a vertical rule (None: no rule).
    uniform : float, optional
        The loss of uniform attention on the task: a solid grey rule; a run that ends
        above it fails.
    y_domain : (float, float), optional
        Shared y-range of small multiples.
    width_px : float
        The narrowest the plot is drawn, px (the rate axis is labelled to fit).
    """
    df, initial = frames if isinstance(frames, tuple) else (frames, None)
    check_rows(df)
    x_title, y_title, tips = text.x, text.y, text.tips
    color = _color(df, legend_columns)
    x_axis = log_axis(*positive_range(df["lr"]), length=width_px, orient="x")
    x = alt.X("lr:Q", title=x_title, scale=alt.Scale(type="log"), axis=x_axis)
    y_span = y_domain or positive_range(df["lo"], df["value"], df["hi"])
    y_scale = (
        alt.Scale(type="log") if y_domain is None else alt.Scale(type="log", domain=list(y_domain))
    )
    # the plot takes about half the chart's height (title and legend the rest)
    y_axis = log_axis(*y_span, length=height / 2)
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
    layers[1] = layers[1].encode(strokeDash=_dash(df, legend_columns))
    if initial is not None and len(initial):
        layers.append(
            alt.Chart(initial.drop(columns="color"))
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
