"""Gradients page through AppTest, in both languages."""

import json
import math

import pyarrow as pa
import pytest

from tests.app.helpers import (
    CJK,
    assert_page_in,
    chart_data,
    chart_inputs,
    open_code_panels,
    reveal_all,
    run_page,
    warnings,
)
from ui.common.charts import title_text

PAGE = "app_pages/gradients.py"
N_CHARTS = 8  # 2 sweeps, dead rows (the short path), 2 heatmaps, gap explorer, 2 histograms
JAC, GRAD, DEAD, HEAT_U, HEAT_S, GAP, HIST_U, HIST_S = range(N_CHARTS)
N_GATED = 3  # before the two predictions are answered: the heatmaps and the gap explorer
DEFAULT_D_K = 512  # most unscaled rows are dead there, none with 1/√d_k


def _largest_dataset(chart: dict) -> int:
    """Rows of the chart's largest dataset (datasets travel as Arrow IPC streams)."""
    return max(pa.ipc.open_stream(v).read_all().num_rows for v in chart["datasets"].values())


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_gradients_runs_with_every_chart(lang):
    at = run_page(PAGE, lang=lang)
    charts = assert_page_in(at, lang, N_CHARTS)
    assert len(at.latex) == 4  # formula, saturated cases, live rows, gap explorer
    assert len(at.table) == 1
    total = sum(len(c["raw"]) for c in charts)
    assert total < 200_000  # chart data budget


@pytest.mark.parametrize(
    "params",
    [
        {"alpha": "0"},
        {"n_keys": "2", "d_k": "1"},
        {"n_keys": "512", "d_k": "4096", "alpha": "1.5"},
        {"gap": "30", "gap2": "8"},
        {"gap": "0", "gap2": "1"},
    ],
)
def test_extreme_settings_run(params):
    at = run_page(PAGE, **params)
    assert not at.exception
    assert len(chart_data(at)) == N_CHARTS
    assert at.table[0].value.shape[1] == (1 if params.get("alpha") == "0" else 2)


def test_formula_uses_the_sampled_row():
    at = run_page(PAGE, d_k="1024")
    live = [x.value for x in at.latex if r"\alpha = 0:" in x.value]
    assert live and r"\times10^{-" in live[0]  # 1 − p_k is tiny without scaling
    assert r"\alpha = 0.5:" in live[0]  # both rows in one aligned block
    assert any("1/√1024" in c.value for c in at.caption)  # the chain-rule factor


def test_changing_d_k_changes_the_dependent_charts():
    at = run_page(PAGE)
    before = chart_data(at)
    at.number_input(key="d_k").set_value(1024).run()
    after = chart_data(at)
    assert not at.exception
    for i in (HEAT_U, HEAT_S, JAC, GRAD, DEAD, HIST_U, HIST_S):  # sweeps move their marker
        assert before[i]["raw"] != after[i]["raw"], i
    assert before[GAP]["raw"] == after[GAP]["raw"]  # the gap explorer does not use d_k
    table = at.table[0].value
    assert float(table.iloc[-1, 0].rstrip(" %")) > 50  # most unscaled rows are dead
    assert table.iloc[-1, 1] == "0.0 %"


def test_changing_n_keys_changes_every_chart():
    at = run_page(PAGE)
    before = chart_data(at)
    at.number_input(key="n_keys").set_value(64).run()
    after = chart_data(at)
    assert not at.exception
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        assert b["raw"] != a["raw"], i
    assert _largest_dataset(after[HEAT_U]) == 32 * 32  # capped heatmap
    assert any("32" in c.value and "64" in c.value for c in at.caption)


def test_changing_alpha_adds_a_series_and_redraws_the_scaled_pictures():
    at = run_page(PAGE)
    before = chart_data(at)
    at.slider(key="alpha").set_value(0.75).run()
    after = chart_data(at)
    assert not at.exception
    for i in (HEAT_S, JAC, GRAD, DEAD, HIST_S):
        assert before[i]["raw"] != after[i]["raw"], i
    # the unscaled row is the same (only the shared colour scale may move); no gap change
    assert before[HEAT_U]["datasets"] == after[HEAT_U]["datasets"]
    assert before[GAP]["raw"] == after[GAP]["raw"]
    assert _largest_dataset(after[JAC]) == 4 * _largest_dataset(before[JAC]) // 3
    at.button(key="alpha_preset_0").click().run()
    assert at.slider(key="alpha").value == 0.0


def test_gap_controls_change_the_gap_explorer():
    at = run_page(PAGE)
    before = chart_data(at)[GAP]
    assert chart_inputs(before) == {"gap": 6.0}
    at.session_state["gap"] = 12.0  # as the chart reports it when a drag pauses
    at.run()
    assert any(r"g = 12:" in x.value for x in at.latex)  # the formula follows
    assert at.query_params["gap"] == "12"
    moved = chart_data(at)[GAP]
    assert chart_inputs(moved) == {"gap": 12.0}
    assert set(moved["datasets"]) == set(before["datasets"])  # the same curves (named by hash)
    at.select_slider(key="gap2").set_value("4").run()
    assert not at.exception
    assert set(chart_data(at)[GAP]["datasets"]) != set(moved["datasets"])  # a runner-up: new curves


def test_gap_explorer_prints_the_laws_only_where_they_hold():
    # n_keys = 10, g = 6: p_k = e^6/(e^6 + 9) = 0.978 ≥ ½ — the laws are printed with ≈
    gap = next(x.value for x in run_page(PAGE).latex if "g = 6:" in x.value)
    assert r"\approx" in gap and "0.978178" in gap
    # n_keys = 512, g = 6: p_k = 0.441 — exact values only, and a note saying why
    at = run_page(PAGE, n_keys="512")
    gap = next(x.value for x in at.latex if "g = 6:" in x.value)
    assert r"\approx" not in gap and "0.441181" in gap
    assert any("pₖ = 0.441" in c.value for c in at.caption)


def test_query_params_set_the_controls():
    at = run_page(PAGE, d_k="256", n_keys="20", alpha="1.0", gap="10.5", gap2="2")
    assert not at.exception and not warnings(at)
    assert at.number_input(key="d_k").value == 256
    assert at.number_input(key="n_keys").value == 20
    assert at.slider(key="alpha").value == 1.0
    assert chart_inputs(chart_data(at)[GAP]) == {"gap": 10.5}
    assert at.select_slider(key="gap2").value == "2"
    assert "n_keys = 20" in title_text(chart_data(at)[GAP]["spec"]["title"])


@pytest.mark.parametrize(
    ("params", "name", "default"),
    [
        ({"d_k": "abc"}, "d_k", DEFAULT_D_K),
        ({"n_keys": "1"}, "n_keys", 10),
        ({"n_keys": "1000"}, "n_keys", 10),
        ({"n_keys": "2.5"}, "n_keys", 10),
        ({"alpha": "2"}, "alpha", 0.5),
        ({"gap": "-1"}, "gap", 6.0),
        ({"gap": "nan"}, "gap", 6.0),
        ({"gap2": "3"}, "gap2", "none"),
    ],
)
def test_malformed_params_warn_and_fall_back(params, name, default):
    # the warning belongs to the first run (the page as opened from the link)
    at = run_page(PAGE, reveal=False, **params)
    assert not at.exception
    assert [w for w in warnings(at) if f"`{name}`" in w], warnings(at)
    if name == "gap":  # the input of a chart moved in the browser
        (chart,) = [c for c in at.get("vega_lite_chart") if c.proto.id.endswith("gradients_gap")]
        assert chart_inputs({"spec": json.loads(chart.proto.spec)}) == {"gap": default}
    else:
        widget = {"d_k": at.number_input, "n_keys": at.number_input, "gap2": at.select_slider}
        assert widget.get(name, at.slider)(key=name).value == default
    assert len(at.get("vega_lite_chart")) == N_GATED  # two questions hold back five charts
    reveal_all(at)
    assert len(at.get("vega_lite_chart")) == N_CHARTS


def test_same_seed_same_pictures_and_new_seed_new_pictures():
    a = chart_data(run_page(PAGE, seed="7"))
    b = chart_data(run_page(PAGE, seed="7"))
    c = chart_data(run_page(PAGE, seed="8"))
    assert [x["datasets"] for x in a] == [x["datasets"] for x in b]
    assert a[HEAT_U]["datasets"] != c[HEAT_U]["datasets"]
    assert a[HIST_U]["datasets"] != c[HIST_U]["datasets"]
    assert a[GAP]["datasets"] == c[GAP]["datasets"]  # deterministic


# --- workshop mode -------------------------------------------------------------------------
def _text(at) -> str:
    return " ".join(m.value for m in at.markdown)


def _charts(at) -> int:
    return len(at.get("vega_lite_chart"))


def test_presenter_mode_steps_through_the_page():
    # the page's order is 3, 1, 2, 4, 5: the short path (the dead-row question and the
    # sweeps) first, then "Go deeper", opened by itself once a step reaches it
    at = run_page(PAGE, reveal=False, present="1")
    assert not at.exception
    assert at.selectbox(key="step").value == 3
    assert at.sidebar.number_input(key="d_k").value == DEFAULT_D_K  # controls in the sidebar
    assert at.sidebar.number_input(key="n_keys").value == 10
    assert _charts(at) == 0  # the sweeps wait for the dead-row question
    assert at.button(key="gradients_dead_share_reveal").disabled
    at.button(key="gradients_dead_share_skip").click().run()
    assert _charts(at) == 3 and len(at.table) == 1 and not at.latex
    at.button(key="step_next").click().run()
    assert at.selectbox(key="step").value == 1
    assert _charts(at) == 5 and len(at.latex) == 3  # formula, cases, the sampled row
    at.button(key="step_next").click().run()
    assert at.selectbox(key="step").value == 2
    assert _charts(at) == 6 and chart_inputs(chart_data(at)[-1]) == {"gap": 6.0}
    at.button(key="step_next").click().run()
    assert at.selectbox(key="step").value == 4
    assert "mean ‖∂p/∂s‖_F" in _text(at)  # the myth card
    at.button(key="step_next").click().run()
    assert at.selectbox(key="step").value == 5
    assert at.button(key="step_next").disabled
    assert _charts(at) == 6  # the histograms wait for the second question
    at.button(key="gradients_qgrad_median_skip").click().run()
    assert _charts(at) == N_CHARTS
    at.button(key="step_prev").click().run()
    assert at.selectbox(key="step").value == 4 and _charts(at) == 6
    assert not at.exception


@pytest.mark.parametrize(
    ("place", "step", "n_charts"), [(1, 3, 3), (2, 1, 5), (3, 2, 6), (4, 4, 6), (5, 5, 8)]
)
def test_step_deep_link(place, step, n_charts):
    # the link's step is the one on the screen: &step=2 opens "Step 2 of 5", whose id is 1
    at = run_page(PAGE, present="1", step=str(place), lang="zh")
    assert not at.exception and not warnings(at)
    assert at.selectbox(key="step").value == step
    assert f"第 {place} 步" in at.selectbox(key="step").format_func(step)
    assert _charts(at) == n_charts


def test_bad_step_warns_and_opens_the_first_step():
    at = run_page(PAGE, reveal=False, present="1", step="6")
    assert any("`step`" in w for w in warnings(at))
    assert at.selectbox(key="step").value == 3 and _charts(at) == 0


def test_short_path_is_the_dead_row_question_and_the_sweeps():
    at = run_page(PAGE, reveal=False, deeper="false")
    assert not at.exception
    assert [h.value for h in at.header] == ["How many rows stop learning?"]
    assert at.radio(key="gradients_dead_share_guess") is not None
    assert _charts(at) == 0 and not at.latex  # Go deeper closed: nothing of it is computed
    at.button(key="gradients_dead_share_skip").click().run()
    assert _charts(at) == 3  # the two sweeps and the dead rows
    assert len(at.expander) >= 1 and not at.expander[-1].proto.expanded


def test_the_default_d_k_shows_the_collapse_and_the_mean_beside_it():
    """At d_k = 512 (issue 35: at 64 the median gradient reaching q was "about the same"):
    most unscaled rows are dead, none with 1/√d_k; the unscaled median gradient reaching
    q is under a tenth of the scaled one, while its mean is the larger."""
    at = run_page(PAGE)
    table = at.table[0].value
    assert float(table.iloc[-1, 0].rstrip(" %")) > 50 and table.iloc[-1, 1] == "0.0 %"
    # the medians of ‖∂p/∂s‖_F (typical row) against the means
    assert float(table.iloc[2, 0]) < 0.1 * float(table.iloc[2, 1])
    assert float(table.iloc[3, 0]) > float(table.iloc[3, 1])
    medians = [float(c.value.split()[1]) for c in at.caption if c.value.startswith("Median ")]
    means = [
        float(c.value.split("mean ")[1].split(";")[0])
        for c in at.caption
        if c.value.startswith("Median ")
    ]
    assert medians[0] < 0.1 * medians[1] and means[0] > means[1]
    captions = " ".join(c.value for c in at.caption)
    assert "the unscaled *mean* can be the larger" in captions


def test_show_me_where_it_breaks():
    at = run_page(PAGE, alpha="1.0")
    at.button(key="break_it").click().run()
    assert not at.exception
    assert at.number_input(key="d_k").value == 4096 and at.slider(key="alpha").value == 0.5
    table = at.table[0].value
    assert float(table.iloc[-1, 0].rstrip(" %")) > 80  # most unscaled rows dead
    assert table.iloc[-1, 1] == "0.0 %"
    assert float(table.iloc[0, 0]) < 1e-6 < float(table.iloc[0, 1])  # median ‖J‖_F


def test_terms_on_this_page():
    at = run_page(PAGE, deeper="false")
    shown = " ".join(m.value for m in at.markdown)
    assert "**Jacobian**:" in shown and "**dead row**:" in shown


def test_answer_bins():
    from ui.gradients.sections import QGRAD_BINS
    from ui.story.cards import DEAD_BINS, bin_index

    assert [bin_index(x, DEAD_BINS) for x in (0.0, 0.009, 0.01, 0.16, 0.5, 1.0)] == [
        0,
        0,
        1,
        2,
        3,
        3,
    ]
    assert [bin_index(x, QGRAD_BINS) for x in (0.0, 2e-4, 0.08, 1.0, 2.0, 5.0)] == [
        0,
        0,
        1,
        2,
        3,
        3,
    ]


def _table_share(at) -> float:
    return float(at.table[0].value.iloc[-1, 0].rstrip(" %"))


@pytest.mark.parametrize(
    ("d_k", "answer"),
    # measured: 0.3 %, 16 %, 68 %; predicted 0.1 %, 17 %, 68 % (docs/mathematics.md §4.4)
    [("8", 0), ("64", 2), ("1024", 3)],
)
def test_dead_share_question_answer_follows_the_measurement(d_k, answer):
    at = run_page(PAGE, reveal=False, d_k=d_k)
    guess = (answer + 1) % 4
    at.radio(key="gradients_dead_share_guess").set_value(guess).run()
    at.button(key="gradients_dead_share_reveal").click().run()
    assert not at.exception
    assert at.session_state["_predictions"]["gradients_dead_share"] == guess
    options = at.radio(key="gradients_qgrad_median_guess")  # the next question is still open
    assert options is not None
    share = _table_share(at)  # the table the sweeps reveal: the same measurement
    assert share == pytest.approx({0: 0.3, 2: 16.1, 3: 68.4}[answer], abs=1.5)
    from ui.story.cards import DEAD_BINS, bin_index

    assert bin_index(share / 100, DEAD_BINS) == answer
    text = _text(at)
    labels = ["< 1 %", "1–10 %", "10–50 %", "≥ 50 %"]
    assert f"**{labels[guess]}**" in text and f"**{labels[answer]}**" in text
    assert f"**{share:.1f} %**" in text  # the explanation quotes the measured share
    assert _charts(at) == 6


def test_dead_share_right_guess_and_ask_again():
    at = run_page(PAGE, reveal=False, d_k="1024")
    at.radio(key="gradients_dead_share_guess").set_value(3).run()
    at.button(key="gradients_dead_share_reveal").click().run()
    assert "right" in _text(at)
    at.button(key="gradients_dead_share_again").click().run()
    assert _charts(at) == N_GATED


@pytest.mark.parametrize(("d_k", "answer"), [("64", 2), ("256", 1), ("1024", 0)])
def test_query_gradient_question_answer_follows_the_measurement(d_k, answer):
    at = run_page(PAGE, reveal=False, d_k=d_k)
    at.button(key="gradients_dead_share_skip").click().run()
    at.radio(key="gradients_qgrad_median_guess").set_value(3).run()
    at.button(key="gradients_qgrad_median_reveal").click().run()
    assert not at.exception and _charts(at) == N_CHARTS
    # the medians in the captions under the histograms (unscaled, then 1/√d_k)
    medians = [float(c.value.split()[1]) for c in at.caption if c.value.startswith("Median ")]
    assert len(medians) == 2
    from ui.gradients.sections import QGRAD_BINS
    from ui.story.cards import bin_index

    assert bin_index(medians[0] / medians[1], QGRAD_BINS) == answer
    labels = [
        "unscaled more than 1,000× smaller",
        "unscaled 2 to 1,000× smaller",
        "about the same (within a factor of 2)",
        "unscaled more than 2× larger",
    ]
    text = _text(at)
    assert f"**{labels[answer]}**" in text
    assert "the median is" in text and "a ratio of" in text


def _cards(at) -> list[str]:
    """What each misconception card says the numbers show (its second paragraph)."""
    mark = "\n\n:material/check_circle:"
    return [mark[2:] + m.value.split(mark)[1] for m in at.markdown if mark in m.value]


def _myth(at) -> str:
    """The card on the mean gradient (the second card answers the 1/input question)."""
    cards = _cards(at)
    assert len(cards) == 2
    return cards[0]


def test_myth_card_headline_names_the_derivative_and_its_source():
    text = _text(run_page(PAGE))
    assert "Popular claim:** “Without scaling the mean gradient is smaller”" in text
    assert "with respect to the raw scores s = q·k, ‖∂p/∂s‖_F" in text
    assert "Vaswani et al. 2017, §3.2.1" in text


def test_gap_card_one_row_decays_exponentially_the_mean_like_one_over_sigma():
    """One row: ‖J‖_F(g = 20)/‖J‖_F(g = 10) is e⁻¹⁰ up to (1 + (n−1)e⁻¹⁰)² (exact gap
    law, docs/mathematics.md §4.2); many rows: the unscaled mean from σ = 16 to σ = 32
    falls by about ½ (asymptotically 1/σ; tests/core/test_gradients.py bounds the ratio)."""
    at = run_page(PAGE)
    card = _cards(at)[1]
    assert "Question:** Is the softmax gradient inversely proportional" in _text(at)
    ratio = float(card.split("multiplies it by **")[1].split("**")[0])
    assert ratio == pytest.approx(math.exp(-10), rel=0.05)
    mratio = float(card.split("a ratio of **")[1].split("**")[0])
    assert 0.45 < mratio < 0.6


@pytest.mark.parametrize("d_k", ["64", "1024"])
def test_myth_card_quotes_the_live_means_and_medians(d_k):
    at = run_page(PAGE, d_k=d_k)
    table = at.table[0].value  # α = ½ (the default): the same measurement as the card
    mean_u, mean_s = table.iloc[3, 0], table.iloc[3, 1]
    med_u, med_s = table.iloc[2, 0], table.iloc[2, 1]
    card = _myth(at)
    assert f"**{mean_u}**" in card and f"**{mean_s}**" in card
    assert med_u in card and med_s in card
    assert float(mean_u) > float(mean_s) and "**larger**" in card
    assert f"{table.iloc[-1, 0].rstrip(' %')} %" in card  # dead share
    if d_k == "1024":
        assert "What collapses is the typical row" in card
    else:
        assert "has not collapsed yet" in card
    # the myth's prose is not repeated elsewhere on the page
    assert "Which quantity you average matters" not in _text(at)


def test_myth_card_compares_with_sqrt_scaling_whatever_alpha():
    a = _myth(run_page(PAGE, d_k="256"))
    b = _myth(run_page(PAGE, d_k="256", alpha="1.5"))
    assert a == b
    assert "the same, because at d_k = 1" in _myth(run_page(PAGE, d_k="1"))
    assert "no row is dead yet" in _myth(run_page(PAGE, d_k="2"))


def test_myth_card_waits_for_the_dead_share_question():
    at = run_page(PAGE, reveal=False, d_k="256")
    text = _text(at)
    assert "Popular claim" not in text and "Why the mean and the median disagree" not in text
    at.button(key="gradients_dead_share_skip").click().run()
    assert "**larger**" in _myth(at)


def test_myth_card_in_chinese():
    at = run_page(PAGE, lang="zh", d_k="1024")
    card = _myth(at)
    assert CJK.search(card) and "真正坍缩的是典型行" in card


def test_code_expanders_hold_the_core_functions():
    at = open_code_panels(run_page(PAGE))
    sources = [c.value for c in at.code]
    for fn in (
        "sample_scores",
        "jacobian_from_logits",
        "gap_curve",
        "saturation_sweep",
        "row_quantities",
        "summarise",
        "query_grad_norms",
    ):
        assert any(s.startswith(f"def {fn}(") for s in sources), fn


def test_every_chart_has_a_csv_download():
    at = open_code_panels(run_page(PAGE))
    keys = {b.key for b in at.get("download_button")}
    for key in (
        "gradients_heat_unscaled",
        "gradients_heat_scaled",
        "gradients_gap",
        "gradients_jac_sweep",
        "gradients_grad_sweep",
        "gradients_dead",
        "gradients_qgrad_unscaled",
        "gradients_qgrad_scaled",
    ):
        assert f"{key}_csv" in keys, sorted(keys)


@pytest.mark.parametrize(("d_k", "collapsed"), [("64", False), ("1024", True)])
def test_query_gradient_caption_follows_the_medians(d_k, collapsed):
    at = run_page(PAGE, d_k=d_k)
    captions = " ".join(c.value for c in at.caption)
    assert ("most are saturated and pass almost nothing" in captions) == collapsed
    assert ("have not collapsed yet" in captions) == (not collapsed)
    assert "Exact sampler" in captions


def test_query_gradient_caption_with_alpha_above_half_names_the_extra_factor():
    # α = 1, n_keys = 512: the median with 1/d_k is far below the unscaled one because every
    # row carries d_k^(½−α); whether the unscaled rows have collapsed is judged against 1/√d_k
    at = run_page(PAGE, d_k="1024", n_keys="512", alpha="1.0")
    captions = " ".join(c.value for c in at.caption)
    assert "(√dₖ)¹⁻²ᵅ = 0.0312" in captions and "*smaller*" in captions
    assert "have not collapsed at this d_k: their median is 0.632×" in captions  # 0.044 / 0.070
    explain = " ".join(m.value for m in at.markdown if "Measured on" in m.value)
    assert float(explain.split("a ratio of ")[1].rstrip(".")) > 10
    at = run_page(PAGE, d_k="4096", n_keys="512", alpha="1.0")
    captions = " ".join(c.value for c in at.caption)
    # unscaled 1.5e-4: below the 1/d_k median (6.9e-4) too, and far below 0.070 with 1/√d_k
    assert "most are saturated" in captions and "not collapsed" not in captions


@pytest.mark.parametrize(
    ("d_k", "alpha", "ratio", "rel", "expected", "absent"),
    [
        (64, 0.0, 1.0, 1.0, "are the same rows", "collapsed"),
        (1, 0.5, 1.0, 1.0, "are the same rows", "collapsed"),
        (4096, 1.5, 13.8, 0.002, "have collapsed: their median is 0.002×", "not collapsed"),
        (4, 1.0, 3.4, 2.1, "have not collapsed", "have collapsed"),
        (64, 0.75, 102.0, 23.8, "their median is 23.8× the median", "have collapsed"),
        (1024, 0.5, 0.01, 0.01, "most are saturated", "not collapsed"),
        (1024, 1.5, 0.35, 0.0003, "most are saturated", "not collapsed"),
        (4096, 0.25, 0.5, 0.5, "divided by less than √dₖ", "collapsed"),
        (64, 0.5, 1.07, 1.07, "have not collapsed yet", "most are saturated"),
    ],
)
def test_query_gradient_caption_branches(d_k, alpha, ratio, rel, expected, absent):
    from ui.gradients.sections import qgrad_caption

    text = qgrad_caption(d_k, alpha, ratio, rel)
    assert expected in text and absent not in text


@pytest.mark.parametrize("params", [{"alpha": "0"}, {"d_k": "1"}])
def test_query_gradient_question_is_not_asked_when_both_sides_are_the_same(params):
    at = run_page(PAGE, reveal=False, **params)
    assert "gradients_qgrad_median_guess" not in [r.key for r in at.radio]
    assert any("both sides are the same rows" in i.value for i in at.info)


def test_gap_explorer_drops_a_law_that_is_more_than_a_quarter_off():
    # n_keys = 10, g = 3: p_k = 0.69 ≥ ½, yet ‖J‖_F = 0.257 against the law's 0.517
    at = run_page(PAGE, gap="3")
    gap = next(x.value for x in at.latex if "g = 3:" in x.value)
    assert r"\approx" not in gap
    assert any("more than 25 % off" in c.value for c in at.caption)
