"""The room store: one small interface for a workshop's shared answers, two backends.

Data model
----------
A **room** is opened by a presenter and has

- a *code*, ``CODE_LENGTH`` characters from ``ALPHABET`` (no 0/O, 1/I/L: it is read off a
  projector and typed on a phone), the only thing learners are given;
- the SHA-256 of the *presenter key* (``secrets.token_urlsafe(32)``, 256 random bits, so a
  plain hash suffices: there is nothing to brute-force). The key itself is returned once,
  to the presenter's session, and never stored: whoever reads the store cannot act as
  the presenter;
- its creation and expiry times (``ROOM_TTL_S`` = 12 h later), a *closed* flag and the
  set of *revealed* question keys.

An **answer** is keyed by ``(room, question, group, learner)`` and holds an option index,
the time it was given and the *session* that gave it. The key makes "one answer per learner, question and settings
group" a property of the data rather than of the code that writes it: a retry, a reload
or "ask again" writes the same key again and replaces the learner's own answer; it can
never count twice. ``group`` is the canonical string of the settings the question
depends on (``group_of(about)``): answers given for other settings answer a different
question, so they are counted apart and the presenter reads the group of the room's link.

The learner id comes from the learner's browser tab, the session token from the app
server (one per app session, never sent to the browser). A tab reloaded, or moved to
another server, keeps its learner id and gets a new session: its answer is replaced.
One session that sends a second learner id (a tab whose id was edited, say) does not
become a second learner either: its answer moves to the new id, replacing the one it gave
under the old id in the same question and group. So one session is at most one answer
per question and group; only new sessions add answers, up to ``MAX_ANSWERS``.

Nothing personal is stored: the learner id and the session token are random
(``new_learner_id``, ``new_session_token``), and there is no name, address or user agent. The answers are deleted when the room
is closed or expires; its record (code, key hash, times, flags: nothing about learners)
is kept ``TOMBSTONE_S`` longer, so a learner with an old link is told "expired" or
"closed" instead of "unknown", and the code is not given to a new room meanwhile.

Limits (``MAX_ANSWERS`` per question, ``MAX_OPEN_ROOMS`` per store) bound what one
mistaken or hostile client can make a store hold; past one, ``LimitReached`` names it.

Who may read the counts
-----------------------
The store enforces it: before a question is revealed, ``counts`` needs the presenter
key; after ``reveal`` anyone in the room may read that question's counts. The rule then
lives in one place, next to the data, holds for every caller (a page, a benchmark, a
second replica) and is tested on both backends; a page only passes the key it holds.

Errors
------
Everything a learner or a link sends is validated here, and each refusal is a specific
``RoomError`` subclass the page can turn into a clear message: ``BadInput`` (``field``
names the input), ``UnknownRoom``, ``RoomClosed``, ``RoomExpired``, ``WrongKey``,
``NotRevealed``, ``LimitReached`` (``limit`` names it) and ``StoreUnavailable`` (the store
itself failed: disk full, Redis down; the page keeps working without the room).

This module is standard library only; the backends are ``rooms.sqlite_store`` (one
SQLite file, the default) and ``rooms.redis_store`` (Redis, shared by several servers).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import numbers
import re
import secrets
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "ALPHABET",
    "CODE_LENGTH",
    "GROUP_MAX_CHARS",
    "MAX_ANSWERS",
    "MAX_OPEN_ROOMS",
    "MAX_OPTIONS",
    "ROOM_TTL_S",
    "TOMBSTONE_S",
    "BadInput",
    "Counts",
    "LimitReached",
    "NotRevealed",
    "RoomClosed",
    "RoomError",
    "RoomExpired",
    "RoomRecord",
    "RoomStatus",
    "RoomStore",
    "StoreUnavailable",
    "UnknownRoom",
    "WrongKey",
    "check_group",
    "check_learner",
    "check_option",
    "check_question",
    "check_session",
    "group_of",
    "hash_key",
    "new_code",
    "new_learner_id",
    "new_session_token",
    "normalize_code",
    "state_of",
]

#: Room codes: digits and capitals without the look-alikes 0/O and 1/I/L (31 symbols).
ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
#: Length of a room code: 31**6 ≈ 8.9e8 codes, so a guessed code hits one of the at most
#: 200 open rooms with probability ≈ 2e-7.
CODE_LENGTH = 6
#: A room expires this long after it was opened (seconds).
ROOM_TTL_S = 12 * 3600.0
#: An expired or closed room's record (no answers) is kept this much longer (seconds).
TOMBSTONE_S = 12 * 3600.0
#: Answers one question of one room takes, all settings groups together.
MAX_ANSWERS = 1000
#: Rooms open at once in one store.
MAX_OPEN_ROOMS = 200
#: Options a question may have.
MAX_OPTIONS = 12
#: Longest settings group string.
GROUP_MAX_CHARS = 200

_CODE_RE = re.compile(f"[{ALPHABET}]{{{CODE_LENGTH}}}")
#: A question key: a card's (``saturation_mean_max``), or a card asked again under a name of
#: its own (``recap.saturation_mean_max``); at most 40 characters.
_QUESTION_RE = re.compile(r"(?=.{1,40}\Z)[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)?")
_GROUP_RE = re.compile(rf"[A-Za-z0-9._+|-]{{0,{GROUP_MAX_CHARS}}}")
_GROUP_PART_RE = re.compile(r"[A-Za-z0-9._+-]{1,40}")
_LEARNER_RE = re.compile(r"[A-Za-z0-9_-]{16,43}")
_KEY_RE = re.compile(r"[A-Za-z0-9_-]{43}")

State = Literal["open", "closed", "expired"]


# --- errors ----------------------------------------------------------------------------
class RoomError(Exception):
    """Base class of every refusal or failure of a room store."""


class BadInput(RoomError, ValueError):
    """An input is malformed or out of range; ``field`` names it (``code``, ``question``,
    ``group``, ``learner``, ``session``, ``option``, ``n_options``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class UnknownRoom(RoomError):
    """No room has this code (never opened, or gone since ``TOMBSTONE_S`` after its end)."""


class RoomClosed(RoomError):
    """The presenter closed the room; its answers are deleted."""


class RoomExpired(RoomError):
    """The room is older than ``ROOM_TTL_S``; its answers are deleted."""


class WrongKey(RoomError):
    """The presenter key is missing, malformed or not this room's."""


class NotRevealed(RoomError):
    """The question's answers are not revealed to the room yet (the presenter key reads
    them before)."""


class LimitReached(RoomError):
    """A limit is reached: ``limit`` is ``"answers_per_question"`` or ``"open_rooms"`` and
    ``value`` its number."""

    def __init__(self, limit: str, value: int) -> None:
        super().__init__(f"limit reached: {limit} = {value}")
        self.limit = limit
        self.value = value


class StoreUnavailable(RoomError):
    """The store failed (disk full or unwritable, database locked too long, Redis down or
    not answering); a later call tries again. The call is to be taken as not done, though
    a write sent to a Redis that then stalled may still be applied when it wakes: every
    write is idempotent (an answer is an upsert), so sending it again is safe."""


# --- values ----------------------------------------------------------------------------
@dataclass(frozen=True)
class RoomRecord:
    """A room as stored (backends return it; pages use ``RoomStatus``)."""

    code: str
    key_hash: str
    created: float
    expires: float
    closed: bool
    revealed: frozenset[str]


@dataclass(frozen=True)
class RoomStatus:
    """What anyone with the code may know about a room.

    ``revealed`` lists the revealed question keys; it is empty unless ``state`` is
    ``"open"``. ``expires`` is a Unix time, seconds.
    """

    code: str
    state: State
    expires: float
    revealed: frozenset[str]


@dataclass(frozen=True)
class Counts:
    """The answers to one question for one settings group.

    ``by_option`` maps an option index to its number of answers (options nobody chose are
    absent); ``total`` is their sum, the number of learners who answered.
    """

    by_option: Mapping[int, int]
    total: int

    def as_list(self, n_options: int) -> list[int]:
        """Counts for options ``0 … n_options - 1``, zeros included."""
        return [self.by_option.get(i, 0) for i in range(n_options)]

    def shares(self, n_options: int) -> list[float]:
        """Share of the answers per option (all zero when nobody answered)."""
        return [c / self.total if self.total else 0.0 for c in self.as_list(n_options)]


# --- validation and helpers ------------------------------------------------------------
def normalize_code(text: object) -> str:
    """The room code in ``text`` (case, spaces and hyphens ignored); ``BadInput("code")``
    unless it is ``CODE_LENGTH`` characters of ``ALPHABET``."""
    if not isinstance(text, str) or len(text) > 4 * CODE_LENGTH:
        raise BadInput("code", f"expected {CODE_LENGTH} characters of {ALPHABET}")
    code = text.upper().replace(" ", "").replace("-", "")
    if not _CODE_RE.fullmatch(code):
        raise BadInput("code", f"expected {CODE_LENGTH} characters of {ALPHABET}, got {text!r}")
    return code


def check_question(question: object) -> str:
    """``question`` if it is a question key (``[a-z][a-z0-9_]``, optionally after one
    ``name.`` of the same letters; ≤ 40 characters)."""
    if not isinstance(question, str) or not _QUESTION_RE.fullmatch(question):
        raise BadInput(
            "question", f"expected [a-z][a-z0-9_] with at most one '.', got {question!r:.60}"
        )
    return question


def check_group(group: object) -> str:
    """``group`` if it is a settings group string as ``group_of`` makes them."""
    if not isinstance(group, str) or not _GROUP_RE.fullmatch(group):
        raise BadInput(
            "group",
            f"expected ≤ {GROUP_MAX_CHARS} characters of [A-Za-z0-9._+|-], got {group!r:.60}",
        )
    return group


def check_learner(learner: object) -> str:
    """``learner`` if it is a learner id (16–43 characters of ``[A-Za-z0-9_-]``)."""
    if not isinstance(learner, str) or not _LEARNER_RE.fullmatch(learner):
        raise BadInput(
            "learner", f"expected 16-43 characters of [A-Za-z0-9_-], got {learner!r:.60}"
        )
    return learner


def check_session(session: object) -> str:
    """``session`` if it is a session token (same form as a learner id), or ``""`` for
    none (the answer is then tied to no session)."""
    if session == "":
        return ""
    if not isinstance(session, str) or not _LEARNER_RE.fullmatch(session):
        raise BadInput(
            "session", f"expected 16-43 characters of [A-Za-z0-9_-], got {session!r:.60}"
        )
    return session


def check_option(option: object, n_options: object) -> int:
    """``option`` if it is an int in ``[0, n_options)``, with ``2 ≤ n_options ≤ MAX_OPTIONS``."""
    if not _is_int(n_options) or not 2 <= n_options <= MAX_OPTIONS:
        raise BadInput("n_options", f"expected an int in [2, {MAX_OPTIONS}], got {n_options!r}")
    if not _is_int(option) or not 0 <= option < n_options:
        raise BadInput("option", f"expected an int in [0, {n_options}), got {option!r:.60}")
    return int(option)


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def group_of(about: Iterable[object]) -> str:
    """The canonical settings group of the values a question depends on.

    Values are joined with ``|``: integers in decimal, floats by their shortest round-trip
    ``repr`` (an integral float as the integer, so ``64.0`` and ``64`` — equal in Python —
    make one group), strings as they are (``[A-Za-z0-9._+-]``, ≤ 40 characters). A NaN,
    an infinity, another type or a result longer than ``GROUP_MAX_CHARS`` is
    ``BadInput("group")``.
    """
    parts = []
    for value in about:
        if isinstance(value, numbers.Integral):  # bool too: True == 1 in a tuple
            parts.append(str(int(value)))
        elif isinstance(value, numbers.Real):
            x = float(value)
            if not math.isfinite(x):
                raise BadInput("group", f"a setting is not finite: {value!r}")
            parts.append(str(int(x)) if x.is_integer() and abs(x) < 2**53 else repr(x))
        elif isinstance(value, str) and _GROUP_PART_RE.fullmatch(value):
            parts.append(value)
        else:
            raise BadInput("group", f"a setting is not a number or a short word: {value!r:.60}")
    return check_group("|".join(parts))


def new_code() -> str:
    """A random room code."""
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def new_learner_id() -> str:
    """A random learner id (96 bits, 16 URL-safe characters)."""
    return secrets.token_urlsafe(12)


def new_session_token() -> str:
    """A random token for one app session (96 bits, 16 URL-safe characters)."""
    return secrets.token_urlsafe(12)


def hash_key(key: str) -> str:
    """The stored form of a presenter key: its SHA-256, hex."""
    return hashlib.sha256(key.encode()).hexdigest()


def _key_matches(key_hash: str, key: object) -> bool:
    if not isinstance(key, str) or not _KEY_RE.fullmatch(key):
        return False
    return hmac.compare_digest(hash_key(key), key_hash)


def state_of(expires: float, closed: bool, now: float) -> State | None:
    """A room's state at ``now``; None once its record is past ``TOMBSTONE_S``."""
    if expires + TOMBSTONE_S <= now:
        return None
    if closed:
        return "closed"
    return "expired" if expires <= now else "open"


#: Outcomes a backend's write returns, and the error each one raises.
_OUTCOMES: dict[str, Callable[[str], RoomError]] = {
    "unknown": lambda code: UnknownRoom(f"no room {code}"),
    "closed": lambda code: RoomClosed(f"room {code} is closed"),
    "expired": lambda code: RoomExpired(f"room {code} has expired"),
    "wrong_key": lambda code: WrongKey(f"not the presenter key of room {code}"),
    "full_answers": lambda code: LimitReached("answers_per_question", MAX_ANSWERS),
    "full_rooms": lambda code: LimitReached("open_rooms", MAX_OPEN_ROOMS),
}


def _raise_for(outcome: str, code: str) -> None:
    if outcome != "ok":
        raise _OUTCOMES[outcome](code)


# --- the interface ---------------------------------------------------------------------
class RoomStore(ABC):
    """A store of rooms. Public methods validate their inputs and are safe to call from
    many threads at once; the backends implement the underscored hooks atomically.

    ``clock`` gives the time in Unix seconds (tests pass a fake one to expire rooms).
    Every method may raise ``StoreUnavailable``; each documents its other errors.
    """

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock

    # -- what pages call --
    def open_room(self) -> tuple[str, str]:
        """Open a room: ``(code, presenter_key)``. ``LimitReached("open_rooms")`` when
        ``MAX_OPEN_ROOMS`` are open."""
        key = secrets.token_urlsafe(32)
        now = self.clock()
        for _ in range(20):  # a code still in use (or recently) is drawn again
            code = new_code()
            outcome = self._open(code, hash_key(key), now, now + ROOM_TTL_S)
            if outcome != "taken":
                _raise_for(outcome, code)
                return code, key
        raise StoreUnavailable("no free room code after 20 draws")

    def room_status(self, code: str) -> RoomStatus:
        """State and revealed questions of a room. ``BadInput``, ``UnknownRoom``."""
        code = normalize_code(code)
        return self._status(self._room(code), code)

    def is_revealed(self, code: str, question: str) -> bool:
        """Whether the room may see ``question``'s answers (False unless the room is open).
        ``BadInput``, ``UnknownRoom``."""
        question = check_question(question)
        return question in self.room_status(code).revealed

    def is_presenter(self, code: str, key: str) -> bool:
        """Whether ``key`` is the room's presenter key. ``BadInput``, ``UnknownRoom``."""
        code = normalize_code(code)
        record = self._room(code)
        self._status(record, code)
        return _key_matches(record.key_hash, key)

    def answer(
        self,
        code: str,
        question: str,
        group: str,
        learner: str,
        option: int,
        n_options: int,
        *,
        session: str = "",
    ) -> None:
        """Record ``learner``'s answer ``option`` to ``question`` for settings ``group``,
        replacing the learner's earlier answer there if any.

        ``session``: the app session sending it (``new_session_token``). An answer this
        session gave there under another learner id is deleted in the same step, so one
        session counts once (``""``: no session, nothing else is replaced).

        ``BadInput`` (naming the field), ``UnknownRoom``, ``RoomClosed``, ``RoomExpired``,
        ``LimitReached("answers_per_question")`` for a learner new to a question that has
        ``MAX_ANSWERS`` answers (a learner who already answered may still change theirs).
        """
        code = normalize_code(code)
        question = check_question(question)
        group = check_group(group)
        learner = check_learner(learner)
        session = check_session(session)
        option = check_option(option, n_options)
        outcome = self._answer(code, question, group, learner, session, option, self.clock())
        _raise_for(outcome, code)

    def counts(self, code: str, question: str, group: str, key: str | None = None) -> Counts:
        """The answers to ``question`` for ``group``.

        Before the question is revealed only the presenter reads them: ``NotRevealed``
        without ``key``, ``WrongKey`` with a wrong one. Also ``BadInput``, ``UnknownRoom``,
        ``RoomClosed``, ``RoomExpired``.
        """
        code = normalize_code(code)
        question = check_question(question)
        group = check_group(group)
        record, by_option = self._counts(code, question, group)
        status = self._status(record, code)
        if status.state != "open":
            _raise_for(status.state, code)
        if question not in status.revealed:
            if key is None:
                raise NotRevealed(f"{question} is not revealed in room {code}")
            if not _key_matches(record.key_hash, key):
                raise WrongKey(f"not the presenter key of room {code}")
        by_option = {o: n for o, n in sorted(by_option.items()) if n > 0}
        return Counts(by_option=by_option, total=sum(by_option.values()))

    def has_answered(self, code: str, question: str, group: str, learner: str) -> bool:
        """Whether ``learner``'s answer to ``question`` for ``group`` is in the room: a
        learner asks after its own, which a reset of the question deletes. ``BadInput``,
        ``UnknownRoom``, ``RoomClosed``, ``RoomExpired``."""
        code = normalize_code(code)
        question = check_question(question)
        group = check_group(group)
        learner = check_learner(learner)
        record, found = self._has_answer(code, question, group, learner)
        status = self._status(record, code)
        if status.state != "open":
            _raise_for(status.state, code)
        return found

    def reveal(self, code: str, key: str, question: str) -> None:
        """Let the room read ``question``'s counts (every settings group).
        ``BadInput``, ``UnknownRoom``, ``RoomClosed``, ``RoomExpired``, ``WrongKey``."""
        self._presenter("reveal", code, key, question)

    def reset(self, code: str, key: str, question: str) -> None:
        """Delete ``question``'s answers (every settings group) and hide it again.
        ``BadInput``, ``UnknownRoom``, ``RoomClosed``, ``RoomExpired``, ``WrongKey``."""
        self._presenter("reset", code, key, question)

    def close(self, code: str, key: str) -> None:
        """Close the room and delete its answers; closing a closed room does nothing.
        ``BadInput``, ``UnknownRoom``, ``RoomExpired``, ``WrongKey``."""
        self._presenter("close", code, key, None)

    # -- shared by the above --
    def _presenter(self, action: str, code: str, key: str, question: str | None) -> None:
        code = normalize_code(code)
        if question is not None:
            question = check_question(question)
        key_hash = hash_key(key) if isinstance(key, str) and _KEY_RE.fullmatch(key) else ""
        _raise_for(self._act(action, code, key_hash, question, self.clock()), code)

    def _status(self, record: RoomRecord | None, code: str) -> RoomStatus:
        state = None if record is None else state_of(record.expires, record.closed, self.clock())
        if state is None:
            raise UnknownRoom(f"no room {code}")
        revealed = record.revealed if state == "open" else frozenset()
        return RoomStatus(code=code, state=state, expires=record.expires, revealed=revealed)

    # -- what a backend implements, each call atomic --
    @abstractmethod
    def _open(self, code: str, key_hash: str, now: float, expires: float) -> str:
        """Create room ``code`` unless a record of it exists: ``"ok"``, ``"taken"`` or
        ``"full_rooms"`` (``MAX_OPEN_ROOMS`` rooms are open, neither closed nor expired)."""

    @abstractmethod
    def _room(self, code: str) -> RoomRecord | None:
        """The room's record, None if there is none."""

    @abstractmethod
    def _answer(
        self,
        code: str,
        question: str,
        group: str,
        learner: str,
        session: str,
        option: int,
        now: float,
    ) -> str:
        """Upsert an answer in an open room, first deleting the answer ``session`` (if not
        ``""``) gave in the same question and group under another learner id: ``"ok"``, or
        ``"unknown"``, ``"closed"``, ``"expired"`` (by ``state_of``), ``"full_answers"``."""

    @abstractmethod
    def _counts(self, code: str, question: str, group: str) -> tuple[RoomRecord | None, dict]:
        """The room's record and ``{option: count}`` for the group, read together."""

    @abstractmethod
    def _has_answer(
        self, code: str, question: str, group: str, learner: str
    ) -> tuple[RoomRecord | None, bool]:
        """The room's record and whether the learner's answer for the group is there, read
        together."""

    @abstractmethod
    def _act(self, action: str, code: str, key_hash: str, question: str | None, now: float) -> str:
        """``reveal``, ``reset`` or ``close`` (``question`` None), checked in this order:
        ``"unknown"``, ``"expired"``, ``"closed"`` (not for ``close``), ``"wrong_key"``
        (``key_hash`` empty or not the room's); then done: ``"ok"`` (``close`` of a closed
        room changes nothing)."""
