"""The "In real models" page in a real browser (see conftest.py for the harness)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from ui.real_models.field_guide import ROWS

pytestmark = pytest.mark.e2e

N_CHARTS = 8
GLANCE = 3  # section 1: the corpus grids (under the divisor) and histogram
SENTENCE_STD, SENTENCE_ENTROPY, HEAD = 3, 4, 5  # the chosen sentence's grids, its map
CHARTS = "[data-testid='stVegaLiteChart']"


def test_the_short_path_is_section_1_and_the_break_drops_the_scale(app):
    """Go deeper closed: the question, then section 1's charts; "Show me where it
    breaks" divides by 1, which redraws the grids and goes into the link."""
    app.open("real-models")
    expect(app.page.locator(CHARTS)).to_have_count(0)  # the question first
    expect(app.widget("head")).to_have_count(0)  # section 2's controls: under Go deeper
    app.reveal_predictions("real_models_std")
    app.assert_charts_drawn(GLANCE, min_px=50, timeout_ms=10_000)
    before, after = app.interact(app.button("break_it").click)
    assert before[:2] != after[:2], "the grids did not follow the divisor"
    app.page.wait_for_function("() => location.search.includes('divide_by=none')", timeout=10_000)
    app.assert_healthy()


def test_real_models_page_renders_and_the_map_follows_the_divisor(app):
    app.open("real-models", "sentence=2&layer=1&head=8&deeper=true")
    charts = app.page.locator(CHARTS)
    expect(charts).to_have_count(N_CHARTS - 3)  # section 1 waits for the prediction
    app.reveal_predictions("real_models_std")
    app.assert_charts_drawn(N_CHARTS, min_px=50, timeout_ms=5_000)
    # the URL chose the sentence by its index
    expect(app.widget("sentence").get_by_role("combobox")).to_have_accessible_name("Sentence")
    assert "2 · She gave him the book" in app.widget("sentence").aria_snapshot()
    assert app.widget("layer").locator("input").input_value() == "1"
    assert app.widget("head").locator("input").input_value() == "8"
    # no division: the same q·k, saturated — the attention map and section 1's grids
    # change (the histogram is of the trained logits), the URL follows
    radio = app.widget("divide_by").locator("[data-testid='stRadioOption']").first  # none (÷1)
    before, after = app.interact(radio.click)
    assert before[HEAD] != after[HEAD], "the attention map did not change with the divisor"
    assert before[:2] != after[:2], "section 1's grids did not follow the divisor"
    assert before[2] == after[2], "the pooled histogram depends on no control"
    app.page.wait_for_function("() => location.search.includes('divide_by=none')", timeout=10_000)
    app.page.wait_for_function("() => location.search.includes('sentence=2')", timeout=10_000)
    # the field guide's links are there
    expect(app.page.locator("[data-testid='stDataFrame']")).to_have_count(1)
    guide = app.page.locator("[data-testid='stTable']")
    expect(guide).to_have_count(1)
    expect(guide.get_by_role("link")).to_have_count(len(ROWS))
    app.assert_healthy()
    app.screenshot("real_models")


def test_your_own_sentence_updates_the_charts_and_the_url(app):
    """Type a sentence, press Ctrl+Enter: the sentence's grids and map are redrawn from the
    model, the corpus views stay, the tokens show, and the URL carries the text."""
    app.open("real-models", "head=2&deeper=true")
    app.reveal_predictions("real_models_std")
    app.assert_charts_drawn(N_CHARTS, min_px=50, timeout_ms=5_000)
    box = app.widget("text").locator("textarea")
    expect(box).to_have_attribute("placeholder", re.compile("64 tokens"))
    box.fill("My dog chased the ball because it was bouncing.")

    def submit() -> None:
        box.press("Control+Enter")

    before, after = app.interact(submit, timeout_ms=60_000)  # the first text loads the weights
    assert before[:GLANCE] == after[:GLANCE], "the corpus views do not depend on the text"
    for i in (SENTENCE_STD, SENTENCE_ENTROPY, HEAD):
        assert before[i] != after[i], f"chart {i} did not follow the typed sentence"
    tokens = app.page.locator("[data-testid='stCode']").first
    expect(tokens).to_contain_text("[CLS] my dog chased the ball because it was bouncing . [SEP]")
    # the sentence box names the typed text, not a shipped sentence
    expect(app.widget("sentence_instead").locator("input")).to_have_attribute(
        "placeholder", re.compile("^Your own sentence")
    )
    expect(app.widget("sentence")).to_have_count(0)
    app.page.wait_for_function(
        "() => new URLSearchParams(location.search).get('text') === "
        "'My dog chased the ball because it was bouncing.'",
        timeout=10_000,
    )
    assert "head=2" in app.page.url
    # an example is one click away; a shipped sentence empties the box again
    app.interact(app.button("text_example_2").click)
    expect(box).to_have_value("注意力为什么要除以根号 d？")
    expect(app.page.get_by_text("are [UNK]", exact=False)).to_have_count(1)
    app.page.wait_for_function(
        "() => (new URLSearchParams(location.search).get('text') || '').startsWith('注意力')",
        timeout=10_000,
    )
    # 10,000 characters pasted: the box keeps 1,000, the model reads 64 tokens of them
    box.fill("Attention divides q·k by the square root of d_k. " * 200)
    app.interact(submit)
    assert len(box.input_value()) == 1000
    expect(app.page.get_by_text("the box keeps the first 1,000", exact=False)).to_have_count(1)
    expect(app.page.get_by_text("of its 1,000 characters", exact=False)).to_have_count(1)
    app.page.wait_for_function(
        "() => (new URLSearchParams(location.search).get('text') || '').length === 1000",
        timeout=10_000,
    )
    app.assert_healthy()
    app.screenshot("real_models_text")
