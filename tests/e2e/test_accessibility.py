"""Every page, light and dark, at 1400 px and on a 390-px phone: axe-core finds no serious
or critical violation, every text in every chart reaches 4.5:1 against what it is drawn
on, every selected (primary) button's label 4.5:1 against its fill, and the page asks no
other host than the app's for anything (a workshop network may be closed).

Pages come from ui.common.pages.PAGES. Each page is read in two of the session's passes
(``tests/e2e/screens.py``, shared with the narrow-screen and readable-chart suites): a
1400x1000 window and a 390x844 touch phone, both themes from each load: the app follows
the system setting, so ``emulate_media(color_scheme=...)`` switches it in place, and the
pass waits until the app and every chart are drawn on the new background. The measuring
code is in screens.py.

axe-core (tests/e2e/vendor/axe-core, from the npm registry) checks the colour contrast of
on-screen elements only: Streamlit's main area scrolls inside the window, so the window
is stretched to the page's full height before axe runs. axe cannot read chart text (an
SVG ``<text>`` over marks is "incomplete" for it), so the test measures it itself: each
chart is drawn as SVG (``ui.common.specs.for_drawing`` asks for the SVG renderer; a canvas
chart fails the test rather than being skipped), and each ``<text>`` is composited with
its opacity over what lies under its centre (the rect marks drawn before it, such as a
heatmap cell, over the chart's background), then compared with WCAG 2's contrast ratio.

Results per page, theme and width go to artifacts/accessibility.jsonl.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest

from tests.e2e.screens import AUDITED, THEMES, audit, stretch, switch_theme
from ui.common.pages import PAGES

pytestmark = pytest.mark.e2e

DESKTOP = {"viewport": {"width": 1400, "height": 1000}}
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
}


def _problems(result: dict) -> list[str]:
    where = f"{result['page']} {result['theme']} {result['width']} px"
    out = [
        f"{where}: axe {v['impact']} {v['id']} ({v['help']}) on {n['target']}: {n['summary']}"
        for v in result["axe_details"]
        for n in v["nodes"][:5]
    ]
    out += [f"{where}: chart {i} drawn on a canvas" for i in result["canvas_charts"]]
    out += [
        f"{where}: chart {t['chart']} text {t['text']!r} ({t['role']}) {t['ink']} on "
        f"{t['bg']}: {t['ratio']:.2f}:1"
        for t in result["low_chart_text"]
    ]
    out += [
        f"{where}: selected button {b['text']!r} {b['ink']} on {b['bg']}: {b['ratio']:.2f}:1"
        for b in result["low_buttons"]
    ]
    return out


@pytest.mark.parametrize("spec", PAGES, ids=[p.name for p in PAGES])
def test_accessible_and_self_contained(page_pass, artifacts_dir, spec):
    problems: list[str] = []
    foreign: set[str] = set()
    log = []
    for screen in AUDITED:
        found = page_pass(spec.url_path, screen)
        found.stage("accessibility")
        foreign.update(found.foreign)
        for result in found.audits:
            problems += _problems(result)
            log.append({k: v for k, v in result.items() if k != "axe_details"})
        if spec.story and spec.url_path:  # a story page draws charts; the glossary is text
            assert sum(r["charts"] for r in log[-2:]) > 0, f"{spec.name}: no chart was measured"
            assert all(r["chart_texts"] for r in log[-2:] if r["charts"]), "no chart text read"
    with open(artifacts_dir / "accessibility.jsonl", "a") as out:
        for row in log:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    problems += [f"{spec.name}: request to another host: {url}" for url in sorted(foreign)]
    assert not problems, "\n".join(problems)


#: The question a room asks on the variance page (tests/e2e/test_rooms.py walks a room).
ROOM_QUESTION = "variance_std"
#: The presenter's counts refresh every 2 s.
ROOM_TIMEOUT_MS = 15_000


def test_a_room_is_accessible(make_app):
    """A room: the presenter's page (room panel, the room's answers chart) at 1400 px and
    a learner's page after the reveal (its card with the room's chart) on a 390-px phone, each light and dark, by the same measures as the pages."""
    presenter = make_app(color_scheme="light", **DESKTOP)
    presenter.open("variance", "present=1")
    presenter.interact(presenter.button("room_open").click, expect_chart_change=False)
    sidebar = presenter.page.locator("[data-testid='stSidebar']")
    link = sidebar.locator("[data-testid='stCode']").filter(has_text="room=").first.inner_text()
    learner = make_app(color_scheme="light", **PHONE)
    learner.open("variance", urlsplit(link.strip()).query)
    guess = learner.widget(f"{ROOM_QUESTION}_guess")
    guess.wait_for(state="visible")
    learner.interact(
        lambda: guess.locator("label").filter(has_text="8").first.click(),
        expect_chart_change=False,
    )
    learner.interact(learner.button(f"{ROOM_QUESTION}_reveal").click, expect_chart_change=False)
    main = presenter.page.locator("[data-testid='stMain']")
    main.get_by_text("1 answered", exact=True).wait_for(timeout=ROOM_TIMEOUT_MS)
    presenter.button(f"{ROOM_QUESTION}_room_reveal").click()
    main.get_by_text("Revealed to the room.").wait_for(timeout=ROOM_TIMEOUT_MS)
    # the learner's next interaction (opening a chart's code panel) shows the room's answers
    code = learner.page.locator("[class*='st-key-'][class*='_code'] summary").first
    learner.interact(code.click, expect_chart_change=False)
    learner.page.locator("[data-testid='stMain'] p").filter(has_text="1 answered").first.wait_for(
        timeout=ROOM_TIMEOUT_MS
    )
    problems: list[str] = []
    for name, driver, width in (
        ("room presenter", presenter, 1400),
        ("room learner", learner, 390),
    ):
        driver.wait_charts_rendered()
        for theme in THEMES:
            switch_theme(driver, theme)
            stretch(driver, width)
            result = audit(driver, name, theme, width)
            assert result["charts"], f"{name}: no chart drawn"
            problems += _problems(result)
    assert not problems, "\n".join(problems)
