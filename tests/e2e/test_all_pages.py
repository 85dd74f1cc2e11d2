"""Every page in a real browser: loads clean, draws every chart, responds to its main
control, switches language, reproduces a deep link, and presents step by step.

Pages come from ui.common.pages.PAGES, so a new page is covered once it is registered; its main
control is the registry's ``PageSpec.main``, read from the page's table.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from ui.common.pages import PAGES

pytestmark = pytest.mark.e2e

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def main_control(spec) -> tuple[str, str, str]:
    """(widget key, "number" | "slider", a value for the deep-link test) of the page's
    main control (``PageSpec.main`` and its table): four times the default if the range
    allows, else a quarter of the way up the range."""
    p = spec.param(spec.main)
    kind = "slider" if p.kind == "float" else "number"
    value = p.default * 4 if p.default * 4 <= p.hi else p.lo + (p.hi - p.lo) // 4
    return p.key, kind, f"{value:g}"


STORY_PAGES = [p for p in PAGES if p.url_path and p.story]
#: Story pages with a main control (the recap has none: it shows the other pages' answers).
CONTROLLED = [p for p in STORY_PAGES if p.main]


def _charts_drawn(app) -> int:
    charts = app.page.locator("[data-testid='stVegaLiteChart']")
    try:
        charts.first.wait_for(state="attached", timeout=15_000)
    except PlaywrightTimeoutError:
        text = app.page.locator("[data-testid='stMain']").inner_text()
        raise AssertionError(f"no chart drawn in 15 s; the page reads: {text[:800]!r}") from None
    app.wait_charts_rendered()
    for i in range(charts.count()):
        chart = charts.nth(i)
        chart.scroll_into_view_if_needed()
        box = chart.bounding_box()
        assert box and box["width"] > 50 and box["height"] > 50, f"chart {i} is tiny: {box}"
        assert chart.locator("canvas, svg").count(), f"chart {i} has no canvas or svg"
    return charts.count()


def _move(app, key: str, kind: str) -> None:
    widget = app.widget(key)
    if kind == "number":
        box = widget.locator("input")
        value = int(box.input_value())
        box.fill(str(value * 2 if value * 2 <= 4096 else value // 2))
        box.press("Enter")
    else:
        thumb = widget.locator("input[type='range']").first
        thumb.focus()
        for _ in range(3):
            thumb.press("ArrowRight")


@pytest.mark.parametrize("spec", STORY_PAGES, ids=[p.name for p in STORY_PAGES])
def test_page_loads_and_draws_every_chart(app, spec):
    # the link answers the questions (a card drawn after the DOM settles is not missed)
    app.open(spec.url_path, "reveal=1")
    assert _charts_drawn(app) >= 1
    app.assert_healthy()
    app.screenshot(f"page-{spec.name}-en")


@pytest.mark.parametrize("spec", CONTROLLED, ids=[p.name for p in CONTROLLED])
def test_main_control_changes_a_chart(app, spec):
    key, kind, _ = main_control(spec)
    app.open(spec.url_path, "deeper=true&reveal=1")  # a main control may sit under Go deeper
    before, after = app.interact(lambda: _move(app, key, kind))
    assert before != after, f"moving {key} changed no chart on {spec.name}"
    app.page.wait_for_function(f"() => location.search.includes('{key}=')", timeout=10_000)
    app.assert_healthy()


@pytest.mark.parametrize("spec", CONTROLLED, ids=[p.name for p in CONTROLLED])
def test_language_switch_and_deep_link(app, spec):
    key, kind, value = main_control(spec)
    app.open(spec.url_path, f"{key}={value}&seed=7&deeper=true&reveal=1")
    if kind == "number":
        # the value may land a moment after the DOM settles: poll for it
        expect(app.widget(key).locator("input")).to_have_value(value, timeout=10_000)
    else:
        slider = app.widget(key).locator("input[type='range']").first
        expect(slider).to_have_value(re.compile(rf"^{float(value):g}(\.0+)?$"), timeout=10_000)
    title_en = app.page.locator("h1").first.inner_text()
    assert not CJK.search(title_en)
    app.interact(
        lambda: app.widget("lang").get_by_text("中文", exact=True).click(),
        expect_chart_change=False,
    )
    app.page.wait_for_function(
        "() => /[\\u4e00-\\u9fff]/.test(document.querySelector('h1').innerText)"
    )
    assert _charts_drawn(app) >= 1
    # the controls survive the language switch
    if kind == "number":
        expect(app.widget(key).locator("input")).to_have_value(value, timeout=10_000)
    app.assert_healthy()
    app.screenshot(f"page-{spec.name}-zh")


@pytest.mark.parametrize("spec", STORY_PAGES[:1], ids=[p.name for p in STORY_PAGES[:1]])
def test_presenter_mode_steps(app, spec):
    app.open(spec.url_path, "present=1")
    expect(app.page.locator("[data-testid='stSidebar'] .st-key-d_k input")).to_have_count(1)
    expect(app.page.locator("[data-testid='stVegaLiteChart']")).to_have_count(0)
    app.interact(app.button("step_next").click, expect_chart_change=False)
    app.page.wait_for_function("() => location.search.includes('step=2')", timeout=10_000)
    app.interact(app.button("step_next").click, expect_chart_change=False)
    assert _charts_drawn(app) >= 1
    app.assert_healthy()
    app.screenshot(f"presenter-{spec.name}")
