"""Gradients page in a real browser (see conftest.py for the harness)."""

from __future__ import annotations

import io
import re

import pandas as pd
import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
N_CHARTS = 8


def _charts(app):
    return app.page.locator("[data-testid='stVegaLiteChart']")


def _assert_every_chart_drawn(app) -> None:
    app.assert_charts_drawn(N_CHARTS, min_px=50, timeout_ms=30_000)


def test_gradients_page_renders_every_chart(app):
    app.open("gradients", "d_k=1024&deeper=true")
    app.reveal_predictions("gradients_dead_share")
    _assert_every_chart_drawn(app)
    assert app.widget("d_k").locator("input").input_value() == "1024"
    table = app.page.locator("[data-testid='stTable']").inner_text()
    shares = [float(x) for x in re.findall(r"(\d+\.\d) %", table)]
    assert len(shares) == 2 and shares[0] > 50 and shares[1] == 0.0, table  # dead rows
    app.assert_healthy()
    app.screenshot("gradients")


def test_gradients_d_k_change_redraws_and_updates_url(app):
    app.open("gradients", "deeper=true")
    before, after = app.interact(app.button("d_k_double").click)
    assert before != after, "no chart changed after ×2"
    app.page.wait_for_function("() => location.search.includes('d_k=1024')", timeout=10_000)
    app.assert_healthy()


def test_gradients_chinese_and_deep_link(app):
    app.open("gradients", "lang=zh&gap=12&gap2=4&n_keys=64&deeper=true")
    app.reveal_predictions("gradients_dead_share")
    _assert_every_chart_drawn(app)
    main = app.page.locator("[data-testid='stMain']").inner_text()
    assert CJK.search(main), "no Chinese text on /gradients?lang=zh"
    assert app.widget("n_keys").locator("input").input_value() == "64"
    gap = app.page.locator(".st-key-gradients_gap .vega-bind input[type='range']")
    assert gap.input_value() == "12"  # the gap explorer's slider, drawn by Vega
    app.assert_healthy()


def test_gradients_presenter_mode_steps_and_predicts(app):
    # the page's order is 3, 1, 2, 4, 5: the dead-row question and the sweeps first
    app.open("gradients", "present=1")
    sidebar = app.page.locator("[data-testid='stSidebar']")
    expect(sidebar.locator(".st-key-d_k input")).to_have_value("512")
    expect(_charts(app)).to_have_count(0)  # step 3: the sweeps wait for a guess
    guess = app.widget("gradients_dead_share_guess")
    app.interact(
        lambda: guess.get_by_text("10–50 %", exact=True).click(), expect_chart_change=False
    )
    app.interact(app.button("gradients_dead_share_reveal").click, expect_chart_change=False)
    expect(_charts(app)).to_have_count(3)
    main = app.page.locator("[data-testid='stMain']")
    expect(main).to_contain_text("the measurement says ≥ 50 %")  # 57 % at d_k = 512
    app.interact(app.button("step_next").click, expect_chart_change=False)
    # the link counts the steps as the screen does: "Step 2 of 5"
    app.page.wait_for_function("() => location.search.includes('step=2')", timeout=10_000)
    expect(main).to_contain_text("Next: step 3")
    expect(_charts(app)).to_have_count(5)  # + the two heatmaps, under "Go deeper"
    app.interact(app.button("step_next").click, expect_chart_change=False)
    expect(_charts(app)).to_have_count(6)  # + the gap explorer
    app.interact(app.button("step_next").click, expect_chart_change=False)
    expect(main).to_contain_text("Popular claim")
    app.interact(app.button("step_next").click, expect_chart_change=False)
    app.page.wait_for_function("() => location.search.includes('step=5')", timeout=10_000)
    expect(app.button("step_next")).to_be_disabled()
    app.interact(app.button("gradients_qgrad_median_skip").click)
    _assert_every_chart_drawn(app)
    app.interact(app.button("step_prev").click, expect_chart_change=False)
    expect(_charts(app)).to_have_count(6)
    app.assert_healthy()
    app.screenshot("gradients-presenter")


def test_gradients_step_deep_link(app):
    app.open("gradients", "present=1&step=4")
    # the step select box names the step by its place in the page's order (3, 1, 2, 4, 5)
    step = app.widget("step").locator("input")
    expect(step).to_have_value(re.compile(r"^Step 4 of 5 · Myth"))
    expect(_charts(app)).to_have_count(3)  # steps 3, 1, 2: the dead-row question still open
    expect(app.widget("gradients_dead_share_guess")).to_have_count(1)
    app.assert_healthy()


def test_gradients_csv_download_matches_the_chart(app):
    from ui.story import data

    app.open("gradients", "seed=3")
    app.reveal_predictions("gradients_dead_share")
    button = app.csv_button("gradients_dead")
    with app.page.expect_download() as download:
        button.click()
    assert download.value.suggested_filename == "gradients_dead.csv"
    with open(download.value.path(), encoding="utf-8") as f:
        got = pd.read_csv(io.StringIO(f.read()))
    want = data.gradient_sweep_frames(10, 0.5, 3)["dead"]
    assert list(got.columns) == ["alpha", "d", "value", "lo", "hi", "series", "color"]
    assert len(got) == len(want) == 3 * 13  # α = 0, ½, 1 over d_k = 1 … 4096
    assert got["d"].tolist() == want["d"].tolist()
    assert got["value"].to_numpy() == pytest.approx(want["value"].to_numpy(), abs=1e-12)
    assert got.loc[got.d == 1024, "value"].iloc[0] > 0.5  # most unscaled rows dead
    app.assert_healthy()


def test_open_share_panel_follows_the_gap_explorer(app):
    """The gap explorer reruns alone (a fragment); an open share panel must not keep the
    link of the last full run."""
    app.open("gradients", "deeper=true")
    panel = app.widget("share_open")
    app.interact(lambda: panel.locator("summary").click(), expect_chart_change=False)
    code = panel.locator("code")
    expect(code).to_contain_text("gap=6")
    thumb = app.page.locator(".st-key-gradients_gap .vega-bind input[type='range']")
    thumb.focus()
    app.interact(lambda: thumb.press("ArrowRight"))  # 6 → 6.5
    app.page.wait_for_function("() => location.search.includes('gap=6.5')", timeout=10_000)
    expect(code).to_contain_text("gap=6.5", timeout=10_000)
    app.assert_healthy()
