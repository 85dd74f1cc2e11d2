"""Gradients page through AppTest, in both languages."""

import re

import pyarrow as pa
import pytest

from tests.app.helpers import chart_data, run_page, warnings

PAGE = "app_pages/gradients.py"
CJK = re.compile(r"[\u4e00-\u9fff]")
N_CHARTS = 8  # 2 heatmaps, gap explorer, 2 sweeps, dead rows, 2 histograms
HEAT_U, HEAT_S, GAP, JAC, GRAD, DEAD, HIST_U, HIST_S = range(N_CHARTS)


def _largest_dataset(chart: dict) -> int:
    """Rows of the chart's largest dataset (datasets travel as Arrow IPC streams)."""
    return max(pa.ipc.open_stream(v).read_all().num_rows for v in chart["datasets"].values())


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_gradients_runs_with_every_chart(lang):
    at = run_page(PAGE, lang=lang)
    assert not at.exception
    assert not warnings(at)
    assert bool(CJK.search(at.title[0].value)) == (lang == "zh")
    charts = chart_data(at)
    assert len(charts) == N_CHARTS
    for chart in charts:
        assert chart["spec"]["description"]
        assert bool(CJK.search(chart["spec"]["description"])) == (lang == "zh")
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
    before = chart_data(at)[GAP]["raw"]
    at.slider(key="gap").set_value(12.0).run()
    moved = chart_data(at)[GAP]["raw"]
    assert moved != before
    at.select_slider(key="gap2").set_value("4").run()
    assert not at.exception
    assert chart_data(at)[GAP]["raw"] != moved
    assert any(r"g = 12:" in x.value for x in at.latex)


def test_query_params_set_the_controls():
    at = run_page(PAGE, d_k="256", n_keys="20", alpha="1.0", gap="10.5", gap2="2")
    assert not at.exception and not warnings(at)
    assert at.number_input(key="d_k").value == 256
    assert at.number_input(key="n_keys").value == 20
    assert at.slider(key="alpha").value == 1.0
    assert at.slider(key="gap").value == 10.5
    assert at.select_slider(key="gap2").value == "2"
    assert "n_keys = 20" in chart_data(at)[GAP]["spec"]["title"]


@pytest.mark.parametrize(
    ("params", "name", "default"),
    [
        ({"d_k": "abc"}, "d_k", 64),
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
    at = run_page(PAGE, **params)
    assert not at.exception
    assert [w for w in warnings(at) if f"`{name}`" in w], warnings(at)
    widget = {"d_k": at.number_input, "n_keys": at.number_input, "gap2": at.select_slider}.get(
        name, at.slider
    )
    assert widget(key=name).value == default
    assert len(at.get("vega_lite_chart")) == N_CHARTS


def test_same_seed_same_pictures_and_new_seed_new_pictures():
    a = chart_data(run_page(PAGE, seed="7"))
    b = chart_data(run_page(PAGE, seed="7"))
    c = chart_data(run_page(PAGE, seed="8"))
    assert [x["datasets"] for x in a] == [x["datasets"] for x in b]
    assert a[HEAT_U]["datasets"] != c[HEAT_U]["datasets"]
    assert a[HIST_U]["datasets"] != c[HIST_U]["datasets"]
    assert a[GAP]["datasets"] == c[GAP]["datasets"]  # deterministic
