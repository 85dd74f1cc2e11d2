"""A room in Chromium: a presenter page and two learner pages on one server.

The presenter (1400 px, presenter mode) opens a room on the variance page; its QR code,
read off the screen, decodes to the join link. Two learners open the link (one at
1400 px, one on a 390-px phone) and lock in an answer; the presenter's count, polled by
its fragment, reaches 2 without a reload. After "Reveal to the room", the first learner's
next interaction (switching to Chinese) shows the room's answers on its card.

Screenshots: artifacts/room-presenter-1400.png, room-qr.png, room-learner-390.png and
room-learner-revealed-zh.png. The server's store is its default one (SQLite in the system
temporary folder); room codes are random, so other servers sharing it do not interfere.
"""

from __future__ import annotations

import io
import re
from urllib.parse import urlsplit

import pytest

pytestmark = pytest.mark.e2e

QUESTION = "variance_std"
PHONE = {"width": 390, "height": 844}
#: The presenter's counts refresh every 2 s; a count is given this long to show.
COUNT_TIMEOUT_MS = 15_000


def _lock_in(learner, option_text: str) -> None:
    guess = learner.widget(f"{QUESTION}_guess")
    guess.wait_for(state="visible")
    learner.interact(
        lambda: guess.locator("label").filter(has_text=option_text).first.click(),
        expect_chart_change=False,
    )
    learner.interact(learner.button(f"{QUESTION}_reveal").click, expect_chart_change=False)
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

    learners = [make_app(), make_app(viewport=PHONE, is_mobile=True, has_touch=True)]
    for learner in learners:
        learner.open("variance", parts.query)
        learner.page.get_by_text(f"Room {code} · your answer is shared anonymously").wait_for()
        assert "learner=" in learner.page.url  # the id that survives a reload
    _lock_in(learners[0], "8")
    _lock_in(learners[1], "64")
    learners[1].screenshot("room-learner-390", full_page=False)

    # the presenter's view counts both without a reload (its fragment polls)
    main = presenter.page.locator("[data-testid='stMain']")
    main.locator("p").filter(has_text=re.compile(r"^2 answered$")).wait_for(
        timeout=COUNT_TIMEOUT_MS
    )
    presenter.screenshot("room-presenter-1400")

    # before the reveal no learner sees the room's answers (the chart and its count)
    answered = learners[0].page.locator("[data-testid='stMain'] p").filter(has_text="answered")
    assert answered.count() == 0
    presenter.button(f"{QUESTION}_room_reveal").click()
    main.get_by_text("Revealed to the room.").wait_for(timeout=COUNT_TIMEOUT_MS)
    # the learner's next interaction: the same view in Chinese
    learners[0].interact(
        lambda: (
            learners[0]
            .page.locator("[data-testid='stSidebar'] label")
            .filter(has_text="zh")
            .click()
        ),
        expect_chart_change=False,
    )
    count = learners[0].page.locator("[data-testid='stMain'] p").filter(has_text="已有 2 人作答")
    count.wait_for(timeout=COUNT_TIMEOUT_MS)
    learners[0].wait_charts_rendered()
    count.scroll_into_view_if_needed()
    learners[0].screenshot("room-learner-revealed-zh", full_page=False)
    for driver in (presenter, *learners):
        driver.assert_healthy()
