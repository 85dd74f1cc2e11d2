"""The presenter's view under each prediction card in a room: the room's answers, live
(a fragment that polls), with "Reveal to the room" and "Reset question" (the room itself:
:mod:`ui.common.room`)."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

import rooms
from rooms import RoomError
from ui.common import controls, room, room_answers
from ui.common.i18n import t

#: A room the presenter's view finds gone: closed (from its take-over link, say), expired,
#: or no longer known.
GONE = (rooms.RoomClosed, rooms.RoomExpired, rooms.UnknownRoom)


def presenter_view(
    question: str,
    options: Sequence[str],
    about: tuple,
    presenting: bool,
    *,
    earlier: str | None = None,
) -> None:
    """Under a card, for the holder of the room's key: the room's answers, live, with
    "Reveal to the room" and "Reset question". With ``earlier`` (the key of the card this
    one asks again, with the same options and settings) the room's answers to that card
    stand beside this one's, and "Reveal to the room" reveals both."""
    if not room.is_presenter():
        return
    try:
        group = rooms.group_of(about)
    except rooms.BadInput:
        return
    # the settings the room's link gave this question (its first sight since the link)
    st.session_state.setdefault(room.GROUPS, {}).setdefault(question, group)
    _live(question, tuple(options), group, presenting, earlier)


def _reveal(question: str, earlier: str | None = None) -> None:
    for key in filter(None, (question, earlier)):
        _act("reveal", key)


def _reset(question: str, group: str) -> None:
    if _act("reset", question):
        st.session_state.setdefault(room.GROUPS, {})[question] = group  # count these settings now


def _act(action: str, question: str) -> bool:
    code, key = room.code(), room.presenter_key()
    try:
        getattr(room.store(), action)(code, key, question)
        return True
    except RoomError as exc:
        room.notice("warning", room.refusal(exc, code))
        return False


@st.fragment(run_every=room.PRESENTER_POLL_S)
def _live(
    question: str, options: tuple, current: str, presenting: bool, earlier: str | None = None
) -> None:
    code, key = room.code(), room.presenter_key()
    if code is None or key is None:
        return
    group = st.session_state.get(room.GROUPS, {}).get(question, current)
    try:
        counts = room.store().counts(code, question, group, key)
        revealed = room.store().is_revealed(code, question)
        # the answers to the card it asks again, at the same settings
        first = None if earlier is None else room.store().counts(code, earlier, group, key)
    except RoomError as exc:
        if isinstance(exc, GONE) and not controls.in_full_run():
            # closed elsewhere (the take-over link) or expired: the app's run leaves the
            # room, and the sidebar stops showing its join link and QR code
            st.rerun(scope="app")
        st.container(border=True).warning(room.refusal(exc, code), icon=":material/cloud_off:")
        return
    with st.container(border=True):
        n = len(options)
        if first is None:
            room_answers.draw(question, options, counts.as_list(n), None, presenting, own=False)
        else:
            left, right = st.columns(2)
            with left:
                st.caption(t("room.first_answers"))
                room_answers.draw(
                    f"{question}_first", options, first.as_list(n), None, presenting, own=False
                )
            with right:
                st.caption(t("room.again_answers"))
                room_answers.draw(question, options, counts.as_list(n), None, presenting, own=False)
        if group != current:
            st.caption(t("room.other_settings"))
        left, right = st.columns(2)
        if revealed:
            left.caption(t("room.revealed"))
        else:
            left.button(
                t("room.reveal"),
                key=f"{question}_room_reveal",
                on_click=_reveal,
                args=(question, earlier),
                icon=":material/visibility:",
                type="primary",
            )
        right.button(
            t("room.reset"),
            key=f"{question}_room_reset",
            on_click=_reset,
            args=(question, current),
            icon=":material/restart_alt:",
            type="tertiary",
        )
