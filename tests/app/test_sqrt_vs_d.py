"""The √d_k-vs-d_k page through AppTest, in both languages."""

from __future__ import annotations

import re

import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

import core.experiments
from tests.app.helpers import ROOT, TIMEOUT, chart_data, warnings

SCRIPT = "app_pages/sqrt-vs-d.py"
CJK = re.compile(r"[\u4e00-\u9fff]")


def open_page(**params: str | list[str]) -> AppTest:
    """Deep-link the page. Its url_path (sqrt-vs-d) differs from its file name, so the
    app runs once before switching (AppTest matches pages by file name before a run)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(SCRIPT)
    at.run()
    return at


def _frame(arrow: bytes) -> pd.DataFrame:
    return pa.ipc.open_stream(arrow).read_all().to_pandas()


def _by_title(at: AppTest) -> dict[str, dict]:
    out = {}
    for chart in chart_data(at):
        title = chart["spec"].get("title")
        out[title["text"] if isinstance(title, dict) else title] = chart
    return out


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("rho", "n_charts"), [("0.0", 7), ("0.5", 8)])
def test_runs_in_both_languages_with_every_chart(lang, rho, n_charts):
    at = open_page(lang=lang, rho=rho)
    assert not at.exception
    assert not warnings(at)
    assert bool(CJK.search(at.title[0].value)) == (lang == "zh")
    charts = chart_data(at)
    assert len(charts) == n_charts
    for chart in charts:
        assert chart["spec"]["description"]
        assert bool(CJK.search(chart["spec"]["description"])) == (lang == "zh")
    assert len(at.dataframe) == 1
    assert len(at.latex) == 1
    assert len(at.info) == (2 if rho == "0.0" else 1)  # model note (+ "raise ρ" at ρ = 0)


def test_reference_figures_reach_the_table():
    """REFERENCE §1: n = 10, ρ = 0.5, 1/d ≈ 0.155; 1/√d ≈ 0.99 at d = 256."""
    at = open_page(rho="0.5", d_k="256", alpha="1.0")
    table = at.dataframe[0].value
    weights = dict(zip(table.iloc[:, 0], table.iloc[:, -1].astype(float), strict=True))
    assert weights["1/d_k (α = 1)"] == pytest.approx(0.155, abs=0.003)
    assert weights["1/√d_k (α = ½)"] == pytest.approx(0.99, abs=0.01)
    assert len(table) == 3  # α = 1 is a preset: no fourth row


def test_changing_each_control_changes_the_charts():
    at = open_page(rho="0.5")
    base = _by_title(at)
    moves = [
        ("alpha", lambda: at.slider(key="alpha").set_value(1.25)),
        ("rho", lambda: at.slider(key="rho").set_value(0.8)),
        ("n_keys", lambda: at.number_input(key="n_keys").set_value(32)),
        ("d_min", lambda: at.select_slider(key="d_min").set_value("16")),
        ("d_k", lambda: at.number_input(key="d_k").set_value(512)),
    ]
    for name, move in moves:
        move()
        at.run()
        assert not at.exception, name
        now = _by_title(at)
        changed = [k for k in now if k in base and now[k]["raw"] != base[k]["raw"]]
        assert changed, f"{name} changed no chart"
        base = now


def test_range_filters_the_points():
    at = open_page(d_min="16", d_max="256", alpha="0.5")
    weight = _by_title(at)["Weight given to the relevant key"]
    rows = max((_frame(b) for b in weight["datasets"].values()), key=len)
    assert sorted(rows["d"].unique()) == [16, 32, 64, 128, 256]
    assert len(rows) == 3 * 5


def test_swapped_range_is_reordered():
    at = open_page(d_min="1024", d_max="8")
    assert not at.exception
    assert any("8 to 1024" in c.value for c in at.caption)


def test_query_params_set_the_controls():
    at = open_page(d_k="256", d_min="4", d_max="1024", n_keys="16", alpha="1.25", rho="0.3")
    assert not at.exception and not warnings(at)
    assert at.number_input(key="d_k").value == 256
    assert at.select_slider(key="d_min").value == "4"
    assert at.select_slider(key="d_max").value == "1024"
    assert at.number_input(key="n_keys").value == 16
    assert at.slider(key="alpha").value == 1.25
    assert at.slider(key="rho").value == 0.3
    assert "d_k = 256 (n_keys = 16, ρ = 0.3)" in at.subheader[0].value


def test_rho_presets():
    at = open_page()
    at.button(key="rho_aligned_preset").click().run()
    assert at.slider(key="rho").value == 0.5
    assert len(chart_data(at)) == 8
    at.button(key="rho_init_preset").click().run()
    assert at.slider(key="rho").value == 0.0


@pytest.mark.parametrize(
    ("params", "name", "default"),
    [
        ({"d_min": "3"}, "d_min", "1"),
        ({"d_max": "abc"}, "d_max", "4096"),
        ({"n_keys": "1"}, "n_keys", 10),
        ({"n_keys": "600"}, "n_keys", 10),
        ({"rho": "1.0"}, "rho", 0.0),
        ({"rho": "x"}, "rho", 0.0),
        ({"alpha": "2"}, "alpha", 0.75),
    ],
)
def test_malformed_params_warn_and_fall_back(params, name, default):
    at = open_page(**params)
    assert not at.exception
    assert [w for w in warnings(at) if f"`{name}`" in w], warnings(at)
    widget = {"d_min": at.select_slider, "d_max": at.select_slider, "n_keys": at.number_input}
    assert widget.get(name, at.slider)(key=name).value == default
    assert len(chart_data(at)) == 7


def test_heatmap_is_cached_and_ignores_unrelated_controls(monkeypatch):
    calls = []
    real = core.experiments.saturation_sweep

    def counting(d_values, n_keys, alphas, **kwargs):
        calls.append(len(alphas))
        return real(d_values, n_keys, alphas, **kwargs)

    monkeypatch.setattr(core.experiments, "saturation_sweep", counting)
    at = open_page(seed="91", n_keys="12", rho="0.35")  # a fresh cache key
    heat = [c for c in calls if c == 31]
    assert heat == [31]
    for move in (
        lambda: at.slider(key="alpha").set_value(0.3),
        lambda: at.number_input(key="d_k").set_value(100),
        lambda: at.select_slider(key="d_max").set_value("512"),
    ):
        move()
        at.run()
        assert [c for c in calls if c == 31] == [31]
    at.slider(key="rho").set_value(0.4)
    at.run()
    assert [c for c in calls if c == 31] == [31, 31]
