"""Home and variance pages in a real browser (see conftest.py for the harness)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from ui.common.pages import STORY
from ui.common.pages import page as page_spec

pytestmark = pytest.mark.e2e

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def _d_k_input(app):
    return app.widget("d_k").locator("input")


def test_home_page_loads(app):
    app.open()
    page = app.page
    title = page.locator("h1")
    assert title.count() >= 1, "home page has no title (h1)"
    assert title.first.inner_text().strip(), "home page title is empty"
    main = page.locator("[data-testid='stMain']")
    links = main.locator("[data-testid='stPageLink'] a, [data-testid='stPageLink-NavLink']")
    links.first.wait_for(state="visible", timeout=15_000)  # page links render after the script ends
    # on a busy machine the links arrive one by one after the run ends: wait for all of them
    expected = [page_spec(name).url_path for name in STORY]

    def tails() -> list[str]:
        hrefs = [links.nth(i).get_attribute("href") or "" for i in range(links.count())]
        return [h.split("?")[0].rsplit("/", 1)[-1] for h in hrefs]

    seen = tails()
    for _ in range(150):  # up to 15 s
        if seen == expected:
            break
        page.wait_for_timeout(100)
        seen = tails()
    assert seen == expected, f"main-area page links {seen}, expected one per story step {expected}"
    nav = page.locator("[data-testid='stSidebarNav'] a")
    nav_hrefs = [nav.nth(i).get_attribute("href") or "" for i in range(nav.count())]
    assert any("variance" in h for h in nav_hrefs), f"sidebar nav lacks variance: {nav_hrefs}"
    app.assert_healthy()


def test_variance_page_renders_every_chart(app):
    app.open("variance", "deeper=true")  # the histograms wait for the question
    charts = app.page.locator("[data-testid='stVegaLiteChart']")
    charts.first.wait_for(state="attached", timeout=15_000)
    app.wait_charts_rendered()
    assert charts.count() >= 1, "variance page shows no Vega chart"
    for i in range(charts.count()):
        box = charts.nth(i).bounding_box()
        assert box and box["width"] > 50 and box["height"] > 50, f"chart {i} is tiny: {box}"
    expect(_d_k_input(app)).to_have_value("64", timeout=10_000)
    app.assert_healthy()
    app.screenshot("variance")


def test_double_button_changes_chart_and_url(app):
    app.open("variance", "deeper=true")
    button = app.button("d_k_double")
    before, after = app.interact(button.click)
    assert before != after, "no chart changed after ×2"
    app.page.wait_for_function("() => location.search.includes('d_k=128')", timeout=10_000)
    expect(_d_k_input(app)).to_have_value("128", timeout=10_000)
    app.assert_healthy()


def test_typing_d_k_changes_chart_and_url(app):
    app.open("variance", "deeper=true")
    box = _d_k_input(app)

    def type_value():
        box.fill("32")
        box.press("Enter")

    before, after = app.interact(type_value)
    assert before != after, "no chart changed after typing d_k=32"
    app.page.wait_for_function("() => location.search.includes('d_k=32')", timeout=10_000)
    app.assert_healthy()


def test_deep_link_sets_controls(app):
    app.open("variance", "d_k=256&dist=rademacher")
    expect(_d_k_input(app)).to_have_value("256", timeout=10_000)
    app.page.get_by_text("Sampling: samples, distribution").click()  # where the law is chosen
    selected = app.widget("dist").locator("[data-testid='stRadioOption']:has(input:checked)")
    assert selected.count() == 1, "no distribution selected"
    label = selected.inner_text()
    assert "rademacher" in label.lower(), f"selected distribution label: {label!r}"
    app.assert_healthy()


def test_malformed_query_param_warns(app):
    app.open("variance", "d_k=abc")
    alerts = app.page.locator("[data-testid='stAlertContainer'], [data-testid='stAlert']")
    # the warning comes with the run that resets the control: wait for it, not for a count
    expect(alerts.filter(has_text="d_k").first).to_be_visible(timeout=15_000)
    expect(_d_k_input(app)).to_have_value("64", timeout=10_000)
    app.assert_healthy()


@pytest.mark.parametrize("path", ["", "variance"])
def test_chinese_language(app, path):
    app.open(path, "lang=zh")
    main = app.page.locator("[data-testid='stMain']").inner_text()
    assert CJK.search(main), f"no Chinese text in the main area of /{path}?lang=zh"
    app.assert_healthy()


def test_short_path_opens_go_deeper_and_keeps_it_in_the_url(app):
    """Closed, "Go deeper" sends no chart; opened, its sections arrive and the URL says
    so (a shared link opens it again)."""
    app.open("variance")
    charts = app.page.locator("[data-testid='stVegaLiteChart']")
    assert charts.count() == 0, "the short path draws no chart before the question"
    panel = app.page.locator(".st-key-deeper summary, .st-key-deeper [role='button']").first
    app.interact(panel.click)
    app.page.wait_for_function("() => location.search.includes('deeper=true')", timeout=10_000)
    expect(charts).to_have_count(3, timeout=15_000)  # the sweep, the walks, the terms
    app.assert_healthy()


def test_show_me_where_it_breaks_sets_the_link(app):
    app.open("variance", "deeper=true")
    app.interact(app.button("break_it").click)
    app.page.wait_for_function("() => location.search.includes('d_k=4096')", timeout=10_000)
    expect(_d_k_input(app)).to_have_value("4096", timeout=10_000)
    app.assert_healthy()


def test_the_worked_example_steps_through_the_formula(app):
    app.open()
    charts = app.page.locator("[data-testid='stVegaLiteChart']")
    expect(charts).to_have_count(2)  # its scores, unscaled beside ÷√d_k
    step = app.widget("example_step")
    app.interact(lambda: step.get_by_text("softmax").click())
    app.page.wait_for_function(
        "() => location.search.includes('example_step=weights')", timeout=10_000
    )
    expect(charts).to_have_count(2)
    app.interact(lambda: step.get_by_text("Q, K, V").click(), expect_chart_change=False)
    expect(charts).to_have_count(0)
    expect(app.page.locator("[data-testid='stDataFrame']")).to_have_count(3)
    app.assert_healthy()
