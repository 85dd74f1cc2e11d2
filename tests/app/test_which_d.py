"""The "Which d?" page through AppTest, in both languages."""

from __future__ import annotations

import io
import re

import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from tests.app.helpers import ROOT, TIMEOUT, chart_data, warnings

CJK = re.compile(r"[\u4e00-\u9fff]")
SCRIPT = "app_pages/which-d.py"
N_CHARTS = 5  # multi-head std + entropy, cross-attention std + entropy, QK LayerNorm
MH_STD, MH_ENTROPY, CROSS_STD, CROSS_ENTROPY, QK = range(N_CHARTS)


def open_page(**params: str | list[str]) -> AppTest:
    """Deep-link the page. ``run_page`` switches before the first run, which finds pages
    by file name; this page's url_path (which-d) differs from its file name (which_d.py),
    so run once, then switch. The URL seeds widgets when they are first made, which is on
    the second run; the first (home) run notes the params as foreign to home, once."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(SCRIPT)
    at.run()
    return at


def frames(chart: dict) -> list[pd.DataFrame]:
    """The chart's datasets decoded from Arrow."""
    return [pa.ipc.open_stream(io.BytesIO(raw)).read_pandas() for raw in chart["datasets"].values()]


def bars_frame(chart: dict) -> pd.DataFrame:
    """The per-divisor bars of a divisor_bars chart (the dataset with a ``selected`` column)."""
    return next(f for f in frames(chart) if "selected" in f.columns)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_runs_with_every_chart(lang):
    at = open_page(lang=lang)
    assert not at.exception
    assert not warnings(at)
    assert bool(CJK.search(at.title[0].value)) == (lang == "zh")
    charts = chart_data(at)
    assert len(charts) == N_CHARTS
    for chart in charts:
        assert chart["spec"]["description"]
        assert bool(CJK.search(chart["spec"]["description"])) == (lang == "zh")
    assert len(at.latex) == 7
    assert len(at.metric) == 13
    assert at.number_input(key="d_model").value == 512
    assert at.selectbox(key="n_heads").value == "8"
    assert at.radio(key="divisor").value == "d_k"
    assert at.radio(key="w_init").value == "fan_in"
    # the misconception is stated on the page
    assert "d_model" in at.error[0].value


def test_default_numbers_match_the_reference():
    """d_model 512, 8 heads: d_k = 64, logit std ≈ 1 (÷8), 0.354 (÷√512), 8 (none)."""
    at = open_page()
    bars = bars_frame(chart_data(at)[MH_STD]).set_index("label")
    assert list(bars.theory_std) == pytest.approx([1.0, 8**-0.5, 8.0])
    assert list(bars["std"]) == pytest.approx([1.0, 8**-0.5, 8.0], rel=0.05)
    metric = {m.label: m for m in at.metric}
    ratio = metric["std(÷√d_k) / std(÷√d_model)"]
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
        divisor="d_model",
        w_init="one",
        d_q_in="768",
        d_kv_in="256",
        d_proj="32",
        x_scale="8",
    )
    assert not at.exception and not warnings(at)
    assert at.number_input(key="d_model").value == 1024
    assert at.selectbox(key="n_heads").value == "16"
    assert at.radio(key="divisor").value == "d_model"
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
    at = open_page(d_model="512", n_heads="7")
    assert not at.exception
    found = [w for w in warnings(at) if "`n_heads`" in w]
    assert found and "divisors of d_model = 512" in found[0]
    assert at.selectbox(key="n_heads").value == "8"
    assert len(chart_data(at)) == N_CHARTS


def test_changing_d_model_moves_n_heads_to_the_nearest_divisor():
    at = open_page()
    at.number_input(key="d_model").set_value(513).run()
    assert not at.exception
    assert at.selectbox(key="n_heads").value == "9"  # 513 = 3³·19: 9 is nearest to 8
    assert any("513" in i.value for i in at.info)
    at.number_input(key="d_model").set_value(1026).run()
    assert at.selectbox(key="n_heads").value == "9"  # still divides: kept, no notice
    assert not at.info


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
    at.radio(key="divisor").set_value("none").run()
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


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"d_model": "abc"}, "d_model"),
        ({"d_model": "5000"}, "d_model"),
        ({"d_model": "32"}, "d_model"),
        ({"n_heads": "abc"}, "n_heads"),
        ({"n_heads": ["8", "16"]}, "n_heads"),
        ({"divisor": "d_v"}, "divisor"),
        ({"w_init": "xavier"}, "w_init"),
        ({"d_q_in": "0"}, "d_q_in"),
        ({"d_kv_in": "1.5"}, "d_kv_in"),
        ({"d_proj": "2000"}, "d_proj"),
        ({"x_scale": "3"}, "x_scale"),
    ],
)
def test_malformed_params_warn_and_fall_back(params, name):
    at = open_page(**params)
    assert not at.exception
    found = [w for w in warnings(at) if f"`{name}`" in w]
    assert found, warnings(at)
    defaults = {
        "d_model": (at.number_input, 512),
        "n_heads": (at.selectbox, "8"),
        "divisor": (at.radio, "d_k"),
        "w_init": (at.radio, "fan_in"),
        "d_q_in": (at.number_input, 512),
        "d_kv_in": (at.number_input, 1024),
        "d_proj": (at.number_input, 64),
        "x_scale": (at.select_slider, "1"),
    }
    widget, default = defaults[name]
    assert widget(key=name).value == default
    assert len(chart_data(at)) == N_CHARTS


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
