"""A room in Chromium: a presenter page and two learner pages on one server.

The presenter (1400 px, presenter mode) opens a room on the variance page; its QR code,
read off the screen, decodes to the join link. Learner A (1400 px) opens the link and
locks in "8"; A's address, opened in a fresh browser context (a 390-px phone: a link
pasted in the chat) locks in "64" as a second learner, since the learner id is kept in
the tab, not in the URL. The presenter's count, polled by its fragment, reaches 2 without
a reload. After "Reveal to the room" both learners' cards show the room's answers without
any interaction (they poll). A's reload keeps A's id: A's new answer replaces the old one.

Screenshots: artifacts/room-presenter-1400.png, room-qr.png, room-learner-390.png,
room-learner-revealed-390.png and room-learner-revealed-zh.png. The server's store is its
default one (SQLite in the system temporary folder), which the test reads too; room codes
are random, so other servers sharing it do not interfere.
"""

from __future__ import annotations

import io
import re
from urllib.parse import parse_qsl, urlsplit

import pytest

import rooms

pytestmark = pytest.mark.e2e

QUESTION = "variance_std"
#: The question's settings group at the page's defaults (d_k, σ_q, σ_k).
GROUP = rooms.group_of((64, 1.0, 1.0))
OPTIONS = ("1", "8", "64", "4096")
PHONE = {"width": 390, "height": 844}
#: The presenter's counts refresh every 2 s, an answered card every 3.5 s; a count is
#: given this long to show.
COUNT_TIMEOUT_MS = 15_000


def _answered(driver, n: int):
    """The "n answered" line under the room's chart on the driver's page."""
    main = driver.page.locator("[data-testid='stMain'] p")
    return main.filter(has_text=re.compile(rf"^{n} answered$"))


def _lock_in(learner, option_text: str, *, revealed: bool = False) -> None:
    """Choose ``option_text`` and lock it in; wait until the card says it is in the room's
    count (or, once revealed, shows the room's answers)."""
    guess = learner.widget(f"{QUESTION}_guess")
    guess.wait_for(state="visible")
    learner.interact(
        lambda: guess.locator("label").filter(has_text=option_text).first.click(),
        expect_chart_change=False,
    )
    learner.interact(learner.button(f"{QUESTION}_reveal").click, expect_chart_change=False)
    if revealed:
        learner.page.get_by_text(re.compile(r"^\d+ answered$")).wait_for(state="visible")
    else:
        learner.page.get_by_text("Your answer is in the room's count").wait_for(state="visible")


def test_a_room_in_the_browser(make_app, artifacts_dir):
    presenter = make_app()
    presenter.open("variance", "present=1")
    presenter.interact(presenter.button("room_open").click, expect_chart_change=False)
    sidebar = presenter.page.locator("[data-testid='stSidebar']")
    link = sidebar.locator("[data-testid='stCode']").filter(has_text="room=").first.inner_text()
    link = link.strip()
    parts = urlsplit(link)
    assert parts.path == "/variance" and "room=" in parts.query
    assert "present" not in parts.query and "room_key" not in parts.query
    code = dict(p.split("=", 1) for p in parts.query.split("&"))["room"]

    # the QR code as shown on the screen scans back to the join link
    presenter.interact(
        lambda: presenter.widget("room_qr").locator("label").click(), expect_chart_change=False
    )
    qr = sidebar.locator("[data-testid='stImage'] img")
    qr.wait_for(state="visible")
    png = qr.screenshot(path=str(artifacts_dir / "room-qr.png"))
    import zxingcpp
    from PIL import Image

    decoded = zxingcpp.read_barcodes(Image.open(io.BytesIO(png)))
    assert [r.text for r in decoded] == [link]

    a = make_app()
    a.open("variance", parts.query)
    a.page.get_by_text(f"Room {code} · your answer is shared anonymously").wait_for()
    _lock_in(a, "8")
    assert "learner" not in a.page.url  # the id stays in the tab
    # A's address in a fresh context: another tab, another learner
    b = make_app(viewport=PHONE, is_mobile=True, has_touch=True)
    b.open("variance", urlsplit(a.page.url).query)
    b.page.get_by_text(f"Room {code} · your answer is shared anonymously").wait_for()
    _lock_in(b, "64")
    b.screenshot("room-learner-390", full_page=False)

    # the presenter's view counts both without a reload (its fragment polls)
    _answered(presenter, 2).wait_for(timeout=COUNT_TIMEOUT_MS)
    presenter.screenshot("room-presenter-1400")

    # before the reveal no learner sees the room's answers (the chart and its count)
    for learner in (a, b):
        assert _answered(learner, 2).count() == 0
    presenter.button(f"{QUESTION}_room_reveal").click()
    main = presenter.page.locator("[data-testid='stMain']")
    main.get_by_text("Revealed to the room.").wait_for(timeout=COUNT_TIMEOUT_MS)
    # both cards show the room's answers with no interaction: they poll
    for learner in (a, b):
        _answered(learner, 2).wait_for(timeout=COUNT_TIMEOUT_MS)
    b.wait_charts_rendered()
    _answered(b, 2).scroll_into_view_if_needed()
    b.screenshot("room-learner-revealed-390", full_page=False)
    counts = rooms.open_store().counts(code, QUESTION, GROUP)  # revealed: no key needed
    assert counts.by_option == {OPTIONS.index("8"): 1, OPTIONS.index("64"): 1}

    # A reloads the tab: the same learner (sessionStorage), so a new guess replaces A's
    a.page.reload(wait_until="domcontentloaded")
    a.page.wait_for_function("() => window.__e2e && window.__e2e.finished >= 1")
    a.wait_idle()
    _lock_in(a, "4096", revealed=True)
    _answered(a, 2).wait_for(timeout=COUNT_TIMEOUT_MS)
    counts = rooms.open_store().counts(code, QUESTION, GROUP)
    assert counts.by_option == {OPTIONS.index("4096"): 1, OPTIONS.index("64"): 1}

    # the same view in Chinese
    a.interact(
        lambda: a.page.locator("[data-testid='stSidebar'] label").filter(has_text="中文").click(),
        expect_chart_change=False,
    )
    count = a.page.locator("[data-testid='stMain'] p").filter(has_text="已有 2 人作答")
    count.wait_for(timeout=COUNT_TIMEOUT_MS)
    a.wait_charts_rendered()
    count.scroll_into_view_if_needed()
    a.screenshot("room-learner-revealed-zh", full_page=False)
    for driver in (presenter, a, b):
        driver.assert_healthy()


@pytest.mark.parametrize(
    ("query", "warning"),
    [
        ("d_k=abc", "d_k"),  # a bad value in the link
        ("room_key=not-the-key", "take-over link"),  # a take-over link with a wrong key
        ("reveal=1", "presenter"),  # in a room the presenter reveals
    ],
)
def test_a_warning_about_a_room_link_stays_until_the_learner_acts(app, query, warning):
    """The tab sends its learner id once the page is drawn, which reruns the app: the
    warnings about the link that the first run drew stay through that run, as they do
    outside a room, until the learner changes something."""
    code, _key = rooms.open_store().open_room()
    app.open("variance", f"room={code}&{query}")
    shown = app.page.locator("[data-testid='stAlert']").filter(has_text=warning)
    shown.first.wait_for(state="visible")
    app.page.wait_for_timeout(3_000)  # the id's rerun, and the learner's poll (3.5 s)
    app.wait_idle()
    assert shown.count() == 1, f"the warning about {warning} went"
    # the learner's first change takes it away
    app.interact(app.button("d_k_double").click, expect_chart_change=False)  # the question
    assert shown.count() == 0


def test_locking_in_on_a_phone_in_a_room_keeps_the_heads(make_app):
    """which-d in a room on a phone: locking in a guess keeps n_heads at 8 (the app writes
    it to the URL; a select box the browser drew anew once fell back to its first option,
    1, in about a quarter of the tries)."""
    code, _key = rooms.open_store().open_room()
    for _ in range(3):
        learner = make_app(viewport=PHONE, is_mobile=True, has_touch=True)
        learner.open("which-d", f"room={code}")
        guess = learner.widget("which_d_std_guess")
        learner.interact(
            lambda guess=guess: guess.locator("label").filter(has_text="(√8)").first.click(),
            expect_chart_change=False,
        )
        learner.interact(learner.button("which_d_std_reveal").click, expect_chart_change=False)
        learner.page.wait_for_timeout(1_500)  # the tab's id, and the learner's poll
        learner.wait_idle()
        assert "n_heads" not in learner.page.url
        assert learner.widget("n_heads").locator("input").input_value() == "8"


def test_a_room_closed_from_its_take_over_link_leaves_the_projector(make_app):
    """The presenter's screen shows the room's QR code; the room is closed from another
    device with the take-over link's key: the presenter's view under the card, which
    polls, reruns the page, and the join link and QR code go, with a notice."""
    presenter = make_app()
    presenter.open("variance", "present=1")
    presenter.interact(presenter.button("room_open").click, expect_chart_change=False)
    for toggle in ("room_qr", "room_takeover"):
        presenter.interact(
            lambda toggle=toggle: presenter.widget(toggle).locator("label").click(),
            expect_chart_change=False,
        )
    sidebar = presenter.page.locator("[data-testid='stSidebar']")
    qr = sidebar.locator("[data-testid='stImage'] img")
    qr.wait_for(state="visible")
    takeover = sidebar.locator("[data-testid='stCode']").filter(has_text="room_key=")
    query = dict(parse_qsl(urlsplit(takeover.first.inner_text().strip()).query))
    rooms.open_store().close(query["room"], query["room_key"])  # the phone closes it
    notice = presenter.page.get_by_text(f"Room {query['room']} has been closed")
    notice.first.wait_for(timeout=COUNT_TIMEOUT_MS)
    presenter.wait_idle()
    assert qr.count() == 0 and takeover.count() == 0
    assert presenter.button("room_open").count() == 1  # a new room can be opened


def test_a_reset_asks_the_learner_again_without_a_reload(make_app):
    """The presenter resets a question the learner answered: the learner's card, which
    polls, asks it again on its own, with a note saying why."""
    presenter = make_app()
    presenter.open("variance", "present=1")
    presenter.interact(presenter.button("room_open").click, expect_chart_change=False)
    sidebar = presenter.page.locator("[data-testid='stSidebar']")
    link = sidebar.locator("[data-testid='stCode']").filter(has_text="room=").first
    learner = make_app(viewport=PHONE, is_mobile=True, has_touch=True)
    learner.open("variance", urlsplit(link.inner_text().strip()).query)
    _lock_in(learner, "8")
    _answered(presenter, 1).wait_for(timeout=COUNT_TIMEOUT_MS)
    presenter.button(f"{QUESTION}_room_reset").click()
    _answered(presenter, 0).wait_for(timeout=COUNT_TIMEOUT_MS)
    learner.widget(f"{QUESTION}_guess").wait_for(state="visible", timeout=COUNT_TIMEOUT_MS)
    learner.page.get_by_text("The presenter has reset this question").wait_for()
    assert learner.page.get_by_text("Your answer is in the room's count").count() == 0
    _lock_in(learner, "64")  # counted again
    _answered(presenter, 1).wait_for(timeout=COUNT_TIMEOUT_MS)
    assert learner.page.get_by_text("The presenter has reset this question").count() == 0
