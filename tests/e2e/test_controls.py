"""Controls in a real browser: d_k's − / + step through powers of two and the URL follows;
a translated option keeps its identifier in the URL, so a link works in both languages
(see conftest.py for the harness)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e


def _checked(app, key: str):
    return app.widget(key).locator("[data-testid='stRadioOption']:has(input:checked)")


def _open_sampling(app) -> None:
    sampling = app.page.locator("[data-testid='stExpander']").filter(has=app.widget("dist"))
    if not sampling.locator("details").evaluate("d => d.open"):
        sampling.locator("summary").click()
    expect(app.widget("dist")).to_be_visible()


def test_d_k_plus_and_minus_step_through_powers_of_two(app):
    app.open("saturation", "deeper=true")  # Go deeper open: charts that follow d_k
    box = app.widget("d_k").locator("input")
    expect(box).to_have_value("64")
    app.interact(app.widget("d_k").locator("[data-testid='stNumberInputStepUp']").click)
    expect(box).to_have_value("128", timeout=10_000)
    app.page.wait_for_function("() => location.search.includes('d_k=128')", timeout=10_000)

    def type_100():
        box.fill("100")
        box.press("Enter")

    app.interact(type_100)  # a typed value is kept, and linked
    app.page.wait_for_function("() => location.search.includes('d_k=100')", timeout=10_000)
    app.interact(app.widget("d_k").locator("[data-testid='stNumberInputStepDown']").click)
    expect(box).to_have_value("64", timeout=10_000)
    app.assert_healthy()


def test_a_translated_option_keeps_its_identifier_in_the_url(app):
    app.open("variance", "lang=zh&dist=uniform")  # a link made on an English page
    _open_sampling(app)  # the choice sits in the sampling settings, a closed expander
    expect(_checked(app, "dist")).to_contain_text("均匀")
    option = app.widget("dist").locator("[data-testid='stRadioOption']")
    # the short path's charts wait for its card: no chart to change, the link tells
    app.interact(option.filter(has_text="Rademacher").click, expect_chart_change=False)
    app.page.wait_for_function("() => location.search.includes('dist=rademacher')")
    # switch the page to English: the choice stays, and so does the link
    app.interact(
        lambda: app.widget("lang").get_by_text("English", exact=True).click(),
        expect_chart_change=False,
    )
    _open_sampling(app)  # its label changed with the language: drawn closed again
    expect(_checked(app, "dist")).to_contain_text("Rademacher")
    option = app.widget("dist").locator("[data-testid='stRadioOption']")
    expect(option.first).to_contain_text("normal")
    assert "dist=rademacher" in app.page.evaluate("() => location.search")
    app.interact(option.first.click, expect_chart_change=False)  # the default leaves the URL
    app.page.wait_for_function("() => !location.search.includes('dist=')")
    app.assert_healthy()
