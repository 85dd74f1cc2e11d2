"""The learner id of a browser tab: kept in the tab's ``sessionStorage`` by a small
``st.components.v2`` element (``room_tab.js``), so no URL carries it.

The element draws nothing (``layout.css`` hides it) and, once mounted, sends the tab's id
as its state ``{"id": …}``: made in the browser the first time, then read back after a
reload, a reconnect or a move to another server behind the balancer. Another tab (or
another browser opening the same link) has a storage, and so an id, of its own. A cookie
could not do this: Streamlit has no public way to set one, and reads them only at the
first request.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

import rooms
from rooms.store import check_learner
from ui.common import controls

#: Key of the element (its state holds the id; its container is ``.st-key-room_tab``).
TAB = "room_tab"
#: Name under which the tab's id is kept in the browser's sessionStorage.
STORAGE_NAME = "attention-lab-learner"

_element = st.components.v2.component(
    "attention_lab.tab_learner", js=(Path(__file__).parent / "room_tab.js").read_text()
)


def learner_id(known: str | None) -> str | None:
    """Mount the element (in the sidebar) and return the id the tab has sent, None before
    it has (or if what it sent is not an id). ``known``: the id the server holds already
    (the element sends nothing again for it)."""
    with st.sidebar:
        # its id reruns the app, not the learner: the notices of the run before stay
        tab = _element(
            key=TAB,
            data={"known": known or "", "name": STORAGE_NAME},
            height=0,
            on_id_change=controls.keep_notices,
        )
    try:
        return check_learner(tab.get("id"))
    except rooms.BadInput:
        return None
