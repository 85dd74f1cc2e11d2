"""Gradients page: chart builders and the cached frames behind them."""

import math

import numpy as np
import pandas as pd
import pytest

from tests.ui.helpers import legend_columns_at
from ui.common import axes
from ui.common import charts as common_charts
from ui.common import data as common_data
from ui.common.charts import NARROW_CHART_PX
from ui.gradients import charts, data


def _layers(spec):
    return spec.get("layer", [spec])


SWEEP_TIPS = {"series": "scaling", "value": "median J", "lo": "q10", "hi": "q90", "mean": "mean J"}


def _rows(spec) -> list[int]:
    return sorted(len(v) for v in spec.get("datasets", {}).values())


# --------------------------------------------------------------------------- cached frames


@pytest.mark.parametrize("n_keys", [2, 10, 512])
def test_jacobian_row_frame(n_keys):
    cells, summary = data.jacobian_row(256, n_keys, 0.5, 0)
    shown = min(n_keys, data.HEATMAP_MAX_KEYS)
    assert len(cells) == 2 * shown**2
    assert set(cells.which) == {"unscaled", "scaled"}
    assert cells.i.between(1, n_keys).all() and cells.j.between(1, n_keys).all()
    for which, c in (("unscaled", 1.0), ("scaled", 256**-0.5)):
        block = cells[cells.which == which]
        vals = block.pivot(index="i", columns="j", values="value").to_numpy()
        assert np.allclose(vals, vals.T)
        s = summary[which]
        assert s["c"] == pytest.approx(c)
        assert 0 < s["p_top"] <= 1 and s["rest"] == pytest.approx(1 - s["p_top"], abs=1e-12)
        assert np.abs(block.value).max() <= s["max_abs"] + 1e-15
        assert s["max_abs"] <= s["rest"] * (1 + 1e-12)  # every |J_ij| ≤ 1 − p_k
    if n_keys <= data.HEATMAP_MAX_KEYS:  # the whole row is shown: rows of J sum to 0
        sums = cells.groupby(["which", "i"]).value.sum()
        assert np.allclose(sums, 0.0, atol=1e-15)


@pytest.mark.parametrize("gap2", [None, 2.0])
def test_gap_curves_frame(gap2):
    df = data.gap_curves(10, gap2)
    n = len(data.GAP_GRID)
    assert set(df.quantity) == {"fro", "offdiag"} and set(df.kind) <= {"exact", "law"}
    assert (df[df.kind == "exact"].groupby("quantity").size() == n).all()
    assert (df.value > 0).all()
    assert len(df) <= 4 * n
    # a law is drawn only within 25 % of the exact value: with a runner-up at g₂ = 2 it
    # stays 29 % off however large g is, so it is not drawn at all
    exact = df[df.kind == "exact"].set_index(["quantity", "g"]).value
    law = df[df.kind == "law"].set_index(["quantity", "g"]).value
    assert ((law / exact.loc[law.index] - 1).abs() <= data.GAP_LAW_TOLERANCE).all()
    assert law.empty == (gap2 is not None)
    if gap2 is None:
        assert law.loc["fro"].index.min() > 0  # not drawn at g = 0, where no key leads
    point = data.gap_point(6.0, 10, gap2)
    exact = df[(df.kind == "exact") & (df.quantity == "fro") & (df.g == 6.0)].value.iloc[0]
    assert point["fro"] == pytest.approx(exact, rel=1e-12)


def test_query_grad_histogram_frame():
    bins, stats, geo = data.query_grad_histogram(1024, 10, 0.5, 0)
    for which in ("unscaled", "scaled"):
        b = bins[bins.which == which]
        assert b.share.sum() == pytest.approx(100.0)
        assert (b.x1 - b.x0).round(12).eq(data.HIST_BIN).all()
        assert b.x0.min() == geo["lo"] and b.x1.max() == geo["hi"]
        assert stats[which]["median_log10"] == pytest.approx(
            math.log10(stats[which]["median"]), abs=1e-9
        )
    assert geo["lo"] == int(geo["lo"]) and geo["hi"] - geo["lo"] <= data.HIST_SPAN + 1
    assert geo["n_rows"] == common_data.SWEEP_ROWS
    assert stats["unscaled"]["median"] < 1e-2 * stats["scaled"]["median"]
    assert stats["unscaled"]["clipped"] > 0  # some unscaled rows lie below 24 decades down


def test_gradient_sweep_frames_recompute_only_the_chosen_alpha():
    fixed = data.gradient_sweep_frames(10, 0.5, 0)
    custom = data.gradient_sweep_frames(10, 0.75, 0)
    n_d = len(common_data.SWEEP_D)
    assert len(fixed["jac"]) == 3 * n_d and len(custom["jac"]) == 4 * n_d
    # the fixed exponents come from the same cached call
    pd.testing.assert_frame_equal(fixed["jac"], custom["jac"].iloc[: 3 * n_d])
    for name in ("jac", "grad"):
        df = custom[name]
        assert (df[["value", "lo", "hi", "mean"]] >= data.LOG_FLOOR).all().all()
        assert (df.lo <= df.value).all() and (df.value <= df.hi).all()
    dead = custom["dead"]
    assert dead.value.between(0, 1).all() and (dead.lo <= dead.value).all()
    # ∂p/∂s = d_k^-α ‖J‖_F
    jac, grad = custom["jac"], custom["grad"]
    ok = jac.value > 1e-30
    assert np.allclose(grad.value[ok], (jac.d**-jac.alpha * jac.value)[ok], rtol=1e-12)


def test_gradient_at_current_d_k():
    table = data.gradient_at(1000, 10, 0.5, 0)
    assert list(table.columns) == ["unscaled", "scaled"]
    assert table.loc["dead_fraction", "unscaled"] > 0.5
    assert table.loc["dead_fraction", "scaled"] == 0.0
    assert table.loc["grad_fro_mean", "scaled"] == pytest.approx(
        1000**-0.5 * table.loc["jacobian_fro_mean", "scaled"]
    )


# --------------------------------------------------------------------------- builders


def test_jacobian_heatmap_shares_a_symmetric_diverging_scale():
    cells, _ = data.jacobian_row(64, 10, 0.5, 0)
    block = cells[cells.which == "scaled"].drop(columns="which")
    spec = charts.jacobian_heatmap(
        block,
        domain_max=0.2,
        title="T",
        subtitle="S",
        x_title="j",
        y_title="i",
        color_title="J",
        description="alt",
        tips={"p_i": "weight pᵢ", "p_j": "weight pⱼ"},
    ).to_dict()
    assert spec["description"] == "alt"
    assert spec["mark"]["type"] == "rect"
    color = spec["encoding"]["color"]
    assert color["field"] == "value"
    assert color["scale"]["domain"] == [-0.2, 0.2] and color["scale"]["domainMid"] == 0
    assert color["scale"]["scheme"] == charts.JACOBIAN_SCHEME
    tips = spec["encoding"]["tooltip"]
    assert [t["title"] for t in tips] == ["i", "j", "J", "weight pᵢ", "weight pⱼ"]
    assert [t.get("format") for t in tips] == [None, None, ".3e", ".4g", ".4g"]
    # no grid lines across the cells
    assert spec["encoding"]["x"]["axis"]["grid"] is False
    assert spec["encoding"]["y"]["axis"]["grid"] is False
    assert _rows(spec) == [100]


def test_gap_explorer_chart():
    df = data.gap_curves(10, None).replace(
        {"fro": "F", "offdiag": "O", "exact": "exact", "law": "law"}
    )
    spec = charts.gap_explorer(
        df,
        current_g=6.0,
        quantity_order=("F", "O"),
        kind_order=("exact", "law"),
        title="T",
        x_title="g",
        y_title="size",
        description="alt",
        tips={"quantity": "quantity", "kind": "curve"},
    ).to_dict()
    lines, name_f, name_o, marker = _layers(spec)
    assert lines["encoding"]["y"]["scale"]["type"] == "log"
    assert lines["encoding"]["strokeDash"]["scale"]["range"] == [[1, 0], [6, 4]]
    assert lines["encoding"]["color"]["scale"]["domain"] == ["F", "O"]
    assert marker["mark"]["type"] == "rule"
    # readable on a phone: the plot itself is GAP_PLOT_PX tall (title and legend add to
    # it), at least 200 px, with at least 4 labelled decades, all written 1e−N
    assert spec["height"] == charts.GAP_PLOT_PX >= 200
    assert spec["autosize"] == {"type": "fit-x", "contains": "padding"}
    axis = lines["encoding"]["y"]["axis"]
    assert axis["labelExpr"] == axes.EXP_LABEL
    assert len(axis["values"]) >= 4
    assert axis["values"] == [10.0**k for k in range(-14, 1, 2)]
    # the two curves apart: named in the theme's ink (no colour of their own: blue and
    # purple text miss 4.5:1 on one background), ‖J‖_F above its line, the entry below
    # its own, and one decade (16 px) or more apart everywhere
    assert "color" not in name_f["mark"] and "color" not in name_o["mark"]
    assert name_f["mark"]["dy"] < 0 < name_o["mark"]["dy"]
    exact = df[df.kind == "exact"].pivot(index="g", columns="quantity", values="value")
    assert (np.log10(exact["F"] / exact["O"]) >= 0.45).all()  # √(n − 1 + 3)/… ≥ 10^0.45
    assert sum(_rows(spec)) == len(df) + 2 + 1


def test_median_mean_sweep_adds_dashed_means_to_sweep_lines():
    df = data.gradient_sweep_frames(10, 0.5, 0)["jac"]
    df = df.assign(series=df.alpha.astype(str), color=df.alpha.map(common_charts.alpha_color))
    chart = charts.median_mean_sweep(
        df,
        title="T",
        subtitle="S",
        x_title="d",
        y_title="J",
        mean_label="mean",
        description="alt",
        tips=SWEEP_TIPS,
    )
    spec = chart.to_dict()
    assert spec["title"] == {"text": "T", "subtitle": "S"}
    layers = _layers(spec)
    band, line, _marker, means = layers
    assert band["mark"]["type"] == "area" and band["encoding"]["y"]["field"] == "lo"
    assert line["encoding"]["y"]["field"] == "value"
    assert line["encoding"]["y"]["scale"]["type"] == "log"
    assert means["encoding"]["y"]["field"] == "mean"
    assert means["encoding"]["strokeDash"]["scale"]["range"] == [[6, 4]]
    assert [t["title"] for t in means["encoding"]["tooltip"]] == ["scaling", "dₖ", "mean J"]
    assert line["encoding"]["y"]["axis"]["labelExpr"] == axes.EXP_LABEL
    assert (
        means["encoding"]["color"]["scale"]["range"] == line["encoding"]["color"]["scale"]["range"]
    )


def test_log_histogram_chart():
    bins, stats, geo = data.query_grad_histogram(64, 10, 0.5, 0)
    b = bins[bins.which == "scaled"].drop(columns="which")
    s = stats["scaled"]
    spec = charts.log_histogram(
        b,
        median=s["median"],
        median_log10=s["median_log10"],
        x_domain=(geo["lo"], geo["hi"]),
        color=common_charts.COLORS["sqrt"],
        title="T",
        subtitle="S",
        x_title="log10",
        y_title="%",
        median_title="median",
        description="alt",
        bin_titles=("from", "to"),
    ).to_dict()
    bars, rule = _layers(spec)
    assert [tip.get("title") for tip in bars["encoding"]["tooltip"][:2]] == ["from", "to"]
    assert bars["mark"]["type"] == "bar" and bars["encoding"]["x2"]["field"] == "x1"
    assert bars["encoding"]["y2"] == {"datum": 0}
    assert bars["encoding"]["x"]["scale"]["domain"] == [geo["lo"], geo["hi"]]
    assert rule["encoding"]["x"]["field"] == "x"
    assert _rows(spec) == [1, len(b)]


def test_gradient_builders_reject_too_many_rows():
    big = pd.DataFrame({"i": range(6000), "j": 1, "value": 0.0, "p_i": 0.1, "p_j": 0.1})
    with pytest.raises(ValueError, match="at most"):
        charts.jacobian_heatmap(
            big,
            domain_max=1,
            title="",
            subtitle="",
            x_title="",
            y_title="",
            color_title="",
            description="",
            tips={"p_i": "", "p_j": ""},
        )


def test_median_mean_sweep_legend_is_opaque_and_two_column():
    df = data.gradient_sweep_frames(10, 0.5, 0)["grad"]
    df = df.assign(series=df.alpha.astype(str), color=df.alpha.map(common_charts.alpha_color))
    kwargs = dict(
        title="T", subtitle="S", x_title="d", y_title="g", mean_label="mean",
        description="alt", tips=SWEEP_TIPS,
    )  # fmt: skip
    layers = _layers(charts.median_mean_sweep(df, **kwargs).to_dict())
    legends = [
        layer["encoding"]["color"]["legend"]
        for layer in layers
        if "legend" in layer.get("encoding", {}).get("color", {})
    ]
    assert legends and all(leg["symbolOpacity"] == 1 for leg in legends)
    assert all(
        legend_columns_at(leg, NARROW_CHART_PX) == 2 for leg in legends
    )  # two columns fit a half-width chart
