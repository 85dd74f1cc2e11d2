"""Rooms: the answers a workshop's learners give, shared with the presenter's screen.

``open_store()`` picks the backend: SQLite (one file, the default) or Redis (several app
servers sharing rooms). Everything else a page needs is in ``rooms.store``, re-exported
here. Standard library and ``redis`` only: no Streamlit.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from rooms.store import (
    ALPHABET,
    CODE_LENGTH,
    MAX_ANSWERS,
    MAX_OPEN_ROOMS,
    MAX_OPTIONS,
    ROOM_TTL_S,
    BadInput,
    Counts,
    LimitReached,
    NotRevealed,
    RoomClosed,
    RoomError,
    RoomExpired,
    RoomStatus,
    RoomStore,
    StoreUnavailable,
    UnknownRoom,
    WrongKey,
    group_of,
    new_learner_id,
    new_session_token,
    normalize_code,
)

__all__ = [
    "ALPHABET",
    "CODE_LENGTH",
    "DIR_VARIABLE",
    "MAX_ANSWERS",
    "MAX_OPEN_ROOMS",
    "MAX_OPTIONS",
    "ROOM_TTL_S",
    "URL_VARIABLE",
    "BadInput",
    "Counts",
    "LimitReached",
    "NotRevealed",
    "RoomClosed",
    "RoomError",
    "RoomExpired",
    "RoomStatus",
    "RoomStore",
    "StoreUnavailable",
    "UnknownRoom",
    "WrongKey",
    "group_of",
    "new_learner_id",
    "new_session_token",
    "normalize_code",
    "open_store",
]

#: Environment variable naming the Redis server (``redis://host:6379/0``); unset: SQLite.
URL_VARIABLE = "ROOM_STORE_URL"
#: Environment variable naming the SQLite store's folder; unset: the system temp folder.
DIR_VARIABLE = "ROOM_STORE_DIR"


def open_store(url: str | None = None, folder: str | os.PathLike[str] | None = None) -> RoomStore:
    """The room store for ``url``, else ``$ROOM_STORE_URL``.

    Empty or unset: SQLite, in ``folder``, else ``$ROOM_STORE_DIR``, else the system temp
    folder. ``redis://…`` or ``rediss://…`` (TLS): Redis. Anything else is a ValueError.
    Nothing is connected yet: a store that cannot be reached raises ``StoreUnavailable``
    on its first call, not here.
    """
    url = os.environ.get(URL_VARIABLE, "") if url is None else url
    url = url.strip()
    if not url:
        from rooms.sqlite_store import SqliteStore

        return SqliteStore(folder or os.environ.get(DIR_VARIABLE) or None)
    scheme = urlsplit(url).scheme.lower()
    if scheme in ("redis", "rediss"):
        from rooms.redis_store import RedisStore

        return RedisStore(url)
    # the URL itself is not echoed: it may hold a password
    raise ValueError(
        f"room store URL: scheme {scheme or '(none)'!r} is not supported; expected "
        f"redis://host[:port][/db] or rediss://…, or nothing for the SQLite file "
        f"(its folder set by {DIR_VARIABLE})"
    )
