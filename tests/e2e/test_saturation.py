"""Saturation page in a real browser (see conftest.py for the harness)."""

from __future__ import annotations

import csv
import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
N_CHARTS = 10
CHARTS = "[data-testid='stVegaLiteChart']"


def _assert_charts_drawn(app) -> None:
    # wait for the first question: on a loaded machine the DOM can settle before it is drawn
    app.reveal_predictions("saturation_mean_max")
    app.assert_charts_drawn(N_CHARTS, min_px=100, timeout_ms=15_000)


def test_saturation_page_renders_every_chart(app):
    app.open("saturation", "deeper=true")
    _assert_charts_drawn(app)
    assert app.widget("d_k").locator("input").input_value() == "64"
    app.assert_healthy()
    app.screenshot("saturation")


def test_saturation_d_k_change_redraws_and_updates_url(app):
    app.open("saturation", "deeper=true")
    before, after = app.interact(app.button("d_k_double").click)
    assert before != after, "no chart changed after ×2"
    app.page.wait_for_function("() => location.search.includes('d_k=128')", timeout=10_000)
    app.assert_healthy()


def test_saturation_deep_link_in_chinese(app):
    app.open("saturation", "lang=zh&alpha=0.75&classic_seq=16&deeper=true")
    _assert_charts_drawn(app)
    main = app.page.locator("[data-testid='stMain']").inner_text()
    assert CJK.search(main), "no Chinese text on /saturation?lang=zh"
    assert "α = 0.75" in main or "0.75" in main
    app.assert_healthy()


def test_saturation_presenter_steps_and_a_prediction(app):
    app.open("saturation", "present=1")
    sidebar = app.page.locator("[data-testid='stSidebar']")
    expect(sidebar.locator(".st-key-d_k input")).to_have_value("64")
    # the page's order: 4 the sweeps (they ask first), 2 the row pair, 1 the playground,
    # 3 the classic experiment, 5 precision; the link counts the steps as the screen does
    expect(app.button("saturation_mean_max_reveal")).to_be_disabled()
    expect(app.page.locator(CHARTS)).to_have_count(0)
    app.interact(app.button("step_next").click)
    app.page.wait_for_function("() => location.search.includes('step=2')", timeout=10_000)
    expect(app.page.locator(CHARTS)).to_have_count(2)  # the row pair ("Go deeper" opens)
    app.interact(app.button("step_next").click)
    app.page.wait_for_function("() => location.search.includes('step=3')", timeout=10_000)
    expect(app.page.locator(CHARTS)).to_have_count(3)  # + the two-score playground
    app.interact(app.button("step_next").click, expect_chart_change=False)
    app.page.wait_for_function("() => location.search.includes('step=4')", timeout=10_000)
    expect(app.page.locator(CHARTS)).to_have_count(3)  # the classic experiment asks first
    reveal = app.button("saturation_median_reveal")
    expect(reveal).to_be_disabled()
    app.interact(
        lambda: app.widget("saturation_median_guess").get_by_text("≈ 1 (≥ 0.99)").click(),
        expect_chart_change=False,
    )
    expect(reveal).to_be_enabled()
    app.interact(reveal.click)
    expect(app.page.locator(CHARTS)).to_have_count(6)  # heatmaps and row-max histogram
    main = app.page.locator("[data-testid='stMain']")
    expect(main).to_contain_text("the measurement says 0.9 – 0.99")
    expect(main).to_contain_text("Question:")
    app.interact(app.button("step_prev").click)
    app.page.wait_for_function("() => location.search.includes('step=3')", timeout=10_000)
    expect(app.page.locator(CHARTS)).to_have_count(3)
    app.assert_healthy()
    app.screenshot("saturation-presenter")


def test_saturation_csv_download_matches_the_chart(app):
    from ui.saturation import data

    app.open("saturation", "n_keys=12&seed=3&deeper=true")
    app.reveal_predictions("saturation_median")
    button = app.csv_button("saturation_overflow")
    with app.page.expect_download() as download:
        button.click()
    assert download.value.suggested_filename == "saturation_overflow.csv"
    with open(download.value.path(), encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    # the frame the chart draws: α = 0 and ½ × float16/float32 × every d_k of the sweep
    expected = data.overflow_sweep(12, (0.0, 0.5), 3)
    assert len(rows) == len(expected)
    assert set(rows[0]) == {"d", "series", "color", "dtype", "rate", "lo", "hi"}
    got = sorted((r["dtype"], int(r["d"]), float(r["rate"])) for r in rows)
    want = sorted(zip(expected["dtype"], expected["d"].astype(int), expected["rate"], strict=True))
    assert [g[:2] for g in got] == [w[:2] for w in want]
    assert [g[2] for g in got] == pytest.approx([w[2] for w in want])
    app.assert_healthy()


def test_saturation_short_path_and_where_it_breaks(app):
    """The short path: the question on the sweep's far end, then its two charts; the
    break sets d_k = 4096 and α = 0 in the link."""
    app.open("saturation")
    app.reveal_predictions("saturation_mean_max")
    app.assert_charts_drawn(2, min_px=100, timeout_ms=15_000)
    app.interact(app.button("break_it").click)
    app.page.wait_for_function(
        "() => location.search.includes('d_k=4096') && location.search.includes('alpha=0')",
        timeout=10_000,
    )
    app.assert_healthy()
