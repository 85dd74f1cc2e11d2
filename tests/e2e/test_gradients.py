"""Gradients page in a real browser (see conftest.py for the harness)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
N_CHARTS = 8


def _assert_every_chart_drawn(app) -> None:
    charts = app.page.locator("[data-testid='stVegaLiteChart']")
    expect(charts).to_have_count(N_CHARTS, timeout=15_000)  # charts may land after idle
    for i in range(charts.count()):
        box = charts.nth(i).bounding_box()
        assert box and box["width"] > 50 and box["height"] > 50, f"chart {i} is tiny: {box}"


def test_gradients_page_renders_every_chart(app):
    app.open("gradients", "d_k=1024")
    _assert_every_chart_drawn(app)
    assert app.widget("d_k").locator("input").input_value() == "1024"
    table = app.page.locator("[data-testid='stTable']").inner_text()
    shares = [float(x) for x in re.findall(r"(\d+\.\d) %", table)]
    assert len(shares) == 2 and shares[0] > 50 and shares[1] == 0.0, table  # dead rows
    app.assert_healthy()
    app.screenshot("gradients")


def test_gradients_d_k_change_redraws_and_updates_url(app):
    app.open("gradients")
    before, after = app.interact(app.button("d_k_double").click)
    assert before != after, "no chart changed after ×2"
    app.page.wait_for_function("() => location.search.includes('d_k=128')", timeout=10_000)
    app.assert_healthy()


def test_gradients_chinese_and_deep_link(app):
    app.open("gradients", "lang=zh&gap=12&gap2=4&n_keys=64")
    _assert_every_chart_drawn(app)
    main = app.page.locator("[data-testid='stMain']").inner_text()
    assert CJK.search(main), "no Chinese text on /gradients?lang=zh"
    assert app.widget("n_keys").locator("input").input_value() == "64"
    assert "12" in app.widget("gap").inner_text()
    app.assert_healthy()
