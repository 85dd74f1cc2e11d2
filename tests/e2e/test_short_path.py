"""The story's short path fits a phone: ≤ 25 screens in all.

Each page of the story (home with its worked example, every story page, the recap) is
opened as a learner first meets it: English, on a 390 × 844 phone (the sidebar closed),
default settings, every prediction card unanswered and "Go deeper" closed. Its height is
the scroll height of the main area once every chart is drawn; the sum, in screens of
844 px, is the short path's length. ``python -m pytest tests/e2e/test_short_path.py -s``
prints it page by page.
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import AppDriver
from tests.e2e.screens import SCREENS
from ui.common.pages import PAGES, STORY

#: The short path's budget, in phone screens.
BUDGET_SCREENS = 25
PHONE = SCREENS["phone"]
#: The story in order: home, then the story pages.
STORY_PATHS = ("", *(p.url_path for p in PAGES if p.name in STORY))
HEIGHT_JS = "() => document.querySelector(\"[data-testid='stMain']\").scrollHeight"


@pytest.fixture(scope="module")
def heights(browser, app_server: str, artifacts_dir) -> dict[str, int]:
    context = browser.new_context(**PHONE)
    try:
        app = AppDriver(context.new_page(), app_server, artifacts_dir)
        measured = {}
        for path in STORY_PATHS:
            app.open(path)
            app.assert_healthy()
            measured[path or "home"] = int(app.page.evaluate(HEIGHT_JS))
        return measured
    finally:
        context.close()


def test_the_short_path_fits_in_25_phone_screens(heights):
    screens = {page: h / PHONE["viewport"]["height"] for page, h in heights.items()}
    report = ", ".join(f"{page} {n:.1f}" for page, n in screens.items())
    print(f"\nshort path, phone screens: {report}; total {sum(screens.values()):.1f}")
    assert sum(screens.values()) <= BUDGET_SCREENS, report


def test_every_page_of_the_story_is_measured(heights):
    assert set(heights) == {"home", *(p.url_path for p in PAGES if p.name in STORY)}
