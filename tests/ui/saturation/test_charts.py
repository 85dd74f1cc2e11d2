"""Saturation page: chart builders (valid Vega-Lite, encodings, row counts) and frame helpers."""

import itertools

import numpy as np
import pandas as pd
import pytest

from ui.common import charts as common_charts
from ui.common.charts import ChartText
from ui.saturation import charts, data, frames
from ui.story import cards
from ui.story import data as story_data
from ui.story import frames as story_frames


def _layers(spec):
    return spec.get("layer", [spec])


def _dataset_sizes(spec):
    return sorted(len(v) for v in spec.get("datasets", {}).values())


INPUTS = (("score_1", "z₁", -20.0, 20.0, 0.125, 10.0), ("score_2", "z₂", -20.0, 20.0, 0.125, 5.0),
          ("divisor", "c", 0.25, 64.0, 0.25, 8.0))  # fmt: skip


def test_two_score_bars():
    df = frames.playground(("raw", "divided"), ("key 1", "key 2"))
    assert len(df) == 4
    text = ChartText.of(title="T", x="key", y="weight", alt="alt", tips={"version": "weights from"})
    spec = charts.two_score_bars(df, text, inputs=INPUTS).to_dict()
    assert spec["description"] == "alt"
    bars, labels = _layers(spec)
    assert bars["mark"]["type"] == "bar" and labels["mark"]["type"] == "text"
    assert bars["encoding"]["xOffset"]["field"] == "version"
    assert bars["encoding"]["y"]["scale"]["domain"] == [0, 1]
    assert bars["encoding"]["color"]["scale"]["domain"] == ["raw", "divided"]
    assert bars["encoding"]["color"]["scale"]["range"] == [
        common_charts.COLORS["unscaled"],
        common_charts.COLORS["sqrt"],
    ]
    # titled in the page's words, the weight to 4 significant figures (0.006693, not
    # 0.00669285092428)
    tips = bars["encoding"]["tooltip"]
    assert [(t["title"], t.get("format")) for t in tips] == [
        ("weights from", None),
        ("key", None),
        ("weight", ".4g"),
    ]
    # the weights are computed in the browser from the three sliders, shown z₁, z₂, c
    assert spec["transform"] == [{"calculate": charts.two_score_weight().vega, "as": "weight"}]
    assert [p["name"] for p in spec["params"]] == ["divisor", "score_2", "score_1"]
    assert {p["name"]: p["value"] for p in spec["params"]} == {
        "score_1": 10.0, "score_2": 5.0, "divisor": 8.0}  # fmt: skip


@pytest.mark.parametrize(("z1", "z2", "c"), [(10.0, 5.0, 8.0), (-3.5, 12.25, 0.25), (0.0, 0.0, 64.0),
                                             (20.0, -20.0, 1.0)])  # fmt: skip
def test_the_browsers_weights_are_softmax(z1, z2, c):
    """The chart's expression gives softmax's weights (core.softmax.softmax, the source of
    truth) at sample points; at the defaults the classic pair of docs/mathematics.md §3.1."""
    df = frames.playground(("raw", "divided"), ("key 1", "key 2"))
    got = charts.two_score_weight().evaluate(
        {"k": df["k"], "divided": df["divided"], "score_1": z1, "score_2": z2, "divisor": c}
    )
    raw, div = frames.two_scores(z1, z2, c)
    np.testing.assert_allclose(got, [raw[0], raw[1], div[0], div[1]], rtol=1e-12, atol=1e-300)
    if (z1, z2, c) == (10.0, 5.0, 8.0):
        assert got[0] == pytest.approx(0.9933071, abs=5e-8)
        assert got[2] == pytest.approx(0.6513549, abs=5e-8)


GAUSS_TEXT = ChartText.of(
    title="T", x="n", y="chance", alt="alt", yours="slider", scaled="σ = 1",
    point="σ = {s}, n = 10: {p}", tips={"curve": "logit std"},
)  # fmt: skip


def test_gaussian_overflow_lines():
    df = frames.gaussian_limit(("slider", "σ = 1"))
    assert len(df) == 2 * len(frames.GAUSS_KEYS)
    assert frames.GAUSS_KEYS[0] == 2 and frames.GAUSS_KEYS[-1] == 4096
    spec = charts.gaussian_overflow_lines(
        df, GAUSS_TEXT, n_keys=10, inputs=(("logit_std", "σ", 1.0, 16.0, 0.25, 8.0),)
    ).to_dict()
    lines, rule, dot, values = spec["layer"]
    assert lines["transform"] == [{"calculate": charts.gaussian_overflow().vega, "as": "chance"}]
    assert lines["encoding"]["y"]["scale"] == {"type": "log", "domain": [charts.GAUSS_FLOOR, 1]}
    assert lines["encoding"]["color"]["scale"]["domain"] == ["slider", "σ = 1"]
    assert [{"n": 10, "fixed_std": 0}] in spec["datasets"].values()
    assert rule["mark"]["type"] == "rule" and dot["encoding"]["y"]["field"] == "chance"
    assert "format(datum.chance, '.3~g')" in values["transform"][-1]["calculate"]
    assert [(p["name"], p["value"]) for p in spec["params"]] == [("logit_std", 8.0)]


@pytest.mark.parametrize("std", [1.0, 1.5, 2.0, 3.0, 4.0, 8.0, 16.0])
def test_the_browsers_gaussian_chance_is_the_core_one(std):
    """The chart's expression gives core.softmax.gaussian_overflow_chance (the source of
    truth) on every key count it draws, for both curves. Tolerance 2·10⁻⁶ relative: below
    n·Q = 10⁻⁶ the browser draws n·Q, whose relative error is (n − 1)·Q/2 < 5·10⁻⁷."""
    from core.softmax import gaussian_overflow_chance

    df = frames.gaussian_limit(("slider", "σ = 1"))
    got = charts.gaussian_overflow().evaluate(
        {"n": df["n"], "fixed_std": df["fixed_std"], "logit_std": std}
    )
    sigma = np.where(df["fixed_std"] > 0, df["fixed_std"], std)
    want = [
        gaussian_overflow_chance(int(n), std=float(s)) for n, s in zip(df["n"], sigma, strict=True)
    ]
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=0)
    # every chance drawn lies on the axis: above its floor, at most 1
    assert np.all(got >= charts.GAUSS_FLOOR) and np.all(got <= 1)
    if std == 1.0:  # 10 keys at σ = 1: the ~10⁻²⁷ usually quoted (docs/mathematics.md §5.2)
        assert gaussian_overflow_chance(10) == pytest.approx(7.0e-28, rel=0.01)


def test_weight_bars():
    df = pd.DataFrame(
        {"key": np.arange(1, 11), "score": np.arange(10.0), "logit": np.arange(10.0) / 8}
    )
    df["weight"] = np.exp(df.logit) / np.exp(df.logit).sum()
    spec = charts.weight_bars(
        df,
        ChartText.of(
            title="T", x="key", y="w", alt="a", tips={"score": "score q·k", "logit": "logit (scaled)"}
        ),
        color="#123456",
    ).to_dict()  # fmt: skip
    assert spec["mark"]["type"] == "bar" and spec["mark"]["color"] == "#123456"
    assert spec["encoding"]["y"]["scale"]["domain"] == [0, 1]  # the same axis on both sides
    assert spec["encoding"]["x"]["field"] == "key"
    tips = spec["encoding"]["tooltip"]
    assert [t["title"] for t in tips] == ["key", "score q·k", "logit (scaled)", "w"]
    assert _dataset_sizes(spec) == [10]


def _heat_frame(n=10, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(n), size=n)  # (n, n) rows sum to 1
    i, j = np.meshgrid(np.arange(1, n + 1), np.arange(1, n + 1), indexing="ij")
    is_max = j == (p.argmax(axis=1) + 1)[:, None]
    return pd.DataFrame(
        {
            "i": i.ravel(),
            "j": j.ravel(),
            "score": p.ravel(),
            "logit": p.ravel(),
            "weight": p.ravel(),
            "is_max": is_max.ravel(),
            "row_max": np.repeat(p.max(axis=1), n),
        }
    )


def test_attention_heatmap():
    spec = charts.attention_heatmap(
        _heat_frame(),
        ChartText.of(
            title="T", x="key j", y="query i", color="weight", alt="a",
            tips={"score": "score q·k", "logit": "logit", "row_max": "row max"},
        ),
    ).to_dict()  # fmt: skip
    cells, text = _layers(spec)
    assert cells["mark"]["type"] == "rect" and text["mark"]["type"] == "text"
    assert cells["encoding"]["color"]["scale"]["domain"] == [0, 1]
    assert cells["encoding"]["x"]["field"] == "j" and cells["encoding"]["y"]["field"] == "i"
    assert "row_max" in {t["field"] for t in cells["encoding"]["tooltip"]}
    assert "score q·k" in {t["title"] for t in cells["encoding"]["tooltip"]}
    # no grid lines across the cells
    assert cells["encoding"]["x"]["axis"]["grid"] is False
    assert cells["encoding"]["y"]["axis"]["grid"] is False
    # the text layer writes each row's max in its cell: one label per row
    assert text["transform"] == [{"filter": "datum.is_max"}]
    assert text["encoding"]["text"]["field"] == "weight"
    assert _dataset_sizes(spec) == [100]
    assert spec["height"] >= 300


def test_rowmax_histogram_and_frames():
    bins = np.linspace(0, 1, 51)
    hist = pd.concat(
        [
            pd.DataFrame(
                {"scaled": scaled, "x0": bins[:-1], "x1": bins[1:], "share": np.full(50, 0.02)}
            )
            for scaled in (False, True)
        ],
        ignore_index=True,
    )
    summary = {
        scaled: {"mean": m, "tensor_max_median": top}
        for scaled, m, top in ((False, 0.865, 0.9999995), (True, 0.32, 0.63))
    }
    bars, marks = frames.rowmax_frames(hist, summary, ("unscaled", "scaled"), ("mean", "top"))
    assert len(bars) == 100 and len(marks) == 4
    assert set(marks["value"]) == {0.865, 0.9999995, 0.32, 0.63}
    text = ChartText.of(
        title="T", x="row max", y="share", alt="a",
        tips={"series": "attention", "kind": "line", "value": "max", "bin_from": "from",
              "bin_to": "to"},
    )  # fmt: skip
    spec = charts.rowmax_histogram((bars, marks), text).to_dict()
    hist_layer, rules = _layers(spec)
    assert [t["title"] for t in rules["encoding"]["tooltip"]] == ["attention", "line", "max"]
    assert hist_layer["mark"]["type"] == "bar"
    assert hist_layer["encoding"]["x"]["scale"]["domain"] == [0, 1]
    assert hist_layer["encoding"]["y"]["scale"]["type"] == "sqrt"
    assert hist_layer["encoding"]["y2"] == {"datum": 0}
    assert rules["mark"]["type"] == "rule" and rules["encoding"]["strokeDash"]["field"] == "kind"
    colors = hist_layer["encoding"]["color"]["scale"]["range"]
    assert colors == [common_charts.COLORS["unscaled"], common_charts.COLORS["sqrt"]]
    assert _dataset_sizes(spec) == [4, 100]


def _overflow(alphas=(0.0, 0.5)):
    d = np.array([1, 16, 45, 54, 64, 4096])
    rows = []
    for dtype in ("float16", "float32"):
        for a in alphas:
            rate = (
                np.array([0.0, 0.05, 0.4, 0.5, 0.6, 1.0]) if (a, dtype) == (0.0, "float16") else 0
            )
            rows.append(
                pd.DataFrame({"dtype": dtype, "alpha": a, "d": d, "rate": rate, "se": 0.01})
            )
    return pd.concat(rows, ignore_index=True)


def test_overflow_lines_and_frame():
    df = frames.overflow_frame(_overflow(), _overflow((0.75,)))
    assert len(df) == 6 * 2 * 3
    assert (df.lo >= 0).all() and (df.hi <= 1).all()
    assert df.color.nunique() == 3  # one colour per scaling, dtype is the dash
    text = ChartText.of(
        title="T", x="d", y="share", alt="a",
        tips={"series": "scaling", "dtype": "number format", "lo": "low", "hi": "high"},
    )  # fmt: skip
    spec = (charts.overflow_lines(df, text) + common_charts.d_marker()).to_dict()
    band, line, points, marker = _layers(spec)
    assert [t["title"] for t in points["encoding"]["tooltip"]] == [
        "scaling",
        "number format",
        "dₖ",
        "share",
        "low",
        "high",
    ]
    assert [t["field"] for t in points["encoding"]["tooltip"][-2:]] == ["lo", "hi"]
    assert band["mark"]["type"] == "area" and band["encoding"]["y2"]["field"] == "hi"
    assert band["mark"]["tooltip"] is False  # the points show the band's edges
    assert points["mark"]["type"] == "point"  # points carry the tooltip
    assert line["encoding"]["strokeDash"]["field"] == "dtype"
    assert line["encoding"]["x"]["scale"] == {"type": "log", "base": 2}
    assert line["encoding"]["y"]["scale"]["domain"] == [0, 1]
    assert marker["mark"]["type"] == "rule"
    assert _dataset_sizes(spec) == [36]  # the marker's data comes as it is drawn
    assert marker["data"] == {"name": common_charts.MARKER_DATASET}


def test_half_crossing():
    df = _overflow()
    assert data.overflow_half(df, 0.0, "float16") == pytest.approx(54)
    assert data.overflow_half(df, 0.5, "float16") is None
    # log-linear interpolation between 45 (0.4) and 54 (0.5) when 54 is at 0.55
    df.loc[(df.alpha == 0) & (df.dtype == "float16") & (df.d == 54), "rate"] = 0.6
    mid = data.overflow_half(df, 0.0, "float16")
    assert mid == pytest.approx(2 ** (np.log2(45) + 0.5 * np.log2(54 / 45)))


def test_sweep_frame():
    d = [1, 2, 4]
    fixed = pd.concat(
        [
            pd.DataFrame({"d": d, "alpha": a, "entropy_mean": 1.0 + a, "entropy_se": 0.1})
            for a in (0.0, 0.5, 1.0)
        ],
        ignore_index=True,
    )
    mine = pd.DataFrame({"d": d, "alpha": 0.75, "entropy_mean": 2.5, "entropy_se": 0.05})
    df = story_frames.sweep_frame(fixed, mine, "entropy")
    assert len(df) == 12 and df.series.nunique() == 4
    assert df.loc[df.value == 2.5, "color"].unique().tolist() == [common_charts.COLORS["custom"]]
    np.testing.assert_allclose(df.hi - df.lo, 4 * np.r_[[0.1] * 9, [0.05] * 3])
    text = ChartText.of(
        title="T",
        x="d",
        y="H",
        alt="a",
        tips={"series": "s", "lo": "lo", "hi": "hi", "reference": "r"},
    )
    spec = common_charts.sweep_lines(df, text).to_dict()
    assert spec["description"] == "a"
    assert len(story_frames.sweep_frame(fixed, None, "entropy")) == 9


def test_fmt_weight():
    assert frames.fmt_weight(0.86464) == "0.8646"
    assert frames.fmt_weight(1.0) == "1.0000"
    assert frames.fmt_weight(1 - 4.5e-7) == "1 − 4.5e-07"


def test_saturation_builders_reject_too_many_rows():
    big = pd.DataFrame({"key": np.arange(6000), "score": 0.0, "logit": 0.0, "weight": 0.0})
    with pytest.raises(ValueError, match="at most"):
        charts.weight_bars(big, ChartText.of(title="", x="", y="", alt=""), color="#000")


@pytest.mark.parametrize(
    ("n_keys", "expected"),
    [
        (10, [(0.99, 1.0), (0.9, 0.99), (0.5, 0.9), (0.1, 0.5)]),
        (2, [(0.99, 1.0), (0.9, 0.99), (0.5, 0.9)]),  # 1/2 is already the 0.5 edge
        (3, [(0.99, 1.0), (0.9, 0.99), (0.5, 0.9), (1 / 3, 0.5)]),
    ],
)
def test_weight_bins_cover_uniform_to_one(n_keys, expected):
    bins = cards.weight_bins(n_keys)
    assert np.array(bins) == pytest.approx(np.array(expected))
    assert bins[0][1] == 1.0 and bins[-1][0] == pytest.approx(1 / n_keys)
    assert all(a[0] == b[1] for a, b in itertools.pairwise(bins))  # contiguous


def test_bin_index_and_bad_n_keys():
    bins = cards.weight_bins(10)
    assert [cards.weight_index(x, bins) for x in (1.0, 0.99, 0.9899, 0.9, 0.5, 0.1, 0.05)] == [
        0,
        0,
        1,
        1,
        2,
        3,
        3,
    ]
    with pytest.raises(ValueError, match="n_keys"):
        cards.weight_bins(1)


def test_weight_options_and_sweep_cell():
    options = cards.weight_options(10)
    assert options == ["≈ 1 (≥ 0.99)", "0.9 – 0.99", "0.5 – 0.9", "0.1 (uniform, 1/10) – 0.5"]
    assert len(cards.weight_options(2)) == 3
    df = pd.DataFrame({"alpha": [0.0, 0.5, 0.0], "d": [64, 64, 128], "v": [1.0, 2.0, 3.0]})
    assert story_data.sweep_at(df, 0.5, 64, "v") == 2.0
    with pytest.raises(ValueError, match="sweep cell"):
        story_data.sweep_at(df, 1.0, 64, "v")
