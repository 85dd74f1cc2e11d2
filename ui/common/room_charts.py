"""The chart of a room's answers to one question (no Streamlit calls: frame in, chart out)."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from ui.common.charts import COLORS, INK, ChartText, chart_title, check_rows

#: Bar colours: every answer, and the learner's own.
ROOM_COLORS = {"room": COLORS["sqrt"], "mine": COLORS["accent"]}


def answers_frame(
    labels: Sequence[str], counts: Sequence[int], mine: int | None = None
) -> pd.DataFrame:  # plain arguments: also the deferred frame of the drawn chart
    """One row per option, in the question's order: ``option`` (its label), ``order``,
    ``count``, ``share`` (of all answers, 0 when nobody answered), ``mine`` (the
    learner's own option) and ``label`` ("3 · 43 %", the text beside the bar)."""
    if len(labels) != len(counts):
        raise ValueError(f"{len(labels)} labels but {len(counts)} counts")
    total = sum(counts)
    shares = [c / total if total else 0.0 for c in counts]
    return pd.DataFrame(
        {
            "option": list(labels),
            "order": range(len(labels)),
            "count": list(counts),
            "share": shares,
            "mine": [i == mine for i in range(len(labels))],
            "label": [f"{c} · {s:.0%}" for c, s in zip(counts, shares, strict=True)],
        }
    )


def answers_chart(df: pd.DataFrame, text: ChartText, *, own: bool = False) -> alt.LayerChart:
    """Horizontal bars: the number of answers per option, labelled with count and share;
    the learner's own option (``mine``) in the accent colour.

    ``text``: ``title``, ``subtitle`` (``subtitle_mine`` when the learner's own answer is
    shown, ``own``), ``x`` (the count), ``alt``; ``tips``: ``option``, ``share``."""
    check_rows(df)
    count_title = text.x
    subtitle = text["subtitle_mine"] if own and df["mine"].any() else text.subtitle
    n_max = max(int(df["count"].max()), 1) if len(df) else 1
    y = alt.Y("option:N", sort=alt.SortField("order"), title=None, axis=alt.Axis(labelLimit=260))
    tooltip = [
        alt.Tooltip("option:N", title=text.tips["option"]),
        alt.Tooltip("count:Q", title=count_title, format="d"),
        alt.Tooltip("share:Q", title=text.tips["share"], format=".0%"),
    ]
    bars = (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X(
                "count:Q",
                title=count_title,
                scale=alt.Scale(domain=[0, n_max * 1.25], nice=False),
                axis=alt.Axis(tickMinStep=1, format="d"),
            ),
            y=y,
            color=alt.condition(
                alt.datum.mine,
                alt.value(ROOM_COLORS["mine"]),
                alt.value(ROOM_COLORS["room"]),
            ),
            tooltip=tooltip,
        )
    )
    # the count beside each bar is text: in the theme's ink (the grey was 4.3:1)
    counts = bars.mark_text(align="left", dx=4).encode(text="label:N", color=alt.value(INK))
    return alt.layer(bars, counts).properties(
        title=chart_title(text.title, subtitle),
        height=alt.Step(34),
        description=text.description,
    )
