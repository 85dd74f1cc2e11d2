"""The √d_k-vs-d_k page in a real browser (see conftest.py for the harness)."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def _assert_charts_drawn(app, expected: int) -> None:
    app.assert_charts_drawn(expected, min_px=200, timeout_ms=15_000)


def test_sqrt_vs_d_renders_every_chart_and_the_aligned_preset_adds_one(app):
    app.open("sqrt-vs-d", "deeper=true")
    _assert_charts_drawn(app, 4)  # ρ = 0: the max-weight question holds two charts back
    app.reveal_predictions("sqrt_vs_d_max")
    # ρ = 0: the relevant key's mean logit, weight and wins are a note each, not charts
    _assert_charts_drawn(app, 6)
    app.assert_healthy()
    app.screenshot("sqrt_vs_d")
    before, after = app.interact(app.button("rho_aligned_preset").click)
    assert before != after
    app.page.wait_for_function("() => location.search.includes('rho=0.5')", timeout=10_000)
    app.reveal_predictions("sqrt_vs_d_relevant")  # asked now that one key is aligned
    _assert_charts_drawn(app, 9)
    app.assert_healthy()


def test_sqrt_vs_d_in_chinese_from_a_deep_link(app):
    app.open("sqrt-vs-d", "lang=zh&rho=0.5&alpha=1.25&d_min=16&deeper=true")
    app.reveal_predictions("sqrt_vs_d_max")
    main = app.page.locator("[data-testid='stMain']").inner_text()
    assert CJK.search(main), "no Chinese text on /sqrt-vs-d?lang=zh"
    _assert_charts_drawn(app, 9)
    assert app.widget("alpha").inner_text().count("1.25") >= 1
    app.assert_healthy()


def test_sqrt_vs_d_presenter_mode_steps(app):
    # the page's order is 2, 1, 3, 4, 5, 6: what softmax does with each exponent first
    app.open("sqrt-vs-d", "present=1")
    sidebar = app.page.locator("[data-testid='stSidebar']")
    expect(sidebar.locator(".st-key-d_k input")).to_have_count(1)
    expect(sidebar.locator(".st-key-rho_aligned_preset button:visible")).to_have_count(1)
    expect(app.widget("sqrt_vs_d_max_guess")).to_be_visible()
    _assert_charts_drawn(app, 0)  # the question comes before its charts
    option = app.widget("sqrt_vs_d_max_guess").locator("[data-testid='stRadioOption']").first
    app.interact(option.click, expect_chart_change=False)
    expect(app.button("sqrt_vs_d_max_reveal")).to_be_enabled()
    app.interact(app.button("sqrt_vs_d_max_reveal").click)
    _assert_charts_drawn(app, 2)
    main = app.page.locator("[data-testid='stMain']").inner_text()
    assert "the measurement says" in main or "right" in main
    # the link counts the steps as the screen does ("Step 2 of 6" is step=2)
    app.interact(app.button("step_next").click)
    app.page.wait_for_function("() => location.search.includes('step=2')", timeout=10_000)
    _assert_charts_drawn(app, 3)  # + the logits' spread, under "Go deeper"
    app.interact(app.button("step_next").click)
    app.page.wait_for_function("() => location.search.includes('step=3')", timeout=10_000)
    _assert_charts_drawn(app, 4)  # + the (d_k, α) heatmap
    app.interact(app.button("step_prev").click)
    app.page.wait_for_function("() => location.search.includes('step=2')", timeout=10_000)
    _assert_charts_drawn(app, 3)
    app.assert_healthy()
    app.screenshot("sqrt_vs_d_presenter")


def _relevant_weight(rho: float, alphas: list[float]) -> pd.DataFrame:
    """relevant_weight_mean per (alpha, d) exactly as the page's cached sweep computes it."""
    from core.experiments import saturation_sweep
    from ui.common import data as common_data

    out = saturation_sweep(
        [int(d) for d in common_data.SWEEP_D],
        10,
        alphas,
        rng=common_data.rng_for(0, common_data.STREAM_SATURATION_SWEEP),
        n_rows=common_data.sweep_rows(10),
        rho=rho,
    )
    return pd.DataFrame(
        {k: np.asarray(out[k]).ravel() for k in ("alpha", "d", "relevant_weight_mean")}
    )


def test_sqrt_vs_d_csv_download_matches_the_chart(app):
    app.open("sqrt-vs-d", "rho=0.5&deeper=true")
    app.reveal_predictions("sqrt_vs_d_max")
    _assert_charts_drawn(app, 9)
    with app.page.expect_download() as download:
        app.csv_button("sqrt_vs_d_weight").click()
    assert download.value.suggested_filename == "sqrt_vs_d_weight.csv"
    with open(download.value.path(), encoding="utf-8") as fh:
        csv = pd.read_csv(io.StringIO(fh.read()))
    assert len(csv) == 4 * 13  # α = 0, ½, 1 and the chosen 0.75, d_k = 1…4096
    assert {"d", "alpha", "series", "value", "lo", "hi"} <= set(csv.columns)
    expected = pd.concat([_relevant_weight(0.5, [0.0, 0.5, 1.0]), _relevant_weight(0.5, [0.75])])
    merged = csv.merge(expected, on=["alpha", "d"], validate="one_to_one")
    assert len(merged) == 52
    assert np.allclose(merged["value"], merged["relevant_weight_mean"], rtol=1e-12, atol=0)
    # n = 10, ρ = 0.5: 1/d_k ≈ e^½/(e^½ + 9) = 0.155 at every d_k from 16 on (docs §2.3)
    linear = merged[(merged["alpha"] == 1.0) & (merged["d"] >= 16)]["value"]
    assert np.allclose(linear, 0.155, atol=0.004)
    app.assert_healthy()
