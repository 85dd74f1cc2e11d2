"""Saturation page in a real browser (see conftest.py for the harness)."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.e2e

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
N_CHARTS = 9


def _assert_charts_drawn(app) -> None:
    charts = app.page.locator("[data-testid='stVegaLiteChart']")
    assert charts.count() == N_CHARTS, f"expected {N_CHARTS} charts, found {charts.count()}"
    for i in range(charts.count()):
        charts.nth(i).scroll_into_view_if_needed()
        box = charts.nth(i).bounding_box()
        assert box and box["width"] > 100 and box["height"] > 100, f"chart {i} is tiny: {box}"


def test_saturation_page_renders_every_chart(app):
    app.open("saturation")
    _assert_charts_drawn(app)
    assert app.widget("d_k").locator("input").input_value() == "64"
    app.assert_healthy()
    app.screenshot("saturation")


def test_saturation_d_k_change_redraws_and_updates_url(app):
    app.open("saturation")
    before, after = app.interact(app.button("d_k_double").click)
    assert before != after, "no chart changed after ×2"
    app.page.wait_for_function("() => location.search.includes('d_k=128')", timeout=10_000)
    app.assert_healthy()


def test_saturation_deep_link_in_chinese(app):
    app.open("saturation", "lang=zh&alpha=0.75&classic_seq=16")
    _assert_charts_drawn(app)
    main = app.page.locator("[data-testid='stMain']").inner_text()
    assert CJK.search(main), "no Chinese text on /saturation?lang=zh"
    assert "α = 0.75" in main or "0.75" in main
    app.assert_healthy()
