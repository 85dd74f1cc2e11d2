"""Altair builders of the training page (conventions: :mod:`ui.common.charts`)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ui.common.axes import log_axis, positive_range
from ui.common.charts import (
    COLORS,
    HALF_SUBTITLE_LINE_COLUMNS,
    ChartText,
    chart_title,
    check_rows,
)
from ui.story.trained_charts import (  # noqa: F401  (lr_lines: the page's)
    legend_series,
    lr_lines,
    series_color,
    series_dash,
)

#: Pixels of one probe row's height in the probe heatmap (a key's width is the chart's
#: width over the keys: about 20 px on a phone, 35 at 1400 px with two charts to a row).
PROBE_ROW_PX = 14
#: Gap between two steps' bands, as a share of a band's step.
PROBE_STEP_GAP = 0.2


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
    series = legend_series(df)
    color = series_color(series, legend_columns)
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
        strokeDash=series_dash(series, legend_columns),
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
