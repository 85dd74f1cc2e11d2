"""Altair builders of the home page's worked example (conventions: :mod:`ui.common.charts`)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ui.common.charts import (
    HALF_SUBTITLE_LINE_COLUMNS,
    ChartText,
    cell_ink,
    chart_title,
    check_rows,
)


def matrix_cells(
    df: pd.DataFrame,
    text: ChartText,
    *,
    value: str,
    domain: tuple[float, float],
    diverging: bool,
    number_format: str = ".2f",
) -> alt.LayerChart:
    """A small matrix, every cell coloured by ``value`` and printed in it (drawn half width).

    Parameters
    ----------
    df : DataFrame
        One row per cell: ``i`` (query, 1-based, the rows), ``j`` (key, the columns) and
        the column ``value``; other columns (the rest of the example, in its CSV) are
        not drawn.
    text : ChartText
        ``title``, ``subtitle``, ``x`` (keys), ``y`` (queries), ``color`` (the value's
        legend and tooltip title), ``alt``.
    value : str
        The column drawn, e.g. ``"score"``.
    domain : (lo, hi)
        The colour scale's range: the same for the two charts that are compared (the
        scores and the logits share one; the two weight matrices [0, 1]).
    diverging : bool
        A blue–orange scale centred on 0 (scores, logits) instead of a sequential blue one
        (weights).
    number_format : str
        d3 format of the number printed in each cell.
    """
    check_rows(df)
    x_title, y_title, value_title = text.x, text.y, text["color"]
    x = alt.X("j:O", title=x_title, axis=alt.Axis(labelAngle=0, grid=False, orient="top"))
    y = alt.Y("i:O", title=y_title, axis=alt.Axis(grid=False))
    if diverging:
        scale = alt.Scale(scheme="blueorange", domain=list(domain), domainMid=0)
    else:
        scale = alt.Scale(scheme="blues", domain=list(domain))
    cells = (
        alt.Chart()
        .mark_rect()
        .encode(
            x=x,
            y=y,
            # every cell prints its number: the colour needs no legend
            color=alt.Color(f"{value}:Q", title=value_title, scale=scale, legend=None),
            tooltip=[
                alt.Tooltip("i:O", title=y_title),
                alt.Tooltip("j:O", title=x_title),
                alt.Tooltip(f"{value}:Q", title=value_title, format=".4g"),
            ],
        )
    )
    text_marks = (
        alt.Chart()
        .mark_text(fontSize=13, color=cell_ink(value), tooltip=False)
        .encode(x=x, y=y, text=alt.Text(f"{value}:Q", format=number_format))
    )
    return alt.layer(
        cells,
        text_marks,
        data=df[["i", "j", value]],
        title=chart_title(
            text.title, text.subtitle, subtitle_columns=HALF_SUBTITLE_LINE_COLUMNS
        ),  # half width
        description=text.description,
        height=96,
    )
