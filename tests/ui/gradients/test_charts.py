"""Gradients page: chart builders, the charts' frames and the cached data behind them."""

import math

import numpy as np
import pandas as pd
import pytest

from core.gradients import gap_curve
from tests.ui.helpers import legend_columns_at
from ui.common import axes
from ui.common import charts as common_charts
from ui.common import data as common_data
from ui.common.charts import MARKER_DATASET, NARROW_CHART_PX, ChartText, d_marker
from ui.gradients import charts, data, frames
from ui.story import charts as story_charts
from ui.story import data as story_data
from ui.story import frames as story_frames


def _layers(spec):
    return spec.get("layer", [spec])


SWEEP_TIPS = {"series": "scaling", "value": "median J", "lo": "q10", "hi": "q90", "mean": "mean J"}
SWEEP_TEXT = ChartText.of(
    title="T", subtitle="S", x="d", y="J", alt="alt", mean_label="mean", tips=SWEEP_TIPS
)
LABELS = ((0.0, "none"), (0.5, "1/√d"), (1.0, "1/d"))


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
    fixed = story_data.gradient_sweep_frames(10, 0.5, 0)
    custom = story_data.gradient_sweep_frames(10, 0.75, 0)
    n_d = len(common_data.SWEEP_D)
    assert len(fixed["jac"]) == 3 * n_d and len(custom["jac"]) == 4 * n_d
    # the fixed exponents come from the same cached call
    pd.testing.assert_frame_equal(fixed["jac"], custom["jac"].iloc[: 3 * n_d])
    for name in ("jac", "grad"):
        df = custom[name]
        assert (df[["value", "lo", "hi", "mean"]] >= story_data.GRADIENT_LOG_FLOOR).all().all()
        assert (df.lo <= df.value).all() and (df.value <= df.hi).all()
    dead = custom["dead"]
    assert dead.value.between(0, 1).all() and (dead.lo <= dead.value).all()
    # ∂p/∂s = d_k^-α ‖J‖_F
    jac, grad = custom["jac"], custom["grad"]
    ok = jac.value > 1e-30
    assert np.allclose(grad.value[ok], (jac.d**-jac.alpha * jac.value)[ok], rtol=1e-12)


def test_gradient_at_current_d_k():
    at = story_data.gradient_at(1000, 10, 0.5, 0)
    assert list(at) == ["unscaled", "scaled"]
    assert all(list(stats) == list(story_data.GRADIENT_AT_FIELDS) for stats in at.values())
    assert at["unscaled"]["dead_fraction"] > 0.5
    assert at["scaled"]["dead_fraction"] == 0.0
    assert at["scaled"]["grad_fro_mean"] == pytest.approx(
        1000**-0.5 * at["scaled"]["jacobian_fro_mean"]
    )


def test_plain_numbers_match_the_frames_they_come_from():
    """The texts' numbers (cached, plain) are the charts' numbers."""
    cells, summary = data.jacobian_row(64, 10, 0.5, 0)
    assert data.jacobian_summary(64, 10, 0.5, 0) == (summary, cells.value.abs().max())
    _, stats, geo = data.query_grad_histogram(64, 10, 0.5, 0)
    assert data.query_grad_stats(64, 10, 0.5, 0) == (stats, geo)
    sweep = story_data.gradient_sweep(10, 0.75, 0).set_index(["alpha", "d"])
    quotes = data.jacobian_quotes(10, 0)
    assert set(quotes) == {(a, d) for a in (0.0, 0.5, 1.0) for d in data.QUOTED_D}
    for (a, d), q in quotes.items():
        assert q["mean"] == sweep.loc[(a, d), "jacobian_fro_mean"]
        assert q["median"] == sweep.loc[(a, d), "jacobian_fro_median"]
    # by d_k = 1024 the median row without scaling has collapsed; with 1/√d_k it has not
    assert quotes[0.0, 1024]["median"] < 1e-4 * quotes[0.5, 1024]["median"]
    assert quotes[0.5, 1024]["median"] > 0.1


def test_chart_frames_from_plain_values():
    cells, _ = data.jacobian_row(64, 10, 0.5, 0)
    heat = frames.heatmap(64, 10, 0.5, 0, "scaled")
    assert list(heat.columns) == ["i", "j", "value", "p_i", "p_j"] and len(heat) == 100
    assert heat.value.tolist() == cells[cells.which == "scaled"].value.tolist()
    names = (("fro", "F"), ("offdiag", "O"), ("exact", "E"), ("law", "L"))
    gap = frames.gap(10, None, names)
    assert set(gap.quantity) == {"F", "O"} and set(gap.kind) == {"E", "L"}
    assert len(gap) == len(data.gap_curves(10, None))
    sweep = story_frames.gradient_lines("jac", 10, 0.75, 0, (*LABELS, (0.75, "α = 0.75")))
    assert list(sweep.columns) == ["alpha", "d", "value", "lo", "hi", "mean", "series", "color"]
    assert sweep.groupby("alpha").series.first().to_dict() == {
        0.0: "none", 0.5: "1/√d", 1.0: "1/d", 0.75: "α = 0.75"
    }  # fmt: skip
    assert sweep.color.tolist() == [common_charts.alpha_color(a) for a in sweep.alpha]
    bins, _, _ = data.query_grad_histogram(64, 10, 0.5, 0)
    qgrad = frames.qgrad(64, 10, 0.5, 0, "unscaled")
    assert list(qgrad.columns) == ["x0", "x1", "share"]
    assert qgrad.share.sum() == pytest.approx(100.0)
    assert len(qgrad) == (bins.which == "unscaled").sum()


# --------------------------------------------------------------------------- builders


def test_jacobian_heatmap_shares_a_symmetric_diverging_scale():
    cells, _ = data.jacobian_row(64, 10, 0.5, 0)
    block = cells[cells.which == "scaled"].drop(columns="which")
    text = ChartText.of(
        title="T", subtitle="S", x="j", y="i", color="J", alt="alt",
        tips={"p_i": "weight pᵢ", "p_j": "weight pⱼ"},
    )  # fmt: skip
    spec = charts.jacobian_heatmap(block, text, domain_max=0.2).to_dict()
    assert spec["description"] == "alt"
    assert spec["title"] == {"text": "T", "subtitle": "S"}
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
    text = ChartText.of(
        title="T", x="g", y="size", alt="alt", fro="F", offdiag="O", exact="exact", law="law",
        point="g = {g}: p = {p}, F = {fro}", tips={"quantity": "quantity", "kind": "curve"},
    )  # fmt: skip
    inputs = (("gap", "Gap", 0.0, 30.0, 0.5, 6.0),)
    spec = charts.gap_explorer(df, text, n_keys=10, gap2=None, inputs=inputs).to_dict()
    lines, name_f, name_o, marker, dot_f, dot_o, values = _layers(spec)
    assert lines["encoding"]["y"]["scale"]["type"] == "log"
    assert lines["encoding"]["strokeDash"]["scale"]["range"] == [[1, 0], [6, 4]]
    assert lines["encoding"]["color"]["scale"]["domain"] == ["F", "O"]
    assert lines["encoding"]["strokeDash"]["scale"]["domain"] == ["exact", "law"]
    assert [t["title"] for t in lines["encoding"]["tooltip"]] == ["quantity", "curve", "g", "size"]
    # the slider's gap: a rule, a dot on each exact curve and a line of values, all
    # computed in the browser from the bound input (one, under the chart, at 6)
    (bound,) = spec["params"]
    assert bound["name"] == "gap" and bound["value"] == 6.0
    assert bound["bind"] == {"input": "range", "min": 0.0, "max": 30.0, "step": 0.5, "name": "Gap "}
    assert marker["mark"]["type"] == "rule" and marker["encoding"]["x"]["field"] == "g"
    point = charts.gap_point(10, None)
    calc = {t["as"]: t["calculate"] for t in marker["transform"]}
    assert calc == {"g": "gap.gap", **{k: e.vega for k, e in point.items()}}
    assert [d["encoding"]["y"]["field"] for d in (dot_f, dot_o)] == ["fro", "offdiag"]
    line = values["transform"][-1]["calculate"]
    assert line.startswith('"g = " + format(datum.g, ') and "datum.fro" in line
    # the rule stops under the line of values, which may run across it on a phone
    top, size = values["encoding"]["y"]["value"], values["mark"]["fontSize"]
    assert marker["encoding"]["y"] == {"value": charts.VALUES_LINE_PX}
    assert charts.VALUES_LINE_PX >= top + size + 2
    assert marker["encoding"]["y2"] == {"value": {"expr": "height"}}
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
    assert sum(_rows(spec)) == len(df) + 2 + 1  # the curves, the two names, the one datum


@pytest.mark.parametrize("n_keys", [2, 3, 10, 512, 65536])
@pytest.mark.parametrize("gap2", [None, 0.0, 1.0, 8.0, 200.0])
def test_the_browsers_gap_point_is_core_gap_curve(n_keys, gap2):
    """The gap explorer's closed form in Vega (:func:`charts.gap_point`) against
    core.gradients.gap_curve, over the slider's range and beyond (to g = 200, where
    e^(−g) is 1e−87): the same formula in the same order of operations in float64, so
    agreement to 1e−12 relative (a few ulps of each operation's rounding)."""
    g = np.concatenate([np.linspace(0.0, 30.0, 61), [0.1, 45.5, 200.0]])
    want = gap_curve(g, n_keys, gap2)
    for name, expr in charts.gap_point(n_keys, gap2).items():
        np.testing.assert_allclose(expr.evaluate({"gap": g}), want[name], rtol=1e-12, atol=0)


def test_median_mean_sweep_adds_dashed_means_to_sweep_lines():
    df = story_data.gradient_sweep_frames(10, 0.5, 0)["jac"]
    df = df.assign(series=df.alpha.astype(str), color=df.alpha.map(common_charts.alpha_color))
    chart = charts.median_mean_sweep(df, SWEEP_TEXT)
    spec = chart.to_dict()
    assert spec["title"] == {"text": "T", "subtitle": "S"}
    layers = _layers(spec)
    band, line, points, means = layers  # the d_k marker is workshop.chart's to add
    assert points["mark"]["type"] == "point" and points["encoding"]["shape"]["field"] == "series"
    assert band["mark"]["type"] == "area" and band["encoding"]["y"]["field"] == "lo"
    assert line["encoding"]["y"]["field"] == "value"
    assert line["encoding"]["y"]["scale"]["type"] == "log"
    assert means["encoding"]["y"]["field"] == "mean"
    assert means["encoding"]["strokeDash"]["scale"]["range"] == [[6, 4]]
    assert [t["title"] for t in means["encoding"]["tooltip"]] == ["scaling", "dₖ", "mean J"]
    assert means["encoding"]["strokeDash"]["scale"]["domain"] == ["mean"]
    assert line["encoding"]["y"]["axis"]["labelExpr"] == axes.EXP_LABEL
    assert (
        means["encoding"]["color"]["scale"]["range"] == line["encoding"]["color"]["scale"]["range"]
    )


def test_log_histogram_chart():
    bins, stats, geo = data.query_grad_histogram(64, 10, 0.5, 0)
    b = bins[bins.which == "scaled"].drop(columns="which")
    s = stats["scaled"]
    text = ChartText.of(
        title="T", subtitle="S", x="log10", y="%", alt="alt",
        tips={"bin_from": "from", "bin_to": "to", "median": "median"},
    )  # fmt: skip
    spec = charts.log_histogram(
        b,
        text,
        median=s["median"],
        median_log10=s["median_log10"],
        x_domain=(geo["lo"], geo["hi"]),
        color=common_charts.COLORS["sqrt"],
    ).to_dict()
    bars, rule = _layers(spec)
    assert [tip.get("title") for tip in bars["encoding"]["tooltip"]] == ["from", "to", "%"]
    assert rule["encoding"]["tooltip"][0]["title"] == "median"
    assert bars["mark"]["color"] == common_charts.COLORS["sqrt"]
    assert bars["mark"]["type"] == "bar" and bars["encoding"]["x2"]["field"] == "x1"
    assert bars["encoding"]["y2"] == {"datum": 0}
    assert bars["encoding"]["x"]["scale"]["domain"] == [geo["lo"], geo["hi"]]
    assert rule["encoding"]["x"]["field"] == "x"
    assert _rows(spec) == [1, len(b)]


def test_gradient_builders_reject_too_many_rows():
    big = pd.DataFrame({"i": range(6000), "j": 1, "value": 0.0, "p_i": 0.1, "p_j": 0.1})
    text = ChartText.of(title="", x="", y="", color="", alt="", tips={"p_i": "", "p_j": ""})
    with pytest.raises(ValueError, match="at most"):
        charts.jacobian_heatmap(big, text, domain_max=1)


def test_median_mean_sweep_legend_is_opaque_and_two_column():
    df = story_data.gradient_sweep_frames(10, 0.5, 0)["grad"]
    df = df.assign(series=df.alpha.astype(str), color=df.alpha.map(common_charts.alpha_color))
    layers = _layers(charts.median_mean_sweep(df, SWEEP_TEXT).to_dict())
    legends = [
        layer["encoding"]["color"]["legend"]
        for layer in layers
        if "legend" in layer.get("encoding", {}).get("color", {})
    ]
    assert legends and all(leg["symbolOpacity"] == 1 for leg in legends)
    assert all(
        legend_columns_at(leg, NARROW_CHART_PX) == 2 for leg in legends
    )  # two columns fit a half-width chart


@pytest.mark.parametrize("name", ["jac", "dead"])
def test_each_layer_names_its_dataset_when_the_marker_joins(name):
    """The layers that share the sweep's frame keep it on each layer (the marker's layer
    has its own data): with ``+ d_marker()``, as workshop.chart draws it, the spec has
    no top-level data and the marker is the last layer."""
    df = story_frames.gradient_lines(name, 10, 0.5, 0, LABELS)
    text = SWEEP_TEXT if name == "jac" else ChartText.of(
        title="T", x="d", y="share", alt="alt", tips={"series": "s", "lo": "lo", "hi": "hi"}
    )  # fmt: skip
    builder = charts.median_mean_sweep if name == "jac" else story_charts.dead_share_lines
    spec = (builder(df, text) + d_marker()).to_dict()
    assert "data" not in spec
    names = [layer["data"]["name"] for layer in spec["layer"]]
    assert names[-1] == MARKER_DATASET and spec["layer"][-1]["mark"]["type"] == "rule"
    assert len(set(names[:-1])) == 1  # one frame, one dataset
    assert _rows(spec) == [len(df)]


def test_dead_share_lines():
    df = story_frames.gradient_lines("dead", 10, 0.5, 0, LABELS)
    text = ChartText.of(
        title="T", x="d", y="share", alt="alt", tips={"series": "s", "lo": "lo", "hi": "hi"}
    )
    spec = story_charts.dead_share_lines(df, text).to_dict()
    _band, line, points = _layers(spec)
    # 1/√d_k and 1/d_k both lie at 0: hollow points of their own shape and size, one ring
    # around the other, told apart by more than their hue
    assert points["mark"]["filled"] is False and "point" not in line["mark"]
    shapes = dict(zip(points["encoding"]["shape"]["scale"]["domain"],
                      points["encoding"]["shape"]["scale"]["range"], strict=True))  # fmt: skip
    sizes = dict(zip(points["encoding"]["size"]["scale"]["domain"],
                     points["encoding"]["size"]["scale"]["range"], strict=True))  # fmt: skip
    half, one = dict(LABELS)[0.5], dict(LABELS)[1.0]
    assert shapes[half] != shapes[one] and sizes[half] > 2 * sizes[one]
    assert points["encoding"]["shape"]["legend"] == line["encoding"]["color"]["legend"]
    assert line["encoding"]["y"]["scale"]["domain"] == [0, 1]
    assert [t["title"] for t in line["encoding"]["tooltip"]] == ["s", "dₖ", "share", "lo", "hi"]
    assert spec["height"] == 360 and spec["description"] == "alt"
    legend = line["encoding"]["color"]["legend"]
    assert legend_columns_at(legend, NARROW_CHART_PX) == 2
