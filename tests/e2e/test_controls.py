"""Controls in a real browser: d_k's − / + step through powers of two and the URL follows;
a translated option keeps its identifier in the URL, so a link works in both languages
(see conftest.py for the harness)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e


def _checked(app, key: str):
    return app.widget(key).locator("[data-testid='stRadioOption']:has(input:checked)")


def test_d_k_plus_and_minus_step_through_powers_of_two(app):
    app.open("saturation")
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
    expect(_checked(app, "dist")).to_contain_text("均匀")
    option = app.widget("dist").locator("[data-testid='stRadioOption']")
    app.interact(option.filter(has_text="Rademacher").click)
    app.page.wait_for_function("() => location.search.includes('dist=rademacher')")
    # switch the page to English: the choice stays, and so does the link
    app.interact(
        lambda: app.widget("lang").get_by_text("en", exact=True).click(),
        expect_chart_change=False,
    )
    expect(_checked(app, "dist")).to_contain_text("Rademacher")
    option = app.widget("dist").locator("[data-testid='stRadioOption']")
    expect(option.first).to_contain_text("normal")
    assert "dist=rademacher" in app.page.evaluate("() => location.search")
    app.interact(option.first.click)  # the default leaves the URL
    app.page.wait_for_function("() => !location.search.includes('dist=')")
    app.assert_healthy()
