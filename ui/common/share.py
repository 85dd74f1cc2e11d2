"""The sidebar's "Share this view": a link with every control of the page written out, a
new random seed, and the page's defaults."""

from __future__ import annotations

import math
import secrets
from collections.abc import Sequence
from urllib.parse import urlencode

import streamlit as st

from ui.common import controls, room
from ui.common.i18n import t

#: Session-state entries: whether the share panel is open, and the values in its link.
_SHARE_OPEN, _SHARE_VALUES = "share_open", "_share_values"


def link_values(params: Sequence[str]) -> dict[str, object]:
    """The URL values of the controls in ``params``: those drawn in this session as they
    are; the page's own that are not drawn (under a closed "Go deeper", which-d's
    initialisation that section 1 uses) as the link gives them, or their defaults."""
    own = {p.key for p in controls.page_spec().params if p.kind != "own"}
    values = {}
    for key in sorted(params):
        if key in st.session_state or key in own:
            value = st.session_state[key] if key in st.session_state else controls.link_value(key)
            if value is None or value == "":
                continue  # an empty text box: nothing to carry
            if isinstance(value, bool):  # as the table's flag writes it: 1 or true
                words = controls.param(key).options
                value = ("1" if value else "0") if "1" in words else str(value).lower()
            elif isinstance(value, float) and math.isfinite(value):
                value = f"{value:g}"
            values[key] = value
    return values


def share_link(params: Sequence[str], values: dict[str, object] | None = None) -> str:
    """A link to this view with the value of every control (``params``) written out
    (``values``: those values, if already collected by :func:`link_values`)."""
    base = st.context.url or ""
    values = link_values(params) if values is None else values
    return f"{base}?{urlencode(values)}" if values else base


def refresh_link() -> None:
    """Call at the end of a fragment: if the share panel is open and a control of the
    fragment has changed what its link should say, rerun the whole app to rebuild it (a
    fragment cannot write to the sidebar). With the panel closed nothing happens: opening
    it reruns the app."""
    shown = st.session_state.get(_SHARE_VALUES)
    if st.session_state.get(_SHARE_OPEN) and shown is not None and link_values(shown) != shown:
        st.rerun(scope="app")


def _new_seed() -> None:
    st.session_state["seed"] = secrets.randbelow(controls.SEED_MAX + 1)


def _restore(keys: Sequence[str]) -> None:
    defaults = controls.page_defaults()
    for key in keys:
        if key in st.session_state and controls.param(key).kind != "own":
            st.session_state[key] = defaults[key]


def share_panel(params: Sequence[str]) -> None:
    """Sidebar: the link to this view, a new random seed, and restoring the defaults."""
    # opening the panel reruns the app, so its link is never older than the controls; a
    # closed panel draws nothing inside (a code box makes the browser load its syntax
    # highlighter)
    panel = st.sidebar.expander(
        t("workshop.share_title"), icon=":material/share:", key=_SHARE_OPEN, on_change="rerun"
    )
    if not panel.open:
        return
    with panel:
        st.caption(t("workshop.share_help"))
        values = st.session_state[_SHARE_VALUES] = link_values(params)
        if room.code() is None:  # in a room the presenter reveals the answers
            if st.checkbox(t("workshop.share_reveal"), key="share_reveal"):
                values = {**values, "reveal": 1}
        st.code(share_link(params, values), language=None, wrap_lines=True)
        # one per row: side by side the sidebar cuts their labels
        st.button(
            t("workshop.new_seed"),
            key="new_seed",
            on_click=_new_seed,
            icon=":material/casino:",
            width="stretch",
        )
        st.button(
            t("workshop.defaults"),
            key="restore_defaults",
            on_click=_restore,
            args=(tuple(k for k in params if k not in ("lang", "present", "step")),),
            icon=":material/restart_alt:",
            width="stretch",
        )
