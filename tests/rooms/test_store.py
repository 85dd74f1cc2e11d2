"""The room store's contract, the same cases on both backends (SQLite and a real Redis).

Rooms, answers (one per learner, question and settings group), who reads the counts,
reveal, reset, close, expiry on an injected clock, the limits and bad input.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest

from rooms import store as rs
from rooms.store import (
    ALPHABET,
    MAX_ANSWERS,
    MAX_OPEN_ROOMS,
    ROOM_TTL_S,
    TOMBSTONE_S,
    BadInput,
    LimitReached,
    NotRevealed,
    RoomClosed,
    RoomExpired,
    UnknownRoom,
    WrongKey,
)

Q = "variance_std"
G = "64|1|1"


def learner(i: int, tag: str = "L") -> str:
    """A valid learner id, distinct for each (tag, i)."""
    return f"{tag}{i:015d}"


@pytest.fixture
def room(store):
    return store.open_room()


# --- rooms ------------------------------------------------------------------------------
def test_open_room_gives_a_code_without_look_alikes_and_a_key(store, clock):
    code, key = store.open_room()
    assert re.fullmatch(f"[{ALPHABET}]{{6}}", code)
    assert not set("0O1IL") & set(ALPHABET)
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", key)
    status = store.room_status(code)
    assert status.state == "open"
    assert status.expires == pytest.approx(clock.now + ROOM_TTL_S, abs=1e-3)
    assert status.revealed == frozenset()
    assert store.is_presenter(code, key)
    other_code, other_key = store.open_room()
    assert other_code != code and other_key != key
    assert not store.is_presenter(code, other_key)
    assert not store.is_presenter(code, "not a key")


def test_a_code_is_read_as_typed_on_a_phone(store, room):
    code, _ = room
    spaced = f"{code[:3].lower()} - {code[3:].lower()}"
    assert store.room_status(spaced).code == code
    store.answer(spaced, Q, G, learner(0), 1, 4)
    assert store.counts(code, Q, G, room[1]).total == 1


def test_unknown_room(store):
    code = "ABCDEF"
    with pytest.raises(UnknownRoom):
        store.room_status(code)
    with pytest.raises(UnknownRoom):
        store.answer(code, Q, G, learner(0), 0, 2)
    with pytest.raises(UnknownRoom):
        store.counts(code, Q, G)
    with pytest.raises(UnknownRoom):
        store.is_revealed(code, Q)
    for call in (store.reveal, store.reset):
        with pytest.raises(UnknownRoom):
            call(code, "k" * 43, Q)
    with pytest.raises(UnknownRoom):
        store.close(code, "k" * 43)


# --- answers ----------------------------------------------------------------------------
def test_an_answer_again_replaces_the_learners_own(store, room):
    code, key = room
    store.answer(code, Q, G, learner(1), 2, 4)
    store.answer(code, Q, G, learner(2), 2, 4)
    counts = store.counts(code, Q, G, key)
    assert counts.by_option == {2: 2} and counts.total == 2
    store.answer(code, Q, G, learner(1), 0, 4)  # "ask again"
    store.answer(code, Q, G, learner(1), 0, 4)  # a retry of the same
    counts = store.counts(code, Q, G, key)
    assert counts.by_option == {0: 1, 2: 1} and counts.total == 2
    assert counts.as_list(4) == [1, 0, 1, 0]
    assert counts.shares(4) == [0.5, 0.0, 0.5, 0.0]


def test_one_session_is_one_answer_whatever_ids_it_sends(store, room):
    """A session that sends a second learner id moves its answer to it: one answer."""
    code, key = room
    s1, s2 = learner(1, "S"), learner(2, "S")
    store.answer(code, Q, G, learner(1), 1, 4, session=s1)
    store.answer(code, Q, G, learner(2), 2, 4, session=s2)
    store.answer(code, Q, G, learner(3), 3, 4, session=s1)  # s1 again, with another id
    counts = store.counts(code, Q, G, key)
    assert counts.by_option == {2: 1, 3: 1} and counts.total == 2
    store.answer(code, Q, G, learner(4), 0, 4, session=s1)  # and a third one
    store.answer(code, Q, G, learner(1), 0, 4, session=s1)  # back to the first
    assert store.counts(code, Q, G, key).by_option == {0: 1, 2: 1}
    # another group or question of the same session is another answer, as for a learner
    store.answer(code, Q, "128|1|1", learner(5), 1, 4, session=s1)
    store.answer(code, "other_question", G, learner(5), 1, 4, session=s1)
    assert store.counts(code, Q, G, key).by_option == {0: 1, 2: 1}
    assert store.counts(code, Q, "128|1|1", key).by_option == {1: 1}
    assert store.counts(code, "other_question", G, key).by_option == {1: 1}


def test_a_reload_keeps_the_learner_and_takes_a_new_session(store, room):
    """A reloaded tab (or one moved to another server): the same learner id in a new
    session replaces its answer; the old session can no longer take it away."""
    code, key = room
    old, new, other = learner(1, "S"), learner(2, "S"), learner(3, "S")
    store.answer(code, Q, G, learner(1), 1, 4, session=old)
    store.answer(code, Q, G, learner(1), 2, 4, session=new)  # reloaded: one answer
    assert store.counts(code, Q, G, key).by_option == {2: 1}
    store.answer(code, Q, G, learner(9), 3, 4, session=old)  # the old session, another id
    assert store.counts(code, Q, G, key).by_option == {2: 1, 3: 1}  # learner 1's stays
    store.answer(code, Q, G, learner(8), 0, 4, session=other)  # another tab: another one
    assert store.counts(code, Q, G, key).total == 3
    store.answer(code, Q, G, learner(7), 1, 4)  # no session: nothing else replaced
    store.answer(code, Q, G, learner(6), 1, 4)
    assert store.counts(code, Q, G, key).by_option == {0: 1, 1: 2, 2: 1, 3: 1}


def test_a_session_after_a_reset_counts_again(store, room):
    code, key = room
    store.answer(code, Q, G, learner(1), 1, 4, session=learner(1, "S"))
    store.reset(code, key, Q)
    store.answer(code, Q, G, learner(2), 2, 4, session=learner(1, "S"))
    assert store.counts(code, Q, G, key).by_option == {2: 1}


def test_a_session_moving_ids_at_the_limit_still_counts_once(store, room):
    code, key = room
    for i in range(MAX_ANSWERS):
        store.answer(code, Q, G, learner(i), i % 4, 4, session=learner(i, "S"))
    # a full question: a session already in it may move to a new id (its old answer goes)
    store.answer(code, Q, G, learner(MAX_ANSWERS), 0, 4, session=learner(0, "S"))
    assert store.counts(code, Q, G, key).total == MAX_ANSWERS
    with pytest.raises(LimitReached):
        store.answer(code, Q, G, learner(MAX_ANSWERS + 1), 0, 4, session=learner(-1, "T"))


def test_groups_and_questions_are_counted_apart(store, room):
    code, key = room
    store.answer(code, Q, "64|1|1", learner(1), 1, 4)
    store.answer(code, Q, "128|1|1", learner(1), 3, 4)  # other settings: another answer
    store.answer(code, Q, "128|1|1", learner(2), 3, 4)
    store.answer(code, "saturation_mean_max", "64|1|1", learner(1), 0, 3)
    store.answer(code, Q, "", learner(3), 0, 2)  # a question that depends on nothing
    assert store.counts(code, Q, "64|1|1", key).by_option == {1: 1}
    assert store.counts(code, Q, "128|1|1", key).by_option == {3: 2}
    assert store.counts(code, "saturation_mean_max", "64|1|1", key).by_option == {0: 1}
    assert store.counts(code, Q, "", key).by_option == {0: 1}
    assert store.counts(code, Q, "32|1|1", key).total == 0  # nobody: zero, not an error
    assert store.counts(code, "gradients_norm", G, key).as_list(2) == [0, 0]


def test_rooms_are_apart(store):
    (a, key_a), (b, key_b) = store.open_room(), store.open_room()
    store.answer(a, Q, G, learner(1), 1, 2)
    assert store.counts(a, Q, G, key_a).total == 1
    assert store.counts(b, Q, G, key_b).total == 0
    with pytest.raises(WrongKey):
        store.counts(b, Q, G, key_a)


# --- presenter key, reveal, reset, close ------------------------------------------------
def test_only_the_presenter_reads_counts_before_a_reveal(store, room):
    code, key = room
    store.answer(code, Q, G, learner(1), 1, 2)
    with pytest.raises(NotRevealed):
        store.counts(code, Q, G)
    for wrong in ("x" * 43, key[:-1] + ("A" if key[-1] != "A" else "B"), "", "short"):
        with pytest.raises(WrongKey):
            store.counts(code, Q, G, wrong)
    assert store.counts(code, Q, G, key).total == 1
    assert not store.is_revealed(code, Q)


def test_reveal_opens_one_question_to_the_room(store, room):
    code, key = room
    store.answer(code, Q, G, learner(1), 1, 2)
    store.answer(code, "other_question", G, learner(1), 1, 2)
    with pytest.raises(WrongKey):
        store.reveal(code, "x" * 43, Q)
    assert not store.is_revealed(code, Q)
    store.reveal(code, key, Q)
    store.reveal(code, key, Q)  # twice: the same
    assert store.is_revealed(code, Q)
    assert store.room_status(code).revealed == {Q}
    assert store.counts(code, Q, G).by_option == {1: 1}  # no key needed now
    assert store.counts(code, Q, "32|1|1").total == 0  # every group of the question
    with pytest.raises(NotRevealed):
        store.counts(code, "other_question", G)
    store.answer(code, Q, G, learner(2), 0, 2)  # answers still come in after a reveal
    assert store.counts(code, Q, G).total == 2


def test_reset_clears_one_question_and_hides_it(store, room):
    code, key = room
    for i in range(3):
        store.answer(code, Q, G, learner(i), i % 2, 2)
        store.answer(code, Q, "1|2", learner(i), 1, 2)
        store.answer(code, "kept", G, learner(i), 0, 2)
    store.reveal(code, key, Q)
    with pytest.raises(WrongKey):
        store.reset(code, "x" * 43, Q)
    assert store.counts(code, Q, G).total == 3
    store.reset(code, key, Q)
    assert not store.is_revealed(code, Q)
    assert store.counts(code, Q, G, key).total == 0
    assert store.counts(code, Q, "1|2", key).total == 0
    assert store.counts(code, "kept", G, key).total == 3
    store.answer(code, Q, G, learner(0), 1, 2)  # the question starts again
    assert store.counts(code, Q, G, key).by_option == {1: 1}


def test_a_learner_learns_whether_its_answer_is_in_the_room(store, room):
    """Its own answer, for its group: there once given, gone after a reset (the card asks
    again), as are no one else's and no other group's."""
    code, key = room
    store.answer(code, Q, G, learner(1), 1, 2)
    assert store.has_answered(code, Q, G, learner(1))
    assert not store.has_answered(code, Q, G, learner(2))
    assert not store.has_answered(code, Q, "1|2", learner(1))
    assert not store.has_answered(code, "other", G, learner(1))
    store.reset(code, key, Q)
    assert not store.has_answered(code, Q, G, learner(1))
    with pytest.raises(BadInput):
        store.has_answered(code, Q, G, "not an id")
    store.close(code, key)
    with pytest.raises(RoomClosed):
        store.has_answered(code, Q, G, learner(1))


def test_close_ends_the_room(store, room):
    code, key = room
    store.answer(code, Q, G, learner(1), 1, 2)
    store.reveal(code, key, Q)
    with pytest.raises(WrongKey):
        store.close(code, "x" * 43)
    assert store.room_status(code).state == "open"
    store.close(code, key)
    status = store.room_status(code)
    assert status.state == "closed" and status.revealed == frozenset()
    assert not store.is_revealed(code, Q)
    with pytest.raises(RoomClosed):
        store.answer(code, Q, G, learner(2), 0, 2)
    with pytest.raises(RoomClosed):
        store.counts(code, Q, G, key)
    with pytest.raises(RoomClosed):
        store.reveal(code, key, Q)
    with pytest.raises(RoomClosed):
        store.reset(code, key, Q)
    store.close(code, key)  # closing again changes nothing
    with pytest.raises(WrongKey):
        store.close(code, "x" * 43)


def test_close_deletes_the_answers(store, room, backend):
    code, key = room
    for q in ("a_question", "b_question"):
        store.answer(code, q, G, learner(1), 1, 2)
    store.reveal(code, key, "a_question")
    assert _stored(store, backend, code) > 0
    store.close(code, key)
    assert _stored(store, backend, code) == 0


def _stored(store, backend, code: str) -> int:
    """Answers and reveals of room ``code`` left in the store, read raw."""
    if backend == "sqlite":
        import sqlite3

        with sqlite3.connect(store.path) as conn:
            return sum(
                conn.execute(f"SELECT COUNT(*) FROM {table} WHERE code = ?", (code,)).fetchone()[0]
                for table in ("answers", "revealed")
            )
    keys = list(store.client.scan_iter(f"{store.prefix}{code}:*"))
    flags = [f for f in store.client.hkeys(f"{store.prefix}{code}") if f[:2] in ("q:", "r:")]
    return len(keys) + len(flags)


def test_an_answer_holds_only_random_ids_option_group_and_time(store, room, backend, clock):
    code, _ = room
    store.answer(code, Q, G, learner(7), 3, 4, session=learner(1, "S"))
    if backend == "sqlite":
        import sqlite3

        with sqlite3.connect(store.path) as conn:
            rows = conn.execute("SELECT * FROM answers").fetchall()
            columns = [c[1] for c in conn.execute("PRAGMA table_info(answers)")]
        assert columns == ["code", "question", "grp", "learner", "session", "option", "at"]
        assert rows == [(code, Q, G, learner(7), learner(1, "S"), 3, clock.now)]
    else:
        stored = store.client.hgetall(f"{store.prefix}{code}:a:{Q}")
        assert stored == {f"{learner(7)}|{G}": f"3:{int(clock.now)}:{learner(1, 'S')}"}
        sessions = store.client.hgetall(f"{store.prefix}{code}:s:{Q}")
        assert sessions == {f"{learner(1, 'S')}|{G}": f"{learner(7)}|{G}"}


# --- expiry -----------------------------------------------------------------------------
def test_a_room_expires_after_12_hours(store, clock):
    code, key = store.open_room()
    store.answer(code, Q, G, learner(1), 1, 2)
    store.reveal(code, key, Q)
    clock.advance(ROOM_TTL_S - 1)
    assert store.room_status(code).state == "open"
    store.answer(code, Q, G, learner(2), 1, 2)
    assert store.counts(code, Q, G).total == 2
    clock.advance(1)
    status = store.room_status(code)
    assert status.state == "expired" and status.revealed == frozenset()
    with pytest.raises(RoomExpired):
        store.answer(code, Q, G, learner(3), 1, 2)
    with pytest.raises(RoomExpired):
        store.counts(code, Q, G, key)
    for call in (store.reveal, store.reset):
        with pytest.raises(RoomExpired):
            call(code, key, Q)
    with pytest.raises(RoomExpired):
        store.close(code, key)
    # its record is kept a while, so an old link says "expired", then it is gone
    clock.advance(TOMBSTONE_S - 1)
    assert store.room_status(code).state == "expired"
    clock.advance(1)
    with pytest.raises(UnknownRoom):
        store.room_status(code)
    with pytest.raises(UnknownRoom):
        store.answer(code, Q, G, learner(3), 1, 2)


def test_a_closed_room_is_forgotten_after_its_expiry(store, clock):
    code, key = store.open_room()
    store.close(code, key)
    clock.advance(ROOM_TTL_S + TOMBSTONE_S - 1)
    assert store.room_status(code).state == "closed"
    clock.advance(1)
    with pytest.raises(UnknownRoom):
        store.room_status(code)


# --- limits -----------------------------------------------------------------------------
def test_a_question_takes_1000_answers(store, room):
    code, key = room
    groups = ("64|1|1", "128|1|1", "")  # the limit is per question, all groups together
    for i in range(MAX_ANSWERS):
        store.answer(code, Q, groups[i % 3], learner(i), i % 4, 4)
    with pytest.raises(LimitReached) as info:
        store.answer(code, Q, G, learner(MAX_ANSWERS), 0, 4)
    assert info.value.limit == "answers_per_question" and info.value.value == MAX_ANSWERS
    assert "answers_per_question" in str(info.value)
    # a learner who answered may still change their answer; other questions take answers
    store.answer(code, Q, groups[0], learner(0), 3, 4)
    store.answer(code, "other_question", G, learner(MAX_ANSWERS), 0, 4)
    totals = [store.counts(code, Q, g, key).total for g in groups]
    assert totals == [334, 333, 333]
    # group 0: i = 0, 3, …, 999 chose i % 4; learner 0 (option 0) moved to 3
    expected = Counter(i % 4 for i in range(0, MAX_ANSWERS, 3))
    expected[0] -= 1
    expected[3] += 1
    assert store.counts(code, Q, groups[0], key).by_option == expected
    store.reset(code, key, Q)
    store.answer(code, Q, G, learner(MAX_ANSWERS), 0, 4)


def test_a_store_holds_200_open_rooms(store, clock):
    rooms = [store.open_room() for _ in range(MAX_OPEN_ROOMS)]
    assert len({code for code, _ in rooms}) == MAX_OPEN_ROOMS
    with pytest.raises(LimitReached) as info:
        store.open_room()
    assert info.value.limit == "open_rooms" and info.value.value == MAX_OPEN_ROOMS
    store.close(*rooms[0])  # a closed room frees its place
    store.open_room()
    with pytest.raises(LimitReached):
        store.open_room()
    clock.advance(ROOM_TTL_S)  # so do expired ones
    fresh = [store.open_room() for _ in range(MAX_OPEN_ROOMS)]
    assert store.room_status(fresh[-1][0]).state == "open"
    assert store.room_status(rooms[1][0]).state == "expired"


# --- bad input --------------------------------------------------------------------------
BAD = {
    "code": [None, 123, "", "ABCDE", "ABCDEFG", "ABCDE0", "ABCDEO", "ABCDE1", "ABCDEI",
             "ABCDEL", "ABC.EF", "ÄBCDEF", "A" * 1000],
    "question": [None, 1, "", "Variance", "1abc", "a b", "a;drop", "a" * 41, "é", "a\n",
                 "a.", ".a", "a.b.c", "a..b", "a.1b", "recap." + "a" * 35],
    "group": [None, 64, "64 1", "64;1", "é", "a\n", "x" * 201, "64/1"],
    "learner": [None, 1, "", "short", "x" * 15, "x" * 44, "abcdefghijklmnop!", "é" * 16],
    "session": [None, 1, "short", "x" * 15, "x" * 44, "abcdefghijklmnop!", "é" * 16],
    "option": [None, -1, 4, 1.0, True, "1", np.float64(1.0)],
    "n_options": [None, 1, 13, 2.0, "4", False],
}  # fmt: skip
GOOD = {"question": Q, "group": G, "learner": learner(1), "option": 1, "n_options": 4}


@pytest.mark.parametrize(
    ("field", "value"), [(f, v) for f, values in BAD.items() for v in values], ids=repr
)
def test_bad_input_is_refused_naming_the_field(store, room, field, value):
    code, key = room
    args = {"code": code, **GOOD, field: value}
    with pytest.raises(BadInput) as info:
        store.answer(**args)
    assert info.value.field == field
    assert isinstance(info.value, ValueError)
    assert store.counts(code, Q, G, key).total == 0  # nothing recorded


def test_a_card_asked_again_has_a_key_of_its_own(store, room):
    """The recap asks a card again under ``recap.<card>``: its answers are counted apart."""
    code, key = room
    store.answer(code, Q, G, learner(1), 1, 4)
    store.answer(code, f"recap.{Q}", G, learner(1), 3, 4)
    assert store.counts(code, Q, G, key).by_option == {1: 1}
    assert store.counts(code, f"recap.{Q}", G, key).by_option == {3: 1}
    store.reveal(code, key, f"recap.{Q}")
    assert store.is_revealed(code, f"recap.{Q}") and not store.is_revealed(code, Q)


def test_numpy_integers_are_options(store, room):
    code, key = room
    store.answer(code, Q, G, learner(1), np.int64(2), np.int32(3))
    assert store.counts(code, Q, G, key).by_option == {2: 1}


@pytest.mark.parametrize("field", ["code", "question", "group"])
def test_bad_input_to_the_presenters_calls(store, room, field):
    code, key = room
    args = {"code": code, "question": Q, "group": G, field: BAD[field][3]}
    with pytest.raises(BadInput) as info:
        store.counts(args["code"], args["question"], args["group"], key)
    assert info.value.field == field
    if field != "group":
        with pytest.raises(BadInput):
            store.reveal(args["code"], key, args["question"])
        with pytest.raises(BadInput):
            store.reset(args["code"], key, args["question"])
    if field == "code":
        for call in (store.room_status, lambda c: store.close(c, key)):
            with pytest.raises(BadInput):
                call(args["code"])


# --- pure helpers -----------------------------------------------------------------------
def test_group_of_is_canonical():
    assert rs.group_of((64, 1.0, 1.0)) == "64|1|1"
    assert rs.group_of((64, 1, 1)) == rs.group_of((64.0, 1.0, True))  # equal tuples, one group
    assert rs.group_of((np.int64(64), np.float64(0.5), np.float32(0.25))) == "64|0.5|0.25"
    assert rs.group_of((0.1, -2.5e-7, 1e300)) == "0.1|-2.5e-07|1e+300"
    assert rs.group_of(("adam", 256, 0)) == "adam|256|0"
    assert rs.group_of(()) == ""
    assert rs.group_of((0.30000000000000004,)) != rs.group_of((0.3,))  # distinct floats stay apart
    for bad in [(float("nan"),), (float("inf"),), ("a b",), (None,), ((1, 2),), ("x" * 41,)]:
        with pytest.raises(BadInput) as info:
            rs.group_of(bad)
        assert info.value.field == "group"
    with pytest.raises(BadInput):
        rs.group_of(range(100))  # 289 characters


def test_codes_and_ids_are_random_and_valid():
    codes = {rs.new_code() for _ in range(200)}
    assert len(codes) == 200 and all(rs.normalize_code(c) == c for c in codes)
    ids = {rs.new_learner_id() for _ in range(200)}
    assert len(ids) == 200 and all(rs.check_learner(i) == i for i in ids)
    assert rs.hash_key("k") == rs.hash_key("k") != rs.hash_key("K")
