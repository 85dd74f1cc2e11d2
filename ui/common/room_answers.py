"""A room's answers to one question drawn on the page: the bar chart of
:mod:`ui.common.room_charts` with how many answered, rebuilt only when the counts change
(:mod:`ui.common.room` draws it under a card, for the learner and for the presenter)."""

from __future__ import annotations

import contextlib
from functools import partial

import streamlit as st

from ui.common import controls, room_charts, specs, turns
from ui.common.i18n import chart_text, t

#: Session-state entry: the last chart drawn in each slot, (counts, spec).
DRAWN = "_room_drawn"


def draw(
    slot: str,
    options: tuple,
    counts: list[int],
    mine: int | None,
    presenting: bool,
    *,
    own: bool,
) -> None:
    """The room's answers as bars, with how many answered. A new count takes a turn to
    build the chart (the server's runs take turns), once for the server
    (:func:`ui.common.specs.chart_spec`: sixty learners after a reveal share it); the same
    counts again redraw this session's. ``slot``: where on the page (a question's key, or
    another key of the presenter's view): the last chart is kept under it, and it names
    the chart's element."""
    drawn = st.session_state.setdefault(DRAWN, {})
    total = sum(counts)
    text = chart_text("room.answers", n=total)
    memo = (tuple(counts), mine, presenting, own, text.entries)
    if drawn.get(slot, (None,))[0] == memo:
        spec = drawn[slot][1]
    else:
        frame = partial(room_charts.answers_frame, tuple(options), tuple(counts), mine)
        # a fragment's own rerun takes a turn to build, unless its run holds one already
        turn = contextlib.nullcontext() if controls.holds_turn() else turns.SCRIPT_RUNS.turn()
        with turn:
            spec = specs.drawn(
                "room.answers", room_charts.answers_chart, frame, text,
                options={"own": own}, presenting=presenting,
            )  # fmt: skip
        drawn[slot] = (memo, spec)
    st.vega_lite_chart(spec=spec, width="stretch", key=f"{slot}_room_chart")
    st.caption(t("room.answered", n=total))
