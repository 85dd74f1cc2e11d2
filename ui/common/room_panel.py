"""The presenter's room panel in the sidebar: open a room; then its code, the join link
and its QR code (segno), the private take-over link and "Close room".

The join link's address comes from the ``APP_PUBLIC_URL`` setting (environment or
Streamlit secrets), else from the presenter's own address; the presenter can edit it
before showing the QR code, and on ``localhost`` (useless to a phone) is offered the
machine's address on the local network. The link carries the page and settings of the
view the room was opened on (or re-linked to) and ``room=CODE``: never the presenter key,
presenter mode, a step or a reveal.
"""

from __future__ import annotations

import io
import socket
from urllib.parse import urlencode, urlsplit

import segno
import streamlit as st

from ui.common import controls, room
from ui.common.i18n import t

#: Setting (environment variable or Streamlit secret) holding the app's public address,
#: the base of the join link (else the address the presenter's browser shows).
BASE_URL_SETTING = "APP_PUBLIC_URL"
#: Parameters a join link never carries.
NOT_IN_JOIN_LINK = frozenset({"present", "step", "reveal"}) | room.ROOM_PARAMS
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0", ""}


def _use_base(address: str) -> None:
    st.session_state["room_base"] = address


def default_base() -> str:
    """The base address of the join link: the setting, else the presenter's own address
    (without the page's path)."""
    configured = room.setting(BASE_URL_SETTING)
    if configured:
        return configured.rstrip("/")
    url = st.context.url or ""
    page = controls.run_state().get("page") or ""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if page and path.endswith(f"/{page}"):
        path = path[: -len(page) - 1]
    return f"{parts.scheme}://{parts.netloc}{path}" if parts.netloc else ""


def lan_address() -> str | None:
    """This machine's address on its local network (the interface of its default route),
    None if it has none. Nothing is sent: connecting a UDP socket only picks a route."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.connect(("10.254.254.254", 1))
            address = sock.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith("127.") else address


def view(values: dict) -> dict:
    """The URL values of a view that a join link carries (the page's settings)."""
    return {k: v for k, v in values.items() if k not in NOT_IN_JOIN_LINK}


def join_link(base: str, page: str, values: dict, code: str) -> str:
    """The link learners open: the page and settings of the room's link and the room's
    code; never the presenter key, presenter mode, a step or a reveal."""
    query = {**view(values), "room": code}
    return f"{base.rstrip('/')}/{page}?{urlencode(query)}"


def qr_png(link: str) -> bytes:
    """A QR code of ``link`` as a PNG (segno; error correction M, quiet zone of 4)."""
    out = io.BytesIO()
    segno.make(link, error="m", micro=False).save(out, kind="png", scale=8, border=4)
    return out.getvalue()


def panel(slot, values: dict, *, presenting: bool) -> None:
    """The sidebar's room panel (in ``slot``) for a presenter: open a room; then its code,
    join link and QR code, the take-over link and "Close room". ``values`` are the URL
    values of this view (:func:`ui.common.share.link_values`). Call at the end of a
    complete run."""
    if not (presenting or room.is_presenter()):
        return
    page = controls.run_state().get("page") or ""
    box = slot.expander(t("room.panel"), icon=":material/groups:", expanded=True)
    if not room.is_presenter():
        if room.code() is not None:
            box.caption(t("room.no_key", code=room.code()))
        box.caption(t("room.open_help"))
        box.button(
            t("room.open"),
            key="room_open",
            on_click=room.open_room,
            args=(page, values),
            icon=":material/meeting_room:",
            width="stretch",
        )
        return
    current = room.code()
    link_page, link_values = room.link() or (page, values)
    box.markdown(t("room.code", code=current))
    if "room_base" not in st.session_state:
        st.session_state["room_base"] = default_base()
    base = box.text_input(t("room.base"), key="room_base", help=t("room.base_help"))
    host = urlsplit(base).hostname or ""
    lan = lan_address()
    if host in _LOCAL_HOSTS and lan is not None:
        port = urlsplit(base).port
        lan_base = f"http://{lan}" + (f":{port}" if port else "")
        box.caption(t("room.lan_hint"))
        box.button(
            t("room.use_lan", address=lan_base),
            key="room_use_lan",
            on_click=_use_base,
            args=(lan_base,),
            width="stretch",
        )
    link = join_link(base, link_page, link_values, current)
    box.code(link, language=None, wrap_lines=True)
    if box.toggle(t("room.show_qr"), key="room_qr"):
        box.image(
            qr_png(link),
            caption=t("room.qr_caption", code=current),
            width="stretch",
            alt=t("room.qr_alt", link=link),
        )
    if (link_page, view(link_values)) != (page, view(values)):
        box.button(
            t("room.relink"),
            key="room_relink",
            on_click=room.relink,
            args=(page, values),
            icon=":material/link:",
            width="stretch",
        )
    if box.toggle(t("room.show_takeover"), key="room_takeover"):
        box.warning(t("room.takeover_warning"), icon="⚠️")
        takeover = {"room": current, "room_key": room.presenter_key(), "present": 1}
        box.code(f"{base.rstrip('/')}/{page}?{urlencode(takeover)}", language=None)
    box.button(
        t("room.close"),
        key="room_close",
        on_click=room.close_room,
        icon=":material/door_front:",
        width="stretch",
    )
