"""The √d_k-vs-d_k page in a real browser (see conftest.py for the harness)."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.e2e

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
CHARTS = "[data-testid='stVegaLiteChart']"


def _assert_charts_drawn(app, expected: int) -> None:
    charts = app.page.locator(CHARTS)
    assert charts.count() == expected, f"expected {expected} charts, found {charts.count()}"
    for i in range(expected):
        box = charts.nth(i).bounding_box()
        assert box and box["width"] > 200 and box["height"] > 200, f"chart {i} is tiny: {box}"


def test_sqrt_vs_d_renders_every_chart_and_rho_preset_adds_one(app):
    app.open("sqrt-vs-d")
    _assert_charts_drawn(app, 7)  # ρ = 0: the relevant key's mean logit is an info box
    app.assert_healthy()
    before, after = app.interact(app.button("rho_aligned_preset").click)
    assert before != after
    app.page.wait_for_function("() => location.search.includes('rho=0.5')", timeout=10_000)
    _assert_charts_drawn(app, 8)
    app.assert_healthy()
    app.screenshot("sqrt_vs_d")


def test_sqrt_vs_d_in_chinese_from_a_deep_link(app):
    app.open("sqrt-vs-d", "lang=zh&rho=0.5&alpha=1.25&d_min=16")
    main = app.page.locator("[data-testid='stMain']").inner_text()
    assert CJK.search(main), "no Chinese text on /sqrt-vs-d?lang=zh"
    _assert_charts_drawn(app, 8)
    assert app.widget("alpha").inner_text().count("1.25") >= 1
    app.assert_healthy()
