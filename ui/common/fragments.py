"""Parts of a page that rerun on their own (``st.fragment``): a panel with its own
controls, and the page itself under its title."""

from __future__ import annotations

import functools
from collections.abc import Callable

import streamlit as st

from ui.common import controls, room, share, turns, workshop


def panel(body: Callable) -> Callable:
    """``st.fragment`` for a panel with its own controls: it reruns on its own, and keeps an
    open share panel's link current (:func:`ui.common.share.refresh_link`). The first
    change after a notice at the top of the page (:func:`controls.notices`) reruns the
    app instead, which clears it: a fragment cannot clear what sits above it."""

    @functools.wraps(body)
    def run(*args, **kwargs):
        if controls.holds_turn():  # the app's run, or the fragment around this one
            body(*args, **kwargs)
            return
        controls.clear_notices()
        # a rerun of its own draws charts: it takes a turn
        with turns.SCRIPT_RUNS.turn(), controls.holding_turn():
            body(*args, **kwargs)
        share.refresh_link()

    return st.fragment(run)


def page_body(body: Callable[[], None]) -> None:
    """Draw the page under its title, lead and terms (``body``) as a :func:`panel`: its
    controls rerun the page alone, not the sidebar and navigation around it.

    Drawn plainly while presenting (the page's controls are then in the sidebar, where a
    fragment cannot draw) or holding a room (its join link carries the page's values).
    """
    if workshop.is_presenting() or room.is_presenter():
        body()
    else:
        panel(body)()
