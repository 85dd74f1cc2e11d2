"""The "Which d?" page in a real browser (see conftest.py for the harness)."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

N_CHARTS = 5
CHARTS = "[data-testid='stVegaLiteChart']"
SIDEBAR = "[data-testid='stSidebar']"


def test_which_d_page_renders_every_chart(app):
    app.open("which-d", "d_model=2048&n_heads=32&w_init=one&deeper=true")
    charts = app.page.locator(CHARTS)
    expect(charts).to_have_count(N_CHARTS - 2)  # section 1 waits for the prediction
    app.reveal_predictions("which_d_std")
    app.assert_charts_drawn(N_CHARTS, min_px=50, timeout_ms=5_000)
    assert app.widget("d_model").locator("input").input_value() == "2048"
    assert app.widget("n_heads").locator("input").input_value() == "32"
    # a control change redraws the charts and reaches the URL; 32 still divides 1024
    before, after = app.interact(app.button("d_model_half").click)
    assert before != after, "no chart changed after ÷2"
    app.page.wait_for_function("() => location.search.includes('d_model=1024')", timeout=10_000)
    assert app.widget("n_heads").locator("input").input_value() == "32"
    app.assert_healthy()
    app.screenshot("which_d")


def test_which_d_presenter_steps(app):
    app.open("which-d", "present=1")
    sidebar = app.page.locator(SIDEBAR)
    for key in ("d_model", "n_heads", "head_divisor"):
        expect(sidebar.locator(f".st-key-{key}")).to_have_count(1)
    for key in ("d_proj", "w_init", "x_scale"):  # each joins the sidebar at its own step
        expect(sidebar.locator(f".st-key-{key}")).to_have_count(0)
    charts = app.page.locator(CHARTS)
    expect(charts).to_have_count(0)  # step 1: the question comes before the charts
    app.interact(app.button("step_next").click, expect_chart_change=False)
    app.page.wait_for_function("() => location.search.includes('step=2')", timeout=10_000)
    expect(charts).to_have_count(2)  # cross-attention
    expect(sidebar.locator(".st-key-d_proj")).to_have_count(1)
    app.reveal_predictions("which_d_std")
    expect(charts).to_have_count(4)
    app.interact(app.button("step_prev").click)
    step = app.widget("step").locator("input")  # the select box names the step
    expect(step).to_have_value(re.compile(r"^Step 1 of 5 · "))
    assert "step=" not in app.page.evaluate("() => location.search")  # the default
    expect(charts).to_have_count(2)
    app.assert_healthy()
    app.screenshot("which_d_presenter_step1")
    # a shared link opens at its step
    app.open("which-d", "present=1&step=5")
    expect(app.widget("step").locator("input")).to_have_value(re.compile(r"^Step 5 of 5 · "))
    expect(charts).to_have_count(3)  # cross-attention and QK LayerNorm; section 1 waits
    for key in ("d_proj", "w_init", "x_scale"):
        expect(sidebar.locator(f".st-key-{key}")).to_have_count(1)
    app.assert_healthy()


def test_which_d_csv_download_matches_the_chart(app):
    from ui.story import data

    app.open("which-d")
    app.reveal_predictions("which_d_std")
    button = app.csv_button("which_d_mh_std")
    with app.page.expect_download() as download:
        button.click()
    assert download.value.suggested_filename == "which_d_mh_std.csv"
    got = pd.read_csv(download.value.path())
    # what the chart draws: the fan-in heads of d_model = 512, 8 heads, seed 0
    frame, _ = data.which_d_heads(512, 8, 0)
    want = frame[frame["init"] == "fan_in"]
    assert len(got) == len(want) == 24  # 3 divisors × 8 heads
    assert got["head"].tolist() == want["head"].tolist()
    assert got["std"].to_numpy() == pytest.approx(want["std"].to_numpy(), rel=1e-9)
    assert list(got.columns) == [
        "label",
        "head",
        "std",
        "entropy",
        "mean_std",
        "mean_entropy",
        "theory_std",
        "rank",
    ]
    assert got["entropy"].to_numpy() == pytest.approx(want["entropy"].to_numpy(), rel=1e-9)
    assert got.drop_duplicates("label")["theory_std"].tolist() == pytest.approx([1.0, 8**-0.5, 8.0])
    # the bar heights are the per-head means, and the page's metric shows the first
    means = got.groupby("label", sort=False)["std"].mean()
    assert means.tolist() == pytest.approx(
        got.groupby("label", sort=False)["mean_std"].first().tolist()
    )
    metric = app.page.locator("[data-testid='stMetricValue']").first.inner_text()
    assert float(metric) == pytest.approx(means.iloc[0], rel=1e-3)
    app.assert_healthy()


def test_a_new_d_model_keeps_the_bars_in_their_order(app):
    """The per-head charts take a new d_model's data in place (``swap_data``): the bars
    keep their order, ÷√d_k first, and their labels name the new divisors."""
    app.open("which-d", "reveal=1&n_heads=8")
    app.assert_charts_drawn(2, min_px=50, timeout_ms=10_000)
    axis = app.page.locator(f"{CHARTS} [aria-roledescription='axis'][aria-label^='X-axis']")

    def divisors() -> list[str]:
        # Vega's description of a discrete axis lists its values in the axis's order
        return [a.split(": ", 1)[1] for a in axis.evaluate_all("els => els.map(e => e.ariaLabel)")]

    assert divisors() == ["÷√dₖ = ÷8, ÷√d_model = ÷22.6, none (÷1)"] * 2
    box = app.widget("d_model").locator("input")

    def type_value():
        box.fill("768")
        box.press("Enter")

    before, after = app.interact(type_value)
    assert before != after, "no chart changed after a new d_model"
    expect(axis.first).to_have_attribute("aria-label", re.compile("÷9.8"), timeout=10_000)
    assert divisors() == ["÷√dₖ = ÷9.8, ÷√d_model = ÷27.7, none (÷1)"] * 2
    app.assert_healthy()


def test_the_divisor_keeps_its_choice_when_its_labels_change(app):
    """The divisor's options are labelled with their values (``√d_model = √512``): a new
    d_model relabels them, and the chosen one stays chosen (the browser keeps the label
    it showed, so the app sends the choice again)."""
    app.open("which-d", "reveal=1&head_divisor=d_model")
    radios = app.widget("head_divisor").locator("input[type='radio']")
    expect(radios.nth(1)).to_be_checked()
    before, after = app.interact(app.button("d_model_half").click)
    assert before != after, "no chart changed after ÷2"
    expect(app.widget("head_divisor")).to_contain_text("√256")
    expect(radios.nth(1)).to_be_checked()
    app.assert_healthy()
