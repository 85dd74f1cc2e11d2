"""The "In real models" page in a real browser (see conftest.py for the harness)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from ui.real_models.field_guide import ROWS

pytestmark = pytest.mark.e2e

N_CHARTS = 6
HEAD = 3  # the one-head attention map, fourth chart on the page
CHARTS = "[data-testid='stVegaLiteChart']"


def test_real_models_page_renders_and_the_map_follows_the_divisor(app):
    app.open("real-models", "sentence=2&layer=1&head=8")
    charts = app.page.locator(CHARTS)
    expect(charts).to_have_count(N_CHARTS - 3)  # section 1 waits for the prediction
    app.reveal_predictions("real_models_std")
    app.assert_charts_drawn(N_CHARTS, min_px=50, timeout_ms=5_000)
    # the URL chose the sentence by its index
    expect(app.widget("sentence").get_by_role("combobox")).to_have_accessible_name("Sentence")
    assert "2 · She gave him the book" in app.widget("sentence").aria_snapshot()
    assert app.widget("layer").locator("input").input_value() == "1"
    assert app.widget("head").locator("input").input_value() == "8"
    # no division: the same q·k, saturated — the attention map changes, the URL follows
    radio = app.widget("divide_by").locator("[data-testid='stRadioOption']").first  # none (÷1)
    before, after = app.interact(radio.click)
    assert before[HEAD] != after[HEAD], "the attention map did not change with the divisor"
    assert before[:HEAD] == after[:HEAD], "the at-a-glance charts depend on no control"
    app.page.wait_for_function("() => location.search.includes('divide_by=none')", timeout=10_000)
    app.page.wait_for_function("() => location.search.includes('sentence=2')", timeout=10_000)
    # the field guide's links are there
    expect(app.page.locator("[data-testid='stDataFrame']")).to_have_count(1)
    guide = app.page.locator("[data-testid='stTable']")
    expect(guide).to_have_count(1)
    expect(guide.get_by_role("link")).to_have_count(len(ROWS))
    app.assert_healthy()
    app.screenshot("real_models")
