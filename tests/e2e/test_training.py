"""The training page in a real browser (see conftest.py for the harness)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from ui.training.data import SWEEP_SEEDS

pytestmark = pytest.mark.e2e

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
#: Charts at a shipped setting: the LR chart, 4 curves, a probe heatmap per scaling (3) and
#: 4 d_k panels.
N_CHARTS = 12
#: The single run's charts: 4 curves and 3 probe heatmaps.
RUN_CHARTS = 7
#: Computing one sweep run per seed is a few seconds of CPU; a loaded machine is slower.
SWEEP_TIMEOUT_MS = 240_000


def _assert_charts_drawn(app, expected: int) -> None:
    app.assert_charts_drawn(expected, min_px=150, timeout_ms=30_000)


def _settings(app):
    """Open the controls box's "Settings" (optimizer, rate, steps, variants) if closed."""
    if not app.widget("optimizer").is_visible():
        app.page.locator("[data-testid='stPopover'] button").filter(has_text="Settings").click()
    expect(app.widget("optimizer")).to_be_visible(timeout=10_000)
    app.page.wait_for_timeout(500)  # the panel's opening animation


def test_the_short_path_is_the_sweep_and_the_break_lands_on_shipped_runs(app):
    """Go deeper closed: the question, then the LR chart alone; "Show me where it breaks"
    moves to m = 4, d_k = 1024 (shipped: nothing to compute) and the link follows."""
    app.open("training")
    expect(app.page.locator("[data-testid='stVegaLiteChart']")).to_have_count(0)
    app.reveal_predictions("training_learns")
    _assert_charts_drawn(app, 1)
    before, after = app.interact(app.button("break_it").click, timeout_ms=60_000)
    assert before != after
    app.page.wait_for_function(
        "() => location.search.includes('m=4') && location.search.includes('d_k=1024')",
        timeout=10_000,
    )
    expect(app.button("training_compute")).to_have_count(0)
    app.reveal_predictions()
    _assert_charts_drawn(app, 1)
    app.assert_healthy()


def test_training_renders_and_the_optimizer_updates_the_run(app):
    app.open("training", "deeper=true")
    app.reveal_predictions("training_learns")
    _assert_charts_drawn(app, N_CHARTS)
    app.assert_healthy()
    _settings(app)
    option = app.widget("optimizer").locator("[data-testid='stRadioOption']").filter(has_text="SGD")
    before, after = app.interact(option.click, timeout_ms=60_000)
    app.screenshot("training")
    assert before != after
    # a new optimizer brings its own default learning rate, and the link follows
    app.page.wait_for_function(
        "() => location.search.includes('optimizer=sgd') && !location.search.includes('lr=0.01')",
        timeout=10_000,
    )
    _settings(app)
    expect(app.widget("lr")).to_contain_text("1")
    app.reveal_predictions()
    _assert_charts_drawn(app, N_CHARTS)
    app.assert_healthy()


def test_training_in_chinese_from_a_deep_link(app):
    app.open("training", "lang=zh&optimizer=sgd&lr=3.16&d_k=256&deeper=true")
    app.reveal_predictions("training_learns")
    main = app.page.locator("[data-testid='stMain']").inner_text()
    assert CJK.search(main), "no Chinese text on /training?lang=zh"
    if not app.widget("lr").is_visible():
        app.page.locator("[data-testid='stPopover'] button").filter(has_text="设置").click()
    expect(app.widget("lr")).to_contain_text("3.16")
    _assert_charts_drawn(app, N_CHARTS)
    app.assert_healthy()


def test_training_sweep_computes_with_progress(app):
    app.open("training", "d_k=32&deeper=true")
    _assert_charts_drawn(app, RUN_CHARTS + 4)  # the LR chart at d_k = 32 waits for its runs
    button = app.button("training_compute")
    expect(button).to_be_visible()
    app.interact(button.click, expect_chart_change=False, timeout_ms=SWEEP_TIMEOUT_MS)
    progress = app.page.locator("[data-testid='stProgress']")
    expect(progress).to_contain_text(f"{SWEEP_SEEDS} runs")
    app.reveal_predictions("training_learns")
    _assert_charts_drawn(app, N_CHARTS)
    app.page.get_by_text("The numbers behind the chart").click()  # where the runs come from
    main = app.page.locator("[data-testid='stMain']")
    expect(main).to_contain_text(f"{SWEEP_SEEDS} computed now", timeout=10_000)
    app.assert_healthy()


def test_d_k_moves_to_a_power_of_two_in_the_link_and_by_the_stepper(app):
    """A link's d_k = 100 trains at 128 (input, link and a note agree); the input's "+"
    then goes on to the next power, 256."""
    app.open("training", "d_k=100&deeper=true")
    box = app.widget("d_k").locator("input")
    expect(box).to_have_value("128", timeout=10_000)
    app.page.wait_for_function("() => location.search.includes('d_k=128')", timeout=10_000)
    main = app.page.locator("[data-testid='stMain']")
    expect(main).to_contain_text("dₖ = 100 became 128")
    step_up = app.widget("d_k").locator("[data-testid='stNumberInputStepUp']")
    before, after = app.interact(step_up.click, timeout_ms=60_000)
    assert before != after, "stepping d_k changed no chart"
    expect(box).to_have_value("256", timeout=10_000)
    app.page.wait_for_function("() => location.search.includes('d_k=256')", timeout=10_000)
    app.assert_healthy()
