"""The page under its title reruns on its own (``fragments.page_body``), in a real
browser: what such a rerun reads from the link and what it leaves on the page (see
conftest.py for the harness).

In the page's own rerun the app's complete run, which checks the link, has not run:
controls that keep the URL themselves read it as it is now, and a notice the complete
run drew at the top of the page goes at the first change."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

GO_DEEPER = ".st-key-deeper summary, .st-key-deeper [role='button']"


def _double_d(app, key: str) -> None:
    app.interact(app.button(f"{key}_double").click, expect_chart_change=False)


def test_opening_go_deeper_keeps_the_links_values_of_its_controls(app):
    """gradients' gap explorer (its inputs written by the app, not bound) sits under "Go
    deeper": opened later, it starts from the link's values, and the link keeps them."""
    app.open("gradients", "gap=12&gap2=4&reveal=1")
    app.interact(app.page.locator(GO_DEEPER).first.click)
    app.page.wait_for_function("() => location.search.includes('deeper=true')")
    search = app.page.evaluate("() => location.search")
    assert "gap=12" in search and "gap2=4" in search, search
    expect(app.widget("gap2").locator("[data-testid='stSliderThumbValue']")).to_contain_text("4")
    app.assert_healthy()


def test_which_d_keeps_the_links_initialisation_when_d_model_moves(app):
    """With ``w_init=one`` (every weight 1: logit std ~513 at d_model 512, 8 heads), a new
    d_model reruns the page alone and keeps that initialisation: ~1,020 at 1,024, not the
    fan-in ~1."""
    app.open("which-d", "w_init=one&reveal=1")
    metric = app.page.locator("[data-testid='stMetricValue']").first
    assert float(metric.inner_text().replace(",", "")) == pytest.approx(513, rel=0.05)
    _double_d(app, "d_model")
    expect(app.widget("d_model").locator("input")).to_have_value("1024")
    expect(metric).not_to_have_text("513")
    assert float(metric.inner_text().replace(",", "")) == pytest.approx(1020, rel=0.05)
    assert "w_init=one" in app.page.evaluate("() => location.search")
    app.assert_healthy()


def test_a_notice_about_the_link_goes_at_the_first_change(app):
    app.open("training", "d_k=100&m=7")
    warning = app.page.locator("[data-testid='stAlert']").filter(has_text="became 128")
    expect(warning).to_have_count(1)
    _double_d(app, "d_k")
    expect(app.widget("d_k").locator("input")).to_have_value("256")
    expect(warning).to_have_count(0)
    app.assert_healthy()


def test_which_d_link_keeps_n_heads_when_d_model_moves_its_default(app):
    """n_heads' default follows d_model (4 heads at 256, 8 at 512): after ÷2 the page
    keeps 8 heads, so the link must say so, and reloading it shows the same 8 heads."""
    app.open("which-d", "reveal=1")
    _double_d(app, "d_model")  # 1024: 8 heads, its default 16
    app.page.wait_for_function("() => location.search.includes('n_heads=8')", timeout=10_000)
    search = app.page.evaluate("() => location.search")
    app.open("which-d", search.lstrip("?"))
    expect(app.widget("d_model").locator("input")).to_have_value("1024")
    assert app.widget("n_heads").locator("input").input_value() == "8"
    app.assert_healthy()


def test_a_notice_about_the_link_goes_at_the_first_answer_picked(app):
    """Picking an answer reruns the question's card alone: the first pick after a notice
    about the link reruns the app, which clears the notice, and the pick is kept."""
    app.open("variance", "d_k_typo=1")
    warning = app.page.locator("[data-testid='stAlert']").filter(has_text="d_k_typo")
    expect(warning).to_have_count(1)
    option = app.page.locator("[class*='_guess'] [data-testid='stRadioOption']")
    app.interact(option.first.click, expect_chart_change=False)
    expect(warning).to_have_count(0)
    checked = app.page.locator("[class*='_guess'] input[type='radio']").first
    expect(checked).to_be_checked()
    app.assert_healthy()
