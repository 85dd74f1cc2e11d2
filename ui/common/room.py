"""Rooms on the page: the presenter opens one, learners join by its link, and each
prediction card sends its learner's guess to it (the store is :mod:`rooms`).

- ``?room=CODE`` puts a session in a room. It is checked once, when the session first
  sees it: a malformed, unknown, closed or expired code gets a notice above the page and
  is dropped from the URL, and the page works as without a room. Afterwards the session
  holds the code (``st.session_state["room"]``, so "Share this view" carries it) and
  keeps it in the URL as it moves between pages.
- The learner: a random id kept in the browser tab (:mod:`ui.common.room_tab`), never in
  the URL; an answer locked in before it arrives waits for it. Each session also holds a
  token of its own, sent with every answer: one session that sends a second id replaces
  its answer (:meth:`rooms.RoomStore.answer`). An old link's ``?learner=`` is dropped.
- ``?room_key=KEY``: the presenter's private take-over link. The key is moved into the
  session and removed from the URL at once; it never appears in any other link.

The presenter's key lives in their session only. Only its holder sees the live counts of
a question before it is revealed (the store enforces it), and reveals, resets or closes.
A store that fails (disk full, Redis down) never breaks a page: the learner's card says
the answer was not shared, the local prediction works as without a room.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import streamlit as st

import rooms
from rooms import RoomError, RoomStatus, RoomStore, StoreUnavailable
from ui.common import controls, room_answers, room_tab
from ui.common.i18n import t
from ui.common.pages import APP_TABLE
from ui.common.params import OWN

#: Query parameters of rooms (declared in :data:`ui.common.pages.APP_TABLE`; this module
#: reads them itself: a code is checked against the store; ``learner`` only to drop it
#: from old links).
ROOM_PARAMS = frozenset(p.key for p in APP_TABLE if p.kind == OWN)
#: Seconds between refreshes of the presenter's counts, and of the card of a learner who
#: answered (it shows the room's answers once revealed; only while the room is open).
PRESENTER_POLL_S = 2.0
LEARNER_POLL_S = 3.5

#: Session-state entries: the room's code (public: share links carry it), the presenter
#: key, the learner id, the join link's page and values, the settings group the presenter
#: counts per question (public: :mod:`ui.common.room_live` reads it), what became of each
#: answer sent, notices to show, whether the link was read, this session's token (sent
#: with each answer) and the questions the presenter reset after this learner answered.
CODE, _KEY, _LEARNER, _LINK = "room", "_room_key", "_room_learner", "_room_link"
GROUPS, _SENT, _NOTICES, _READ = "_room_groups", "_room_sent", "_room_notices", "_room_read"
_SESSION, _RESET_SEEN = "_room_session", "_room_reset_seen"


# --- settings and the store ------------------------------------------------------------
def setting(name: str) -> str | None:
    """``name`` from the environment, else from Streamlit secrets, else None."""
    value = os.environ.get(name)
    if value:
        return value
    try:
        value = st.secrets.get(name)
    except FileNotFoundError:  # no secrets file at all
        return None
    return str(value) if value else None


@st.cache_resource(show_spinner=False)
def _open_store(url: str, folder: str | None) -> RoomStore:
    return rooms.open_store(url, folder)


def store() -> RoomStore:
    """The server's room store (``ROOM_STORE_URL`` / ``ROOM_STORE_DIR`` as settings).
    ``StoreUnavailable`` for a store URL the app cannot use."""
    try:
        return _open_store(setting(rooms.URL_VARIABLE) or "", setting(rooms.DIR_VARIABLE) or None)
    except ValueError as exc:  # the message names the scheme, never the URL
        raise StoreUnavailable(str(exc)) from exc


# --- the session's room ----------------------------------------------------------------
def code() -> str | None:
    """The room this session is in, or None."""
    return st.session_state.get(CODE)


def is_presenter() -> bool:
    """Whether this session holds the presenter key of its room."""
    return code() is not None and st.session_state.get(_KEY) is not None


def presenter_key() -> str | None:
    """The presenter key this session holds (its take-over link, its counts, reveals and
    resets: :mod:`ui.common.room_live`)."""
    return st.session_state.get(_KEY) if code() is not None else None


def link() -> tuple[str, dict] | None:
    """The page and URL values of the room's link (the view it was opened on)."""
    return st.session_state.get(_LINK)


def notice(kind: str, text: str) -> None:
    """A notice above the page, shown until a run of the app completes (:func:`panel`)."""
    st.session_state.setdefault(_NOTICES, []).append((kind, text))


def leave(*, keep_url: bool = False) -> None:
    for entry in (CODE, _KEY, _LINK, GROUPS, _SENT, _RESET_SEEN, room_answers.DRAWN):
        st.session_state.pop(entry, None)
    if not keep_url:
        for param in ("room", "learner"):
            if param in st.query_params:
                del st.query_params[param]


def refusal(exc: RoomError, room: str) -> str:
    """What a refusal of the store means, for a notice."""
    if isinstance(exc, rooms.UnknownRoom):
        return t("room.unknown", code=room)
    if isinstance(exc, rooms.RoomClosed):
        return t("room.closed", code=room)
    if isinstance(exc, rooms.RoomExpired):
        return t("room.expired", code=room)
    if isinstance(exc, rooms.LimitReached):
        return t(f"room.limit_{exc.limit}", n=f"{exc.value:,}")
    return t("room.unavailable")


def _read_link() -> None:
    """Join the room the link names (once per session); take the presenter key of a
    take-over link into the session."""
    keys = st.query_params.get_all("room_key")
    if keys:
        del st.query_params["room_key"]  # never left in the address bar
    if "learner" in st.query_params:  # an old link: the tab keeps its own id now
        del st.query_params["learner"]
        notice("info", t("room.learner_dropped"))
    raw = st.query_params.get_all("room")
    if not raw:
        return
    try:
        if len(raw) != 1:
            raise rooms.BadInput("code", "repeated")
        room = rooms.normalize_code(raw[0])
    except rooms.BadInput:
        notice("warning", t("room.bad_code", n=rooms.CODE_LENGTH))
        leave()
        return
    try:
        status = store().room_status(room)
        if status.state != "open":
            raise (rooms.RoomClosed if status.state == "closed" else rooms.RoomExpired)(room)
        if keys and not store().is_presenter(room, keys[0]):
            notice("warning", t("room.wrong_key", code=room))
        elif keys:
            st.session_state[_KEY] = keys[0]
            notice("info", t("room.took_over", code=room))
    except StoreUnavailable:
        notice("warning", t("room.unavailable_join", code=room))  # joined: answers retried
    except RoomError as exc:
        notice("warning", refusal(exc, room))
        leave()
        return
    st.session_state[CODE] = room
    st.session_state.setdefault(_SESSION, rooms.new_session_token())


def start() -> None:
    """Call in every complete run of the app, before the page: read the link once, keep
    the room in the URL, take the tab's learner id, check the room is still open and show
    the room's notices."""
    if not st.session_state.get(_READ):
        st.session_state[_READ] = True
        _read_link()
    room = code()
    if room is not None:
        st.query_params["room"] = room
        if not is_presenter():
            _take_tab_id()
        status()
    for kind, text in st.session_state.get(_NOTICES, []):
        controls.notice(kind, text)


def learner() -> str | None:
    """This tab's learner id, None until its element has sent it."""
    return st.session_state.get(_LEARNER)


def _take_tab_id() -> None:
    """Mount the element that keeps the tab's id (:mod:`ui.common.room_tab`) and take the
    id it sends. A new id for this session (the tab's storage was edited) resends the
    session's answers under it: the store moves each one instead of adding one."""
    sent_id = room_tab.learner_id(learner())
    if sent_id is None or sent_id == learner():
        return  # not sent yet (a lock-in waits), or known
    st.session_state[_LEARNER] = sent_id
    for question, sent in list(st.session_state.get(_SENT, {}).items()):
        if sent["outcome"] in ("ok", "waiting"):
            send(question, sent["option"], sent["n_options"], sent["about"])


def status() -> RoomStatus | None:
    """The room's status, read once per run of the app (None: no room, or the store is
    not answering). A room that has closed or expired is left, with a notice."""
    room = code()
    if room is None:
        return None
    run = controls.run_state()
    if "room_status" in run:
        return run["room_status"]
    try:
        current = store().room_status(room)
        if current.state != "open":
            raise (rooms.RoomClosed if current.state == "closed" else rooms.RoomExpired)(room)
    except StoreUnavailable:
        current = None
    except RoomError as exc:
        notice("warning", refusal(exc, room))
        leave()
        current = None
    if controls.in_full_run():
        run["room_status"] = current
    return current


# --- a prediction card in a room ---------------------------------------------------------
def card_note(question: str) -> None:
    """Under a card's question: that the answer goes to the room, anonymously (and that the
    presenter reset the question, if the learner's answer was deleted so: :func:`answer_gone`)."""
    room = code()
    if room is None:
        return
    key = "room.card_presenter" if is_presenter() else "room.card_learner"
    note = t(key, code=room)
    if question in st.session_state.get(_RESET_SEEN, ()):
        note += f"\n\n{t('room.question_reset')}"
    st.caption(note, help=t("room.card_help"))


def _was_reset(question: str) -> bool:
    """Whether the presenter reset ``question`` after this learner's answer reached the
    room: not revealed, and the answer no longer held (a store read)."""
    room, me, sent = code(), learner(), st.session_state.get(_SENT, {}).get(question)
    if room is None or me is None or sent is None or sent["outcome"] != "ok":
        return False
    current = status()
    try:
        if current is None or question in current.revealed:
            return False
        return not store().has_answered(room, question, rooms.group_of(sent["about"]), me)
    except (RoomError, StoreUnavailable):  # the page's run says so, or the next poll asks
        return False


def answer_gone(question: str) -> bool:
    """In the app's run, before the card: whether the presenter reset ``question`` after
    this learner answered (:func:`_was_reset`). The answer sent is then forgotten, and the
    card asks again with a note."""
    if not _was_reset(question):
        return False
    forget(question)
    st.session_state.setdefault(_RESET_SEEN, set()).add(question)
    return True


def send(question: str, option: int, n_options: int, about: tuple) -> None:
    """Send a learner's locked-in guess to the room (the presenter's own is not counted);
    what became of it is shown by :func:`after_guess`."""
    room = code()
    if room is None or is_presenter():
        return
    try:
        group = rooms.group_of(about)
        if learner() is None:
            outcome = "waiting"  # sent once the tab's id arrives (:func:`_take_tab_id`)
        else:
            session = st.session_state.setdefault(_SESSION, rooms.new_session_token())
            store().answer(room, question, group, learner(), option, n_options, session=session)
            outcome = "ok"
    except rooms.BadInput as exc:
        outcome = f"bad_input:{exc.field}"
    except StoreUnavailable:
        outcome = "unavailable"
    except RoomError as exc:
        outcome = refusal(exc, room)
        if not isinstance(exc, rooms.LimitReached):
            notice("warning", outcome)
            leave()
    st.session_state.get(_RESET_SEEN, set()).discard(question)
    st.session_state.setdefault(_SENT, {})[question] = {
        "outcome": outcome,
        "option": option,
        "n_options": n_options,
        "about": about,
    }


def forget(question: str) -> None:
    """ "Ask again": the card's last outcome no longer applies (the next guess replaces the
    answer in the room)."""
    st.session_state.get(_SENT, {}).pop(question, None)


def _resend(question: str) -> None:
    sent = st.session_state.get(_SENT, {}).get(question)
    if sent is not None:
        send(question, sent["option"], sent["n_options"], sent["about"])


def after_guess(question: str, options: Sequence[str], about: tuple, presenting: bool) -> None:
    """Below a locked-in card: whether the guess reached the room, then (polling while the
    room is open, :func:`_answered`) the room's answers once revealed."""
    room = code()
    if room is None or is_presenter():
        return
    sent = st.session_state.get(_SENT, {}).get(question)
    if sent is not None and sent["outcome"] == "waiting":
        st.caption(t("room.waiting"))
        return
    if sent is not None and sent["outcome"] != "ok":
        if sent["outcome"] == "unavailable":
            st.warning(t("room.not_shared_unavailable"), icon=":material/cloud_off:")
            st.button(
                t("room.send_again"),
                key=f"{question}_resend",
                on_click=_resend,
                args=(question,),
                icon=":material/refresh:",
            )
        elif sent["outcome"].startswith("bad_input:"):
            st.warning(t("room.not_shared_bad"), icon=":material/block:")
        else:
            st.warning(t("room.not_shared", reason=sent["outcome"]), icon=":material/block:")
        return
    try:
        group = rooms.group_of(sent["about"] if sent is not None else about)
    except rooms.BadInput:
        return
    if sent is not None:
        _answered(question, tuple(options), group, sent["option"], presenting)
        return
    current = status()
    if current is not None and question in current.revealed:
        _room_answers(question, tuple(options), group, None, presenting)


@st.fragment(run_every=LEARNER_POLL_S)
def _answered(question: str, options: tuple, group: str, mine: int, presenting: bool) -> None:
    """The card of one who answered: "in the room's count", then the revealed answers. It
    polls (a store read; a new chart takes a turn); a closed room reruns the page."""
    if _room_answers(question, options, group, mine, presenting):
        return
    if not controls.in_full_run() and _was_reset(question):  # the app's run asks again
        st.rerun(scope="app")
    st.caption(t("room.shared"))


def _room_answers(
    question: str, options: tuple, group: str, mine: int | None, presenting: bool
) -> bool:
    """The room's answers to ``question`` if revealed (True), else nothing (False)."""
    room = code()
    if room is None:
        return False
    try:
        counts = store().counts(room, question, group)
    except (rooms.NotRevealed, StoreUnavailable):
        return False  # not yet (or the store is not answering: the next poll tries again)
    except RoomError:  # closed, expired or gone since: the page's run says so and leaves
        if not controls.in_full_run():
            st.rerun(scope="app")
        return False
    room_answers.draw(question, options, counts.as_list(len(options)), mine, presenting, own=True)
    return True


# --- what the presenter's panel does (callbacks) ----------------------------------------
def open_room(page: str, values: dict) -> None:
    """Open a room whose link shows ``page`` with ``values``; this session holds its key."""
    try:
        opened, key = store().open_room()
    except RoomError as exc:
        notice("warning", refusal(exc, ""))
        return
    leave(keep_url=True)
    st.session_state.update({CODE: opened, _KEY: key, _LINK: (page, values)})
    st.query_params["room"] = opened


def close_room() -> None:
    """Close the room (its answers are deleted) and leave it."""
    closing = code()
    try:
        store().close(closing, st.session_state.get(_KEY))
    except StoreUnavailable:
        notice("warning", t("room.unavailable"))
        return
    except RoomError:
        pass  # expired or closed already: gone either way
    notice("info", t("room.closed_by_you", code=closing))
    leave()


def relink(page: str, values: dict) -> None:
    """Make the room's link show ``page`` with ``values``; each question is counted at the
    settings it is first shown with from now on."""
    st.session_state[_LINK] = (page, values)
    st.session_state.pop(GROUPS, None)


def end_run() -> None:
    """Call at the end of every complete run: the room's notices have been shown."""
    st.session_state.pop(_NOTICES, None)
