"""Moving between pages in one browser session (see conftest.py for the harness)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e


def _go(app, url_path: str) -> None:
    """Follow the sidebar link to ``url_path`` and wait for the new page's first run."""
    link = app.page.locator(f"[data-testid='stSidebarNav'] a[href$='/{url_path}']")
    app.interact(link.first.click, expect_chart_change=False)
    app.page.wait_for_function(f"() => location.pathname.endsWith('/{url_path}')")
    app.wait_idle()


def test_a_control_of_one_page_does_not_follow_to_the_next(app):
    # which-d's divisor choice (d_k / d_model / none) and saturation's divisor slider
    # are different controls; neither may reach the other page
    app.open("which-d")
    app.reveal_predictions("which_d_std")
    option = app.widget("head_divisor").locator("[data-testid='stRadioOption']")
    app.interact(option.filter(has_text="√d_model").click)  # the URL keeps the identifier
    app.page.wait_for_function("() => location.search.includes('head_divisor=d_model')")
    _go(app, "saturation")
    assert "head_divisor" not in app.page.evaluate("() => location.search")
    expect(app.widget("saturation_mean_max_guess")).to_be_visible()  # its short path's card
    app.assert_healthy()
    app.interact(app.button("d_k_double").click, expect_chart_change=False)  # still working
    app.page.wait_for_function("() => location.search.includes('d_k=128')")
    _go(app, "variance")  # d_k is the same control here and follows
    expect(app.widget("d_k").locator("input")).to_have_value("128")
    app.assert_healthy()


def test_presenter_step_restarts_on_another_page(app):
    app.open("sqrt-vs-d", "present=1&step=6")
    expect(app.widget("step").locator("input")).to_have_value(re.compile(r"^Step 6 of 6 "))
    _go(app, "which-d")
    expect(app.widget("step").locator("input")).to_have_value(re.compile(r"^Step 1 of 5 "))
    search = app.page.evaluate("() => location.search")
    assert "step=" not in search and "present=1" in search, search
    app.assert_healthy()


def test_a_key_with_another_default_starts_from_the_new_pages_default(app):
    # α is ½ on gradients and 0.75 on sqrt-vs-d ("your α" beside the presets): after an
    # interaction on gradients, sqrt-vs-d must still open at its own default
    app.open("gradients")
    app.reveal_predictions("gradients_dead_share")
    _go(app, "sqrt-vs-d")
    expect(app.widget("alpha").locator("input[type='range']")).to_have_value("0.75")
    _go(app, "gradients")
    expect(app.widget("alpha").locator("input[type='range']")).to_have_value("0.5")
    app.assert_healthy()


def test_back_and_forward_after_a_corrected_link_show_the_corrected_values(app):
    # the training lab trains at powers of two: ?d_k=100 opens at 128 and the link says
    # 128; Back and Forward through every entry of the history never show 100
    app.open("training", "d_k=100&d_k_typo=1")
    expect(app.widget("d_k").locator("input")).to_have_value("128")
    app.page.wait_for_function("() => location.search.includes('d_k=128')")
    warning = app.page.locator("[data-testid='stAlert']").first
    expect(warning).to_contain_text("dₖ = 100 became 128")
    expect(warning).to_contain_text("d_k_typo")
    _go(app, "variance")
    seen = []
    for move in [app.page.go_back] * 3 + [app.page.go_forward] * 2:
        move()
        app.wait_idle()
        if app.page.evaluate("() => location.pathname.endsWith('/training')"):
            value = app.widget("d_k").locator("input")
            expect(value).to_be_visible(timeout=30_000)  # an entry may reload the page
            app.wait_idle()
            expect(value).not_to_have_value("100")
            seen.append(value.input_value())
            app.page.wait_for_function("() => !location.search.includes('d_k=100')")
    assert "128" in seen, seen  # the corrected entry was visited
    app.assert_healthy()


def test_a_share_link_carries_every_value_and_reproduces_the_view(app, make_app):
    """The address bar drops a value equal to its default, so a link copied from it shows
    the defaults of the day it is opened; "Share this view" writes every control of the
    page, defaults too, so its link keeps showing the view it was made from."""
    app.open("saturation", "d_k=256&deeper=true")
    app.reveal_predictions("saturation_mean_max")
    assert "n_keys" not in app.page.evaluate("() => location.search")  # a default: dropped
    panel = app.widget("share_open")
    app.interact(lambda: panel.locator("summary").click(), expect_chart_change=False)
    link = panel.locator("code").inner_text().strip()
    query = link.split("?", 1)[1]
    for key in ("d_k=256", "n_keys=10", "alpha=0.5", "score_1=10", "deeper=true"):
        assert key in query.split("&"), f"{key} missing from the share link {link}"
    shown = app.chart_signatures()
    other = make_app()
    other.open("saturation", query)
    other.reveal_predictions("saturation_mean_max")
    # the same charts, each drawn (on a loaded machine the last can land after the run)
    other.assert_charts_drawn(len(shown), min_px=50, timeout_ms=15_000)
    assert other.chart_signatures() == shown, "the share link opened another view"
    app.assert_healthy()


def test_back_and_forward_bring_a_choice_the_app_writes_back(app):
    """The divisor's radio is written to the URL by the app (its labels carry numbers): Back
    shows the older entry's choice, Forward the newer one, and neither entry is rewritten."""
    app.open("which-d", "reveal=1")
    option = app.widget("head_divisor").locator("[data-testid='stRadioOption']")
    radios = app.widget("head_divisor").locator("input[type='radio']")
    app.interact(option.filter(has_text="no division").click)
    app.page.wait_for_function("() => location.search.includes('head_divisor=none')")
    app.interact(option.filter(has_text="√d_model").click)
    app.page.wait_for_function("() => location.search.includes('head_divisor=d_model')")
    app.page.go_back()
    app.wait_idle()
    expect(radios.nth(2)).to_be_checked()  # no division
    assert "head_divisor=none" in app.page.evaluate("() => location.search")
    app.page.go_forward()
    app.wait_idle()
    expect(radios.nth(1)).to_be_checked()  # √d_model
    assert "head_divisor=d_model" in app.page.evaluate("() => location.search")
    app.assert_healthy()
