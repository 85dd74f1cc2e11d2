"""The "Which d?" page through AppTest, in both languages."""

from __future__ import annotations

import io
import math

import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from tests.app.helpers import (
    CJK,
    assert_page_in,
    assert_swapped_in_place,
    chart_data,
    open_code_panels,
    reveal_all,
    run_page,
    warnings,
)

SCRIPT = "app_pages/which-d.py"
N_CHARTS = 5  # multi-head std + entropy, cross-attention std + entropy, QK LayerNorm
MH_STD, MH_ENTROPY, CROSS_STD, CROSS_ENTROPY, QK = range(N_CHARTS)


def open_page(reveal: bool = True, **params: str | list[str]) -> AppTest:
    """Deep-link the page; with ``reveal`` every prediction is skipped (all charts drawn).
    A bad URL value warns on the first run only: check warnings with ``reveal=False``."""
    return run_page(SCRIPT, reveal=reveal, **params)


def frames(chart: dict) -> list[pd.DataFrame]:
    """The chart's datasets decoded from Arrow."""
    return [pa.ipc.open_stream(io.BytesIO(raw)).read_pandas() for raw in chart["datasets"].values()]


def bars_frame(chart: dict) -> pd.DataFrame:
    """The per-divisor bars of a divisor_bars chart (the dataset with a ``selected`` column)."""
    return next(f for f in frames(chart) if "selected" in f.columns)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_runs_with_every_chart(lang):
    at = open_page(lang=lang)
    assert_page_in(at, lang, N_CHARTS)
    assert len(at.latex) == 4  # and one formula in each of the three cards' Markdown
    assert sum(r"\mathrm{Var}(q_i)" in m.value for m in at.markdown) == 3
    assert len(at.metric) == 13
    assert at.number_input(key="d_model").value == 512
    assert at.selectbox(key="n_heads").value == "8"
    assert at.radio(key="head_divisor").value == "d_k"
    assert at.radio(key="w_init").value == "fan_in"
    # the misconception is stated on the page, as a card with the live numbers
    assert any("d_model" in m.value and "0.354" in m.value for m in at.markdown)


def test_default_numbers_match_the_reference():
    """d_model 512, 8 heads: d_k = 64, logit std ≈ 1 (÷8), 0.354 (÷√512), 8 (none)."""
    at = open_page()
    bars = bars_frame(chart_data(at)[MH_STD]).set_index("label")
    assert list(bars.theory_std) == pytest.approx([1.0, 8**-0.5, 8.0])
    assert list(bars["std"]) == pytest.approx([1.0, 8**-0.5, 8.0], rel=0.05)
    metric = {m.label: m for m in at.metric}
    ratio = metric["std(÷√d_k)/std(÷√d_model)"]
    assert float(ratio.value) == pytest.approx(8**0.5, rel=1e-3)
    cross = bars_frame(chart_data(at)[CROSS_STD])
    assert list(cross.theory_std) == pytest.approx([1.0, (64 / 512) ** 0.5, (64 / 1024) ** 0.5])
    gap = metric["max |difference| of the weights"]
    assert float(gap.value) < 1e-12


def test_n_heads_options_are_the_divisors_of_d_model():
    at = open_page(d_model="96")
    box = at.selectbox(key="n_heads")
    assert box.options == ["1", "2", "3", "4", "6", "8", "12", "16", "24", "32", "48", "96"]
    assert box.value == "2"  # d_k = 48 is the closest to 64


def test_query_params_set_the_controls():
    at = open_page(
        d_model="1024",
        n_heads="16",
        head_divisor="d_model",
        w_init="one",
        d_q_in="768",
        d_kv_in="256",
        d_proj="32",
        x_scale="8",
    )
    assert not at.exception and not warnings(at)
    assert at.number_input(key="d_model").value == 1024
    assert at.selectbox(key="n_heads").value == "16"
    assert at.radio(key="head_divisor").value == "d_model"
    assert at.radio(key="w_init").value == "one"
    assert at.number_input(key="d_q_in").value == 768
    assert at.number_input(key="d_kv_in").value == 256
    assert at.number_input(key="d_proj").value == 32
    assert at.select_slider(key="x_scale").value == "8"
    selected = bars_frame(chart_data(at)[MH_STD]).query("selected")
    assert selected.label.iloc[0].startswith("÷√d_model")
    # std-1 weights: logits ÷√d_k have std d_model = 1024
    bars = bars_frame(chart_data(at)[MH_STD])
    assert bars.theory_std.iloc[0] == pytest.approx(1024)


def test_n_heads_that_does_not_divide_d_model_warns_and_falls_back():
    at = open_page(reveal=False, d_model="512", n_heads="7")
    assert not at.exception
    found = [w for w in warnings(at) if "`n_heads`" in w]
    assert found and "divisors of d_model = 512" in found[0]
    assert at.selectbox(key="n_heads").value == "8"
    assert len(chart_data(reveal_all(at))) == N_CHARTS


def test_changing_d_model_moves_n_heads_to_the_nearest_divisor():
    at = open_page()
    at.number_input(key="d_model").set_value(2048).run()  # 8 heads still divide it
    assert at.selectbox(key="n_heads").value == "8"
    at.number_input(key="d_model").set_value(513).run()  # typed (from 512 it would be +)
    assert not at.exception
    assert at.selectbox(key="n_heads").value == "9"  # 513 = 3³·19: 9 is nearest to 8
    assert any("513" in i.value for i in at.info)
    at.number_input(key="d_model").set_value(1026).run()
    assert at.selectbox(key="n_heads").value == "9"  # still divides: kept, no notice
    assert not at.info


def test_the_link_keeps_n_heads_where_d_model_moved_its_default():
    """n_heads' default follows d_model (d_k nearest 64): a kept 8 heads at d_model = 256
    (default 4) is written into the link, and dropped again at 512 (default 8), so the
    link reproduces the view."""
    at = open_page()
    at.number_input(key="d_model").set_value(256).run()
    assert at.selectbox(key="n_heads").value == "8"
    assert at.query_params.get("n_heads") == "8"
    # d_model's own binding writes it in the browser (AppTest does not run the frontend)
    again = open_page(d_model="256", n_heads=at.query_params["n_heads"])
    assert again.selectbox(key="n_heads").value == "8" and not warnings(again)
    at.number_input(key="d_model").set_value(512).run()
    assert "n_heads" not in at.query_params
    at.selectbox(key="n_heads").set_value("16").run()
    assert at.query_params.get("n_heads") == "16"


def test_back_brings_the_divisor_of_the_older_link_back():
    """The divisor is written to the URL by the app: where the URL changes under it (Back,
    Forward, the address bar), the page shows the URL's value, not the session's."""
    at = open_page()
    at.radio(key="head_divisor").set_value("none").run()
    at.radio(key="head_divisor").set_value("d_model").run()
    assert at.query_params.get("head_divisor") == "d_model"
    at.query_params["head_divisor"] = "none"  # Back: the older entry's link
    at.run()
    assert at.radio(key="head_divisor").value == "none" and not warnings(at)
    del at.query_params["head_divisor"]  # Back again: the first entry, the default
    at.run()
    assert at.radio(key="head_divisor").value == "d_k"
    at.radio(key="head_divisor").set_value("none").run()  # a choice stays chosen
    at.run()
    assert at.radio(key="head_divisor").value == "none"


def test_changing_d_model_changes_the_multi_head_and_qk_charts_only():
    at = open_page()
    before = chart_data(at)
    at.number_input(key="d_model").set_value(1024).run()
    after = chart_data(at)
    assert not at.exception
    for i in (MH_STD, MH_ENTROPY, QK):
        assert before[i]["raw"] != after[i]["raw"], i
    for i in (CROSS_STD, CROSS_ENTROPY):
        assert before[i]["raw"] == after[i]["raw"], i


def test_d_model_buttons():
    at = open_page(d_model="100")
    at.button(key="d_model_double").click().run()
    assert at.number_input(key="d_model").value == 200
    at.button(key="d_model_half").click().run()
    at.button(key="d_model_half").click().run()
    assert at.number_input(key="d_model").value == 64
    assert at.button(key="d_model_half").disabled


def test_changing_n_heads_changes_the_multi_head_charts():
    at = open_page()
    before = chart_data(at)
    at.selectbox(key="n_heads").set_value("32").run()
    after = chart_data(at)
    assert not at.exception
    assert before[MH_STD]["raw"] != after[MH_STD]["raw"]
    bars = bars_frame(after[MH_STD]).set_index("label")
    assert bars.theory_std.tolist() == pytest.approx([1.0, 32**-0.5, 4.0])  # d_k = 16


def test_divisor_choice_moves_the_highlight_and_the_metrics():
    at = open_page()
    at.radio(key="head_divisor").set_value("none").run()
    bars = bars_frame(chart_data(at)[MH_STD])
    assert bars.query("selected").label.iloc[0].startswith("none")
    std_metric = next(m for m in at.metric if m.label.startswith("Logit std, none"))
    assert float(std_metric.value) == pytest.approx(8.0, rel=0.05)


def test_initialisation_changes_multi_head_and_cross_charts():
    at = open_page()
    before = chart_data(at)
    at.radio(key="w_init").set_value("zero_q").run()
    after = chart_data(at)
    for i in (MH_STD, MH_ENTROPY, CROSS_STD, CROSS_ENTROPY):
        assert before[i]["raw"] != after[i]["raw"], i
    assert before[QK]["raw"] == after[QK]["raw"]  # the QK section always uses fan-in
    bars = bars_frame(after[MH_ENTROPY])
    assert bars.entropy.tolist() == pytest.approx([4.158883] * 3, abs=1e-6)  # uniform: ln 64
    ratio = next(m for m in at.metric if m.label.startswith("std(÷√d_k)"))
    assert ratio.value == "—"  # 0 / 0: no ratio to show


def test_cross_attention_controls_change_the_cross_charts():
    at = open_page()
    before = chart_data(at)
    at.number_input(key="d_kv_in").set_value(256).run()
    after = chart_data(at)
    assert before[CROSS_STD]["raw"] != after[CROSS_STD]["raw"]
    assert before[MH_STD]["raw"] == after[MH_STD]["raw"]
    at.number_input(key="d_proj").set_value(16).run()
    bars = bars_frame(chart_data(at)[CROSS_STD])
    assert bars.theory_std.tolist() == pytest.approx([1.0, (16 / 512) ** 0.5, (16 / 256) ** 0.5])


def test_x_scale_moves_the_marker_and_the_metrics():
    at = open_page()
    before = chart_data(at)[QK]
    at.select_slider(key="x_scale").set_value("16").run()
    after = chart_data(at)[QK]
    assert before["raw"] != after["raw"]
    values = [float(m.value) for m in at.metric if "s = 16" in m.label]
    assert len(values) == 2
    assert values[0] == pytest.approx(256, rel=0.1)  # s² without LayerNorm
    assert values[1] == pytest.approx(1, rel=0.1)  # ≈ 1 with it


@pytest.mark.parametrize(("n_heads", "heads"), [("8", 4), ("2", 2)])
def test_qk_caption_counts_the_heads_it_uses(n_heads, heads):
    at = open_page(n_heads=n_heads)
    d_k = 512 // int(n_heads)
    caption = next(c.value for c in at.caption if "(s x) W" in c.value)
    assert caption.startswith(
        f"Heads used: {heads} of n_heads = {n_heads} (d_model = 512, dₖ = {d_k};"
    )


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"d_model": "abc"}, "d_model"),
        ({"d_model": "5000"}, "d_model"),
        ({"d_model": "32"}, "d_model"),
        ({"n_heads": "abc"}, "n_heads"),
        ({"n_heads": ["8", "16"]}, "n_heads"),
        ({"head_divisor": "d_v"}, "head_divisor"),
        ({"w_init": "xavier"}, "w_init"),
        ({"d_q_in": "0"}, "d_q_in"),
        ({"d_kv_in": "1.5"}, "d_kv_in"),
        ({"d_proj": "2000"}, "d_proj"),
        ({"x_scale": "3"}, "x_scale"),
    ],
)
def test_malformed_params_warn_and_fall_back(params, name):
    at = open_page(reveal=False, **params)
    assert not at.exception
    found = [w for w in warnings(at) if f"`{name}`" in w]
    assert found, warnings(at)
    defaults = {
        "d_model": (at.number_input, 512),
        "n_heads": (at.selectbox, "8"),
        "head_divisor": (at.radio, "d_k"),
        "w_init": (at.radio, "fan_in"),
        "d_q_in": (at.number_input, 512),
        "d_kv_in": (at.number_input, 1024),
        "d_proj": (at.number_input, 64),
        "x_scale": (at.select_slider, "1"),
    }
    widget, default = defaults[name]
    assert widget(key=name).value == default
    assert len(chart_data(reveal_all(at))) == N_CHARTS


def test_language_switch_keeps_controls():
    at = open_page(d_model="768", n_heads="12", w_init="one")
    at.radio(key="lang").set_value("zh").run()
    assert CJK.search(at.title[0].value)
    assert at.number_input(key="d_model").value == 768
    assert at.selectbox(key="n_heads").value == "12"
    assert at.radio(key="w_init").value == "one"


def test_same_seed_same_pictures_and_new_seed_new_pictures():
    a = chart_data(open_page(seed="7"))
    b = chart_data(open_page(seed="7"))
    c = chart_data(open_page(seed="8"))
    assert [x["datasets"] for x in a] == [x["datasets"] for x in b]
    assert a[MH_STD]["datasets"] != c[MH_STD]["datasets"]


# --- workshop mode -----------------------------------------------------------------------
#: charts drawn at each presenter step while the section-1 question is open / answered
STEP_CHARTS = {1: (0, 2), 2: (2, 4), 3: (2, 4), 4: (2, 4), 5: (3, 5)}


def _n_charts(at: AppTest) -> int:
    return len(at.get("vega_lite_chart"))


def _text(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown)


def test_presenter_mode_reveals_one_section_per_step():
    at = open_page(reveal=False, present="1")
    assert not at.exception
    assert at.toggle(key="present").value is True
    # the short path's controls are in the sidebar; a deeper section's join them at its step
    assert at.sidebar.number_input(key="d_model").value == 512
    assert at.sidebar.selectbox(key="n_heads").value == "8"
    assert at.sidebar.radio(key="head_divisor").value == "d_k"
    own = {2: ("number_input", "d_proj", 64), 3: ("radio", "w_init", "fan_in"),
           5: ("select_slider", "x_scale", "1")}  # fmt: skip
    for k in range(1, 6):
        assert at.selectbox(key="step").value == k
        assert len(at.header) == k
        assert _n_charts(at) == STEP_CHARTS[k][0], k
        for step, (kind, key, value) in own.items():
            widgets = [w for w in getattr(at.sidebar, kind) if w.key == key]
            assert len(widgets) == (step <= k), (k, key)
            assert all(w.value == value for w in widgets)
        if k < 5:
            at.button(key="step_next").click().run()
    assert at.button(key="step_next").disabled
    at.button(key="step_prev").click().run()
    assert at.selectbox(key="step").value == 4
    # answering the question draws section 1 and keeps the step
    at.button(key="which_d_std_skip").click().run()
    assert at.selectbox(key="step").value == 4
    assert _n_charts(at) == STEP_CHARTS[4][1]


@pytest.mark.parametrize("k", [1, 3, 5])
def test_presenter_step_from_the_url(k):
    at = open_page(present="1", step=str(k), lang="zh")
    assert not at.exception and not warnings(at)
    assert at.selectbox(key="step").value == k
    assert len(at.header) == k
    assert _n_charts(at) == STEP_CHARTS[k][1]


def test_prediction_gates_the_multi_head_charts_and_keeps_the_guess():
    at = open_page(reveal=False)
    assert _n_charts(at) == N_CHARTS - 2  # section 1 waits for the guess
    assert at.button(key="which_d_std_reveal").disabled
    guess = at.radio(key="which_d_std_guess")
    assert guess.options == ["0.125 (1/8)", "0.354 (1/√8)", "1", "2.83 (√8)"]
    guess.set_value(2).run()  # "1": the popular belief
    at.button(key="which_d_std_reveal").click().run()
    assert _n_charts(at) == N_CHARTS
    measured = bars_frame(chart_data(at)[MH_STD]).set_index("divisor").loc["d_model", "std"]
    text = _text(at)
    assert "**1**" in text and "**0.354 (1/√8)**" in text  # the guess and the answer
    assert f"**{measured:.3g}**" in text  # the measured number
    assert at.session_state["_predictions"] == {"which_d_std": 2}
    # the guess survives a control change; the verdict follows the live numbers
    at.selectbox(key="n_heads").set_value("32").run()
    assert _n_charts(at) == N_CHARTS
    assert "**0.177 (1/√32)**" in _text(at)
    at.button(key="which_d_std_again").click().run()
    assert _n_charts(at) == N_CHARTS - 2


@pytest.mark.parametrize(
    ("d_model", "n_heads", "right"),
    [("512", "8", "0.354 (1/√8)"), ("64", "64", "0.125 (1/√64)"), ("4096", "16", "0.25 (1/√16)")],
)
def test_prediction_answer_follows_the_measurement(d_model, n_heads, right):
    """d_k = 64, 1 and 256: the option nearest the measured std is 1/√n_heads."""
    at = open_page(reveal=False, d_model=d_model, n_heads=n_heads)
    options = at.radio(key="which_d_std_guess").options
    at.radio(key="which_d_std_guess").set_value(options.index(right)).run()
    at.button(key="which_d_std_reveal").click().run()
    assert "right" in _text(at)
    measured = bars_frame(chart_data(at)[MH_STD]).set_index("divisor").loc["d_model", "std"]
    assert measured == pytest.approx(int(n_heads) ** -0.5, rel=0.15)


def test_one_head_has_nothing_to_predict():
    at = open_page(reveal=False, n_heads="1")
    assert not [r for r in at.radio if r.key == "which_d_std_guess"]
    assert _n_charts(at) == N_CHARTS
    assert any("dₖ = d_model = 512" in c.value for c in at.caption)


def test_myth_card_shows_the_live_counter_example():
    at = open_page()
    assert not at.error  # the misconception is now the card
    bars = bars_frame(chart_data(at)[MH_STD]).set_index("divisor")
    card = next(m.value for m in at.markdown if "√d_model = √512" in m.value)
    assert f"**{bars.loc['d_k', 'std']:.3g}**" in card
    assert f"**{bars.loc['d_model', 'std']:.3g}**" in card
    entropy = bars_frame(chart_data(at)[MH_ENTROPY]).set_index("divisor")
    assert f"**{entropy.loc['d_model', 'entropy']:.3f}**" in card
    assert "Question:** Is the d in √d the model width d_model?" in _text(at)
    # fan-in numbers whatever the chosen initialisation; they follow n_heads
    at.radio(key="w_init").set_value("zero_q").run()
    at.selectbox(key="n_heads").set_value("32").run()
    card = next(m.value for m in at.markdown if "√d_model = √512" in m.value)
    assert "32 heads" in card and "**0.17" in card


def test_myth_card_in_chinese():
    at = open_page(lang="zh")
    card = next(m.value for m in at.markdown if "√d_model = √512" in m.value)
    assert CJK.search(card) and "**0.35" in card


def test_show_code_expanders_hold_the_core_source():
    at = open_code_panels(open_page())
    sources = {c.value.split("(", 1)[0] for c in at.code if c.value.startswith("def ")}
    assert {
        "def projected_multi_head_logits",
        "def multi_head_logits",
        "def head_statistics",
        "def projected_cross_attention_logits",
        "def cross_attention_logits",
        "def input_scale_sweep",
        "def layer_norm",
    } <= sources


def test_every_chart_offers_its_data():
    at = open_code_panels(open_page())
    keys = sorted(b.proto.id.rsplit("-", 1)[-1] for b in at.get("download_button"))
    assert keys == sorted(
        f"which_d_{c}_csv" for c in ("mh_std", "mh_entropy", "cross_std", "cross_entropy", "qk")
    )
    # the divisor charts' CSV is their per-head dataset, which carries its bar and tick
    points = next(f for f in frames(chart_data(at)[MH_STD]) if "head" in f.columns)
    assert list(points.columns) == [
        "label",
        "head",
        "std",
        "entropy",
        "mean_std",
        "mean_entropy",
        "theory_std",
        "rank",
    ]


def test_qk_layernorm_theory_is_exact_for_the_head_width():
    # d_k = 2 (256 heads of 2): every normalised logit is ±√2 — std √2, not 1
    at = open_page(d_model="512", n_heads="256")
    values = [float(m.value) for m in at.metric if "with QK LayerNorm" in m.label]
    # (a little below: eps = 1e-5 shrinks the rows whose two entries nearly tie)
    assert values == [pytest.approx(math.sqrt(2), rel=1e-2)]
    assert any(r"\sqrt{\tfrac{d_k}{d_k - 1}} = 1.414" in x.value for x in at.latex)
    assert chart_data(at)[QK]["raw"]  # the chart is drawn


def test_qk_layernorm_at_one_dimension_draws_no_zero_line():
    at = open_page(d_model="64", n_heads="64")  # d_k = 1: LayerNorm maps everything to 0
    assert any("maps every q and k to 0" in i.value for i in at.info)
    caption = next(c.value for c in at.caption if "(s x) W" in c.value)
    assert "d_k − 1" not in caption and "d_k = 1;" in caption  # no theory that divides by 0
    assert "no normalised line" in chart_data(at)[QK]["spec"]["description"]
    assert not [m for m in at.metric if "with QK LayerNorm" in m.label]
    data = pd.concat(frames(chart_data(at)[QK]))
    values = data[[c for c in ("value", "theory") if c in data]].to_numpy()
    assert not at.exception and (values[~pd.isna(values)] > 0).all()  # nothing at 0 on a log axis


def test_prediction_answer_names_another_initialisation():
    at = open_page(w_init="zero_q")
    text = " ".join(m.value for m in at.markdown if "per head, against" in m.value)
    assert "the charts below use the initialisation you chose, W_q = 0" in text
    at = open_page()
    text = " ".join(m.value for m in at.markdown if "per head, against" in m.value)
    assert "initialisation you chose" not in text


# --- the short path and "Show me where it breaks" ------------------------------------------
def test_short_path_is_the_multi_head_question_and_its_charts():
    at = open_page(reveal=False, deeper="false")
    assert not at.exception
    assert [h.value for h in at.header] == ["1 · √d_k or √d_model?"]
    assert _n_charts(at) == 0 and not at.metric
    # the deeper sections' controls are drawn with their sections, not before them
    assert not [w for w in at.number_input if w.key in ("d_q_in", "d_kv_in", "d_proj")]
    assert not [w for w in at.radio if w.key == "w_init"]
    at.button(key="which_d_std_skip").click().run()
    assert _n_charts(at) == 2 and len(at.metric) == 4


def test_the_initialisation_of_a_link_holds_while_go_deeper_is_closed():
    # chosen in section 3; sections 1 and 2 draw with it (σ_w = 1: the logits' std is
    # d_model times too large, whatever the divisor)
    closed = open_page(w_init="one", deeper="false")
    assert not [w for w in closed.radio if w.key == "w_init"]
    bars = bars_frame(chart_data(closed)[MH_STD]).set_index("label")
    assert bars["std"].iloc[0] == pytest.approx(512, rel=0.1)
    opened = open_page(w_init="one")
    assert opened.radio(key="w_init").value == "one"
    assert chart_data(opened)[MH_STD]["datasets"] == chart_data(closed)[MH_STD]["datasets"]


def test_show_me_where_it_breaks():
    at = open_page()
    at.button(key="break_it").click().run()
    assert not at.exception and not warnings(at)
    assert at.number_input(key="d_model").value == 4096
    assert at.selectbox(key="n_heads").value == "64"
    assert at.radio(key="head_divisor").value == "d_model"
    metric = {m.label: m for m in at.metric}
    std = float(next(m.value for label, m in metric.items() if label.startswith("Logit std")))
    assert std == pytest.approx(1 / 8, rel=0.1)  # √d_model = 8 √d_k: eight times too small
    entropy = float(next(m.value for label, m in metric.items() if label.startswith("Entropy")))
    assert entropy > 0.99 * math.log(64)  # almost uniform attention over the 64 tokens


def test_value_labels_sit_above_the_heads_dots():
    bars = bars_frame(chart_data(open_page())[MH_STD])
    assert (bars["top_std"] >= bars["std"]).all() and (bars["top_std"] >= bars["theory_std"]).all()


def test_a_new_d_model_sends_the_per_head_charts_spec_unchanged():
    """The per-head charts are drawn with ``swap_data``: a new d_model (and another
    highlighted divisor) sends the same spec, byte for byte, so the browser updates their
    data in place instead of embedding them anew; their data is the new one."""
    runs = [
        open_page(d_model="512", n_heads="8"),
        open_page(d_model="768", n_heads="8", head_divisor="d_model"),
    ]
    protos = [[c.proto for c in at.get("vega_lite_chart")] for at in runs]
    for chart in (MH_STD, MH_ENTROPY):
        assert_swapped_in_place(protos[0][chart], protos[1][chart])
    bars = [
        bars_frame({"datasets": {d.name: d.data.data for d in p[MH_STD].datasets}}) for p in protos
    ]
    assert list(bars[0]["selected"]) == [True, False, False]
    assert list(bars[1]["selected"]) == [False, True, False]
    assert bars[1]["label"][1].endswith(f"÷{math.sqrt(768):.3g}")


def test_the_choices_the_app_writes_send_their_value_every_run():
    """n_heads and the divisor are written to the URL by the app (``labelled``): each run
    sends their value, not only the run that set it, so a select box or radio the
    browser draws anew shows it instead of its first option (n_heads became 1 after a
    lock-in in a room on a phone, 3 of 8 tries)."""
    at = open_page(reveal=False)
    for _ in range(3):  # the first run, then reruns that change nothing
        assert at.selectbox(key="n_heads").proto.set_value
        assert at.selectbox(key="n_heads").value == "8"
        assert at.radio(key="head_divisor").proto.set_value
        at.run()
