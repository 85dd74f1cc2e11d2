"""The "Which d?" page in a real browser (see conftest.py for the harness)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e

N_CHARTS = 5


def test_which_d_page_renders_every_chart(app):
    app.open("which-d", "d_model=2048&n_heads=32&w_init=one")
    charts = app.page.locator("[data-testid='stVegaLiteChart']")
    assert charts.count() == N_CHARTS, f"expected {N_CHARTS} charts, found {charts.count()}"
    for i in range(N_CHARTS):
        box = charts.nth(i).bounding_box()
        assert box and box["width"] > 50 and box["height"] > 50, f"chart {i} is tiny: {box}"
    assert app.widget("d_model").locator("input").input_value() == "2048"
    assert app.widget("n_heads").locator("input").input_value() == "32"
    # a control change redraws the charts and reaches the URL; 32 still divides 1024
    before, after = app.interact(app.button("d_model_half").click)
    assert before != after, "no chart changed after ÷2"
    app.page.wait_for_function("() => location.search.includes('d_model=1024')", timeout=10_000)
    assert app.widget("n_heads").locator("input").input_value() == "32"
    app.assert_healthy()
    app.screenshot("which_d")
