"""Builders and frames of the √d_k-vs-d_k page: valid Vega-Lite, encodings, row counts."""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd
import pytest

from core.experiments import saturation_sweep
from ui import charts
from ui import sqrt_vs_d as page

D = [int(d) for d in 2 ** np.arange(13)]


def _sweep(alphas=(0.0, 0.5, 1.0), rho=0.5, n_keys=10):
    """The frame ui.cache.saturation_sweep returns, built without the cache."""
    out = saturation_sweep(
        D, n_keys, list(alphas), rng=np.random.default_rng(0), n_rows=2_000, rho=rho
    )
    return pd.DataFrame({k: np.asarray(v).ravel() for k, v in out.items()})


def _layers(spec):
    return spec.get("layer", [spec])


def test_logit_scale_chart():
    df = page.logit_frame(_sweep(), "std", 0.5)
    assert len(df) == 39  # 3 α × 13 d_k
    spec = charts.logit_scale(
        df,
        current_d=64,
        title="T",
        subtitle="S",
        x_title="d",
        y_title="std",
        theory_title="theory",
        description="alt",
    ).to_dict()
    assert spec["description"] == "alt"
    assert spec["title"] == {"text": "T", "subtitle": "S"}
    theory, bars, points, marker = _layers(spec)
    assert [theory["mark"]["type"], bars["mark"]["type"], points["mark"]["type"]] == [
        "line",
        "rule",
        "point",
    ]
    assert theory["encoding"]["y"]["field"] == "theory"
    for layer in (theory, points):
        assert layer["encoding"]["x"]["scale"] == {"type": "log", "base": 2}
        assert layer["encoding"]["y"]["scale"] == {"type": "log"}
    colour = points["encoding"]["color"]["scale"]
    assert colour["range"] == [charts.alpha_color(a) for a in (0.0, 0.5, 1.0)]
    assert marker["encoding"]["x"]["field"] == "d"


def test_logit_frames_follow_theory():
    sweep = _sweep()
    std = page.logit_frame(sweep, "std", 0.5)
    np.testing.assert_allclose(std["theory"], std["d"] ** (0.5 - std["alpha"]))
    mean = page.logit_frame(sweep, "mean", 0.5)
    np.testing.assert_allclose(mean["theory"], 0.5 * mean["d"] ** (1 - mean["alpha"]))
    # error bars stay positive on the log axis
    assert (mean["lo"] > 0).all() and (mean["lo"] <= mean["value"]).all()


def test_lines_frame_and_log_floor():
    sweep = _sweep()
    ent = page.lines(sweep, "entropy_mean", divide_by=math.log(10))
    assert set(ent.columns) >= {"d", "series", "color", "value", "lo", "hi"}
    assert ent["value"].between(0, 1.0001).all()
    grad = page.lines(sweep, "grad_fro_mean", log=True)
    assert (grad["value"] > page.LOG_FLOOR).all()
    assert len(grad) < len(ent)  # α = 0 at ρ = 0.5 underflows at large d_k and is dropped
    assert (grad["lo"] >= grad["value"] / 10 - 1e-300).all()
    argmax = page.argmax_line(sweep)
    assert argmax["series"].nunique() == 1 and len(argmax) == 13


def test_in_range():
    sweep = _sweep()
    part = page.in_range(sweep, 16, 256)
    assert sorted(part["d"].unique()) == [16, 32, 64, 128, 256]


def test_references():
    ref = page.references(10, 0.5, limit=True)
    assert ref["y"].tolist() == [pytest.approx(0.154828, abs=1e-6)]
    assert page.references(10, 0.0, limit=True)["y"].tolist() == [0.1]
    assert page.references(10, 0.5, limit=False)["y"].tolist() == [0.1]


def test_alpha_heatmap():
    alphas = [round(0.05 * i, 2) for i in range(31)]
    d, a = np.meshgrid(D, alphas)
    df = pd.DataFrame(
        {"d": d.ravel(), "alpha": a.ravel(), "share": 0.5, "share_se": 0.01}
    )  # 13 × 31 cells
    rules = page.heatmap_rules()
    assert rules["alpha"].tolist() == [0.5, 1.0]
    spec = charts.alpha_heatmap(
        df, rules, title="T", x_title="d", y_title="α", color_title="H", description="alt"
    ).to_dict()
    rect, lines = _layers(spec)
    assert rect["mark"]["type"] == "rect" and lines["mark"]["type"] == "rule"
    assert rect["encoding"]["x"]["type"] == "ordinal"
    assert rect["encoding"]["color"]["scale"]["domain"] == [0, 1]
    assert rect["encoding"]["y"]["scale"]["domain"] == [pytest.approx(-0.025), pytest.approx(1.525)]
    assert lines["encoding"]["color"]["scale"]["range"] == [
        charts.COLORS["sqrt"],
        charts.COLORS["linear"],
    ]
    sizes = sorted(len(v) for v in spec["datasets"].values())
    assert sizes == [2, 403]


def test_legend_columns_and_rows_limit():
    df = page.lines(_sweep(), "max_weight_mean")
    chart = charts.sweep_lines(
        df, current_d=64, title="T", x_title="d", y_title="p", description="a"
    )
    spec = page.legend_columns(chart, 2).to_dict()
    legends = [
        layer["encoding"]["color"].get("legend")
        for layer in _layers(spec)
        if "color" in layer.get("encoding", {}) and "field" in layer["encoding"]["color"]
    ]
    assert legends and all(legend["columns"] == 2 for legend in legends)
    big = pd.concat([page.logit_frame(_sweep(), "std", 0.5)] * 200, ignore_index=True)
    with pytest.raises(ValueError, match="at most 5000 rows"):
        charts.logit_scale(
            big,
            current_d=64,
            title="",
            subtitle="",
            x_title="",
            y_title="",
            theory_title="",
            description="",
        )
    assert isinstance(chart, alt.LayerChart)


def test_logit_latex_substitutes_live_numbers():
    text = page.logit_latex(64, 0.5, 0.5)
    assert r"d_k = 64,\ \alpha = 0.5,\ \rho = 0.5" in text
    assert "= 1," in text and "= 4," in text and text.endswith("= 4")
