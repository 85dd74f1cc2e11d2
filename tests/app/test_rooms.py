"""Rooms through AppTest: a presenter opens a room, learners answer, the presenter sees
the count, reveals, resets and closes; bad links, a store that fails, the take-over link,
and ``reveal=1`` in share links.

Each test has a room store of its own: a SQLite folder of the test's (``ROOM_STORE_DIR``),
or, for the tests run on both backends, Redis on the session's server
(``ROOM_STORE_URL``; skipped without ``redis-server`` unless ``REQUIRE_REDIS`` is set). The
app's store is cached per (URL, folder), so each test's settings give it a fresh store.
"""

from __future__ import annotations

import io
import json
from urllib.parse import parse_qsl, urlsplit

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

import rooms
from tests.app.helpers import ROOT, TIMEOUT, open_share_panel, run_page, warnings
from ui.common import room, room_tab

VARIANCE = "app_pages/variance.py"
QUESTION = "variance_std"
#: Charts on the variance page with the question answered (histograms, sweep, walks…).
ANSWERED_CHARTS = 5


@pytest.fixture(params=["sqlite", "redis"])
def store_url(request, monkeypatch, tmp_path) -> str:
    """The test's room store, set for the app; its URL ("" for SQLite)."""
    if request.param == "redis":
        url = request.getfixturevalue("redis_server").url
        # a database of its own per test would need FLUSHDB; codes are random, so tests
        # sharing the server never see each other's rooms
        monkeypatch.setenv("ROOM_STORE_URL", url)
        monkeypatch.setenv("ROOM_STORE_DIR", str(tmp_path))  # a new cache key per test
        return url
    monkeypatch.delenv("ROOM_STORE_URL", raising=False)
    monkeypatch.setenv("ROOM_STORE_DIR", str(tmp_path))
    return ""


@pytest.fixture
def sqlite_store(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("ROOM_STORE_URL", raising=False)
    monkeypatch.setenv("ROOM_STORE_DIR", str(tmp_path))


def param(at: AppTest, key: str) -> str:
    """The single value of query parameter ``key`` (AppTest gives a str or a list)."""
    value = at.query_params[key]
    return value if isinstance(value, str) else value[-1]


def captions(at: AppTest) -> list[str]:
    return [c.value for c in at.caption]


def room_charts(at: AppTest) -> list[dict]:
    """The room's answer charts on the page: {option label: count} and the learner's own."""
    out = []
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        if spec.get("description", "").startswith(("Bar chart: the number of learners", "条形图")):
            (payload,) = [ds.data.data for ds in chart.proto.datasets]
            df = pa.ipc.open_stream(io.BytesIO(payload)).read_all().to_pandas()
            mine = df.loc[df["mine"], "option"].tolist()
            out.append({"counts": dict(zip(df.option, df["count"], strict=True)), "mine": mine})
    return out


def open_room(**params: str) -> tuple[AppTest, str, str]:
    """A presenter on the variance page opens a room: (session, code, join link)."""
    at = run_page(VARIANCE, reveal=False, present="1", **params)
    at.button(key="room_open").click().run()
    assert not at.exception, at.exception
    code = at.session_state["room"]
    links = [c.value for c in at.sidebar.code if "room=" in c.value]
    assert len(links) == 1, [c.value for c in at.sidebar.code]
    return at, code, links[0]


def with_tab(at: AppTest, learner_id: str | None = None) -> AppTest:
    """The tab's element has sent the tab's learner id (the browser does once the element
    has mounted: ``sessionStorage``); a new random id unless ``learner_id`` is given."""
    at.session_state[room_tab.TAB] = {"id": learner_id or rooms.new_learner_id()}
    return at.run()


def tab_id(at: AppTest) -> str:
    """The learner id the session holds (from its tab)."""
    return at.session_state[room_tab.TAB]["id"]


def join(link: str, learner_id: str | None = None) -> AppTest:
    """A learner opens the join link in a tab (its element sends the tab's id)."""
    query = dict(parse_qsl(urlsplit(link).query))
    return with_tab(run_page(VARIANCE, reveal=False, **query), learner_id)


def lock_in(at: AppTest, option: int) -> AppTest:
    at.radio(key=f"{QUESTION}_guess").set_value(option).run()
    return at.button(key=f"{QUESTION}_reveal").click().run()


def test_a_room_from_opening_to_closing(store_url):
    presenter, code, link = open_room(d_k="256")
    # the join link: the room and the presenter's settings, never the key or presenter mode
    query = dict(parse_qsl(urlsplit(link).query))
    assert query["room"] == code and query["d_k"] == "256"
    assert not {"present", "step", "reveal", "room_key", "learner"} & set(query)
    assert presenter.session_state["_room_key"] not in link
    assert presenter.query_params["room"] in (code, [code])
    assert room_charts(presenter) == [
        {"counts": {"1": 0, "16": 0, "256": 0, "65536": 0}, "mine": []}
    ]

    learners = [join(link), join(link)]
    for at in learners:
        assert not at.exception and not warnings(at)
        assert f"Room {code} · your answer is shared anonymously" in captions(at)
        assert "learner" not in at.query_params  # the id stays in the tab
    lock_in(learners[0], 1)
    lock_in(learners[1], 2)
    for at in learners:
        assert any("in the room's count" in c for c in captions(at))
        assert len(at.get("vega_lite_chart")) == ANSWERED_CHARTS  # no counts before a reveal
        assert not room_charts(at)

    presenter.run()
    assert "2 answered" in captions(presenter)
    assert room_charts(presenter)[0]["counts"] == {"1": 0, "16": 1, "256": 1, "65536": 0}

    presenter.button(key=f"{QUESTION}_room_reveal").click().run()
    assert "Revealed to the room." in captions(presenter)
    learners[0].run()  # the card's next poll (or any interaction) shows the room's answers
    (seen,) = room_charts(learners[0])
    assert seen == {"counts": {"1": 0, "16": 1, "256": 1, "65536": 0}, "mine": ["16"]}

    presenter.button(key=f"{QUESTION}_room_reset").click().run()
    assert "0 answered" in captions(presenter)
    learners[0].run()
    assert not room_charts(learners[0])

    presenter.button(key="room_close").click().run()
    assert not presenter.exception
    assert "room" not in presenter.session_state and "room" not in presenter.query_params
    assert any(f"Room {code} is closed" in i.value for i in presenter.info)
    assert presenter.button(key="room_open")  # a new room can be opened
    learners[1].run()
    assert any(f"Room {code} has been closed" in w for w in warnings(learners[1]))
    assert not any("shared anonymously" in c for c in captions(learners[1]))
    assert "room" not in learners[1].query_params
    assert len(learners[1].get("vega_lite_chart")) == ANSWERED_CHARTS


def test_a_reset_asks_the_learners_again(store_url):
    """The presenter's "Reset question" deletes the room's answers: a learner who had answered is asked
    again, told why, instead of reading that the answer is in the room's count."""
    presenter, _code, link = open_room()
    learner = lock_in(join(link), 1)
    assert any("in the room's count" in c for c in captions(learner))
    presenter.button(key=f"{QUESTION}_room_reset").click().run()
    learner.run()  # the card's next poll, or any interaction
    assert not learner.exception
    assert learner.radio(key=f"{QUESTION}_guess").value is None  # asked again
    assert any("The presenter has reset this question" in c for c in captions(learner))
    assert not any("in the room's count" in c for c in captions(learner))
    lock_in(learner, 2)
    assert any("in the room's count" in c for c in captions(learner))
    assert not any("has reset this question" in c for c in captions(learner))
    presenter.run()
    assert "1 answered" in captions(presenter)


def test_a_reload_answers_as_the_same_learner(store_url):
    presenter, _code, link = open_room()
    first = lock_in(join(link), 0)
    # the reloaded tab (or the same tab moved to another server): a new session, and the
    # tab's element sends the id the tab keeps
    again = join(link, tab_id(first))
    lock_in(again, 3)  # "ask again" after a reload: the answer is replaced
    lock_in(join(link), 3)  # another learner
    presenter.run()
    assert room_charts(presenter)[0]["counts"] == {"1": 0, "8": 0, "64": 0, "4096": 2}
    assert "2 answered" in captions(presenter)


def test_a_copied_link_is_another_learner(store_url):
    """Learner A's address opened elsewhere (a link pasted in the chat) carries no id: it
    is a new tab with an id of its own, so A's answer stays."""
    presenter, _code, link = open_room()
    a = lock_in(join(link), 1)
    copied = dict(parse_qsl(urlsplit(link).query)) | {k: param(a, k) for k in a.query_params}
    assert "learner" not in copied
    b = lock_in(with_tab(run_page(VARIANCE, reveal=False, **copied)), 3)
    assert tab_id(b) != tab_id(a)
    presenter.run()
    assert room_charts(presenter)[0]["counts"] == {"1": 0, "8": 1, "64": 0, "4096": 1}
    assert "2 answered" in captions(presenter)


def test_a_lock_in_waits_for_the_tabs_id(store_url):
    presenter, _code, link = open_room()
    query = dict(parse_qsl(urlsplit(link).query))
    at = lock_in(run_page(VARIANCE, reveal=False, **query), 2)  # the element not mounted yet
    assert any("Connecting this tab to the room" in c for c in captions(at))
    presenter.run()
    assert "0 answered" in captions(presenter)
    with_tab(at)  # the id arrives: the answer goes
    assert any("in the room's count" in c for c in captions(at))
    presenter.run()
    assert "1 answered" in captions(presenter)


def test_a_second_id_from_one_session_replaces_its_answer(store_url):
    """A session whose tab sends another id (its storage edited) stays one learner: its
    answer moves to the new id, in the room's count once."""
    presenter, _code, link = open_room()
    at = lock_in(join(link), 1)
    lock_in(join(link), 0)  # someone else
    with_tab(at)  # the same session, a new id: the answer is sent again under it
    with_tab(at)  # and again
    lock_in(at.button(key=f"{QUESTION}_again").click().run(), 2)  # then a new guess
    presenter.run()
    assert room_charts(presenter)[0]["counts"] == {"1": 1, "8": 0, "64": 1, "4096": 0}
    assert "2 answered" in captions(presenter)


def test_after_the_reveal_every_card_shows_the_room(sqlite_store):
    """A learner who answered sees the room's answers with their own marked (the card polls
    for it: tests/e2e/test_rooms.py waits for it without an interaction); one who skipped
    sees them unmarked."""
    presenter, _code, link = open_room()
    answered, skipped = lock_in(join(link), 1), join(link)
    skipped.button(key=f"{QUESTION}_skip").click().run()
    assert any("in the room's count" in c for c in captions(answered))
    presenter.button(key=f"{QUESTION}_room_reveal").click().run()
    assert room_charts(answered.run()) == [
        {"counts": {"1": 0, "8": 1, "64": 0, "4096": 0}, "mine": ["8"]}
    ]
    assert room_charts(skipped.run())[0]["mine"] == []
    assert not any("in the room's count" in c for c in captions(answered))


def test_ask_again_replaces_the_answer(sqlite_store):
    presenter, _code, link = open_room()
    learner = lock_in(join(link), 0)
    learner.button(key=f"{QUESTION}_again").click().run()
    lock_in(learner, 2)
    presenter.run()
    assert room_charts(presenter)[0]["counts"] == {"1": 0, "8": 0, "64": 1, "4096": 0}


def test_answers_for_other_settings_are_counted_apart(sqlite_store):
    presenter, code, link = open_room()
    lock_in(with_tab(run_page(VARIANCE, reveal=False, room=code, d_k="16")), 1)
    presenter.run()
    assert "0 answered" in captions(presenter)  # the presenter counts the link's settings
    lock_in(join(link), 1)
    presenter.run()
    assert "1 answered" in captions(presenter)


@pytest.mark.parametrize("value", ["abc", "<script>", "OOOOOO", "ABCDEFG", ""])
def test_a_malformed_room_code_warns_and_the_page_works(sqlite_store, value):
    at = run_page(VARIANCE, reveal=False, room=value)
    assert not at.exception
    shown = warnings(at)
    assert len(shown) == 1 and "URL parameter `room` was ignored" in shown[0]
    assert value not in shown[0] or not value
    assert "room" not in at.query_params and "room" not in at.session_state
    assert not any("shared anonymously" in c for c in captions(at))
    lock_in(at, 1)
    assert len(at.get("vega_lite_chart")) == ANSWERED_CHARTS
    assert not warnings(at.run())  # shown once


def test_an_unknown_room_warns(sqlite_store):
    at = run_page(VARIANCE, reveal=False, room="abc-def")  # well-formed, never opened
    assert any("There is no room ABCDEF" in w for w in warnings(at))
    assert "room" not in at.query_params
    assert not any("shared anonymously" in c for c in captions(at))


def test_a_store_that_fails(start_redis, monkeypatch, tmp_path):
    server = start_redis(append_only=True)
    monkeypatch.setenv("ROOM_STORE_URL", server.url)
    monkeypatch.setenv("ROOM_STORE_DIR", str(tmp_path))
    presenter, _code, link = open_room()
    learner = join(link)
    server.kill()
    lock_in(learner, 1)
    assert not learner.exception
    assert any("was not shared" in w and "not answering" in w for w in warnings(learner))
    assert len(learner.get("vega_lite_chart")) == ANSWERED_CHARTS  # the page goes on
    assert any("**8**" in m.value for m in learner.markdown)  # and so does the prediction
    presenter.run()
    assert not presenter.exception
    assert any("not answering" in w for w in warnings(presenter))
    server.start()  # back, with what it had acknowledged (append-only file)
    learner.button(key=f"{QUESTION}_resend").click().run()
    assert any("in the room's count" in c for c in captions(learner))
    assert not any("was not shared" in w for w in warnings(learner))
    presenter.run()
    assert "1 answered" in captions(presenter)


def test_no_store_no_room_but_a_working_page(monkeypatch):
    monkeypatch.setenv("ROOM_STORE_URL", "redis://127.0.0.1:1/0")  # nothing listens there
    at = run_page(VARIANCE, reveal=False, present="1")
    at.button(key="room_open").click().run()
    assert not at.exception
    assert any("not answering" in w for w in warnings(at))
    assert "room" not in at.session_state
    at = run_page(VARIANCE, reveal=False, room="ABCDEF")
    assert any("cannot be reached" in w for w in warnings(at))
    lock_in(with_tab(at), 1)
    assert any("was not shared" in w for w in warnings(at))
    assert len(at.get("vega_lite_chart")) == ANSWERED_CHARTS


def test_the_take_over_link(sqlite_store):
    presenter, code, _link = open_room()
    assert not [c for c in presenter.sidebar.code if "room_key" in c.value]  # not unasked
    presenter.toggle(key="room_takeover").set_value(True).run()
    assert any("Do not project it" in w for w in warnings(presenter))
    (takeover,) = [c.value for c in presenter.sidebar.code if "room_key" in c.value]
    query = dict(parse_qsl(urlsplit(takeover).query))
    assert query["room_key"] == presenter.session_state["_room_key"]
    other = run_page(VARIANCE, reveal=False, **query)
    assert not other.exception
    assert "room_key" not in other.query_params  # moved into the session at once
    assert other.session_state["_room_key"] == query["room_key"]
    assert any(f"You hold room {code}'s presenter key" in i.value for i in other.info)
    assert room_charts(other)  # the live counts
    wrong = run_page(VARIANCE, reveal=False, room=code, room_key="x" * 43, present="1")
    assert any("is not room" in w for w in warnings(wrong))
    assert not room_charts(wrong) and wrong.session_state["room"] == code


def test_the_presenter_view_is_in_chinese(sqlite_store):
    presenter, code, link = open_room(lang="zh")
    assert any(f"房间 {code}" in c for c in captions(presenter))
    lock_in(join(link), 1)
    presenter.run()
    assert "已有 1 人作答" in captions(presenter)
    assert not presenter.exception


def _with_reveal(value: str = "1", **params: str) -> AppTest:
    """The variance page opened with ``reveal=value`` and "Go deeper" open (run_page has a
    ``reveal`` of its own)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, given in {"deeper": "true", **params, "reveal": value}.items():
        at.query_params[key] = given
    at.switch_page(VARIANCE)
    return at.run()


def test_reveal_1_opens_with_the_answers_shown(sqlite_store):
    at = _with_reveal(d_k="256")
    assert not at.exception and not warnings(at)
    assert len(at.get("vega_lite_chart")) == ANSWERED_CHARTS
    assert any("The measurement says **16**" in m.value for m in at.markdown)
    at.button(key=f"{QUESTION}_again").click().run()  # the learner may still guess
    assert at.radio(key=f"{QUESTION}_guess")
    assert len(at.get("vega_lite_chart")) == 3


def test_share_link_carries_reveal_on_request_and_never_the_learner(sqlite_store):
    at = open_share_panel(run_page(VARIANCE))
    link = lambda: [c.value for c in at.code if c.value.startswith(("?", "http", "/"))][-1]  # noqa: E731
    assert "reveal" not in link()
    at.checkbox(key="share_reveal").check().run()
    assert dict(parse_qsl(link().split("?", 1)[1]))["reveal"] == "1"
    # in a room: the link carries the room, never the learner id; reveal is not offered
    _presenter, code, join_link = open_room()
    learner = open_share_panel(join(join_link))
    (shared,) = [c.value for c in learner.code if "room=" in c.value]
    params = dict(parse_qsl(shared.split("?", 1)[1]))
    assert params["room"] == code and "learner" not in params
    assert not learner.get("checkbox") or all(c.key != "share_reveal" for c in learner.checkbox)


def test_reveal_1_is_ignored_in_a_room(sqlite_store):
    _presenter, code, _link = open_room()
    at = _with_reveal(room=code)
    assert any("`reveal=1` is ignored" in i.value for i in at.info)
    assert at.radio(key=f"{QUESTION}_guess")  # the question is asked
    assert len(at.get("vega_lite_chart")) == 3


def test_room_params_are_known_and_bad_reveal_warns(sqlite_store):
    at = run_page(VARIANCE, reveal=False, learner="abc")  # a stale id without a room
    assert not warnings(at) and "learner" not in at.query_params
    at = _with_reveal("maybe")
    assert any("`reveal`" in w for w in warnings(at))
    assert len(at.get("vega_lite_chart")) == 3  # not revealed
    assert room.ROOM_PARAMS == {"room", "learner", "room_key"}


def test_limits_are_reported(sqlite_store, monkeypatch):
    """The store's limits, lowered to 1 (the message names the store's real limit)."""
    import rooms.sqlite_store

    monkeypatch.setattr(rooms.sqlite_store, "MAX_ANSWERS", 1)
    monkeypatch.setattr(rooms.sqlite_store, "MAX_OPEN_ROOMS", 1)
    _presenter, _code, link = open_room()
    lock_in(join(link), 1)
    full = lock_in(join(link), 2)
    assert any("not shared" in w and "already has 1,000 answers" in w for w in warnings(full))
    assert len(full.get("vega_lite_chart")) == ANSWERED_CHARTS  # the page goes on
    assert "room" in full.session_state  # still in the room: other questions count
    second = run_page(VARIANCE, reveal=False, present="1")
    second.button(key="room_open").click().run()
    assert any("200 rooms are open on this server" in w for w in warnings(second))
    assert "room" not in second.session_state


@pytest.mark.parametrize("value", ["<script>", "short", "x" * 44, "", "L000000000000001"])
def test_an_old_links_learner_id_is_dropped(sqlite_store, value):
    """Links of an older version carry ``learner=ID``: it is dropped, with a note, and the
    tab answers with its own id."""
    presenter, code, _link = open_room()
    at = run_page(VARIANCE, reveal=False, room=code, learner=value)
    assert not at.exception and not warnings(at)
    assert any("`learner` was ignored" in i.value for i in at.info)
    assert "learner" not in at.query_params
    lock_in(with_tab(at), 1)
    presenter.run()
    assert "1 answered" in captions(presenter)
    assert tab_id(at) != value
