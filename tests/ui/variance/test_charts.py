"""Variance page: chart builders (valid Vega-Lite, intended encodings, bounded data) and
the cached frames behind them."""

import altair as alt
import numpy as np
import pandas as pd
import pytest

from ui.common import axes
from ui.common import charts as common_charts
from ui.common.charts import ChartText
from ui.story import charts as story_charts
from ui.story import data as story_data
from ui.story import frames as story_frames
from ui.variance import charts, data

HIST_TEXT = ChartText.of(
    title="T", x="score", y="density", alt="alt", law_exact="exact", law_gauss="gauss",
    tips={"law": "curve"},
)  # fmt: skip


def _hist_frame(n=60):
    edges = np.linspace(-3, 3, n + 1)
    x = 0.5 * (edges[1:] + edges[:-1])
    dens = np.exp(-0.5 * x**2) / np.sqrt(2 * np.pi)
    return pd.DataFrame(
        {"x0": edges[:-1], "x1": edges[1:], "x": x, "density": dens, "exact": dens, "gauss": dens}
    )


def _hist_frames(n=60, scale=1.0):
    """The three frames of a histogram chart, as data.histogram_frames makes them."""
    hist = _hist_frame(n)
    hist[["x0", "x1", "x"]] *= scale
    long = hist.melt(id_vars=["x"], value_vars=["exact", "gauss"], var_name="law", value_name="y")
    ends = pd.DataFrame({"x": [-4.0 * scale, 4.0 * scale]})
    return hist, long, ends


def _layers(spec):
    return spec.get("layer", [spec])


def _datasets(spec):
    return spec.get("datasets", {})


def test_histogram_with_law():
    chart = charts.histogram_with_law(_hist_frames(), HIST_TEXT)
    spec = chart.to_dict()
    assert spec["description"] == "alt"
    bars, lines = _layers(spec)  # no shared axis: no ends drawn
    assert bars["mark"]["type"] == "rect"
    assert bars["encoding"]["y2"] == {"datum": 0}
    assert bars["encoding"]["x"]["field"] == "x0" and bars["encoding"]["x2"]["field"] == "x1"
    assert bars["encoding"]["y"]["field"] == "density"
    assert lines["encoding"]["strokeDash"]["field"] == "law"
    assert [t["title"] for t in lines["encoding"]["tooltip"]] == ["curve", "score", "density"]
    assert lines["encoding"]["strokeDash"]["sort"] == ["exact", "gauss"]
    sizes = sorted(len(v) for v in _datasets(spec).values())
    assert sizes == [60, 120]  # 60 bins; 2 laws × 60 points
    assert bars["encoding"]["x"]["scale"] == {}


def test_histogram_on_a_shared_axis_runs_over_the_ends():
    spec = charts.histogram_with_law(_hist_frames(), HIST_TEXT, shared_axis=True).to_dict()
    bars, _, ends = _layers(spec)
    assert bars["encoding"]["x"]["scale"] == {"nice": False}
    assert ends["mark"] == {"type": "rule", "opacity": 0, "aria": False, "tooltip": False}
    assert ends["encoding"] == {"x": {"field": "x", "type": "quantitative"}}
    assert sorted(len(v) for v in _datasets(spec).values()) == [2, 60, 120]


@pytest.mark.parametrize("shared", [False, True])
def test_histogram_spec_does_not_depend_on_the_values(shared):
    """Drawn with swap_data: other bins, laws and ends make the same spec, data aside."""
    made = [
        charts.histogram_with_law(
            frames[: 3 if shared else 2], HIST_TEXT, shared_axis=shared
        ).to_dict()
        for frames in (_hist_frames(), _hist_frames(40, scale=7.5))
    ]
    for spec in made:
        spec.pop("datasets")
        for layer in spec["layer"]:
            layer.pop("data")
    assert made[0] == made[1]


def test_histogram_frames_are_the_bins_the_laws_and_the_ends():
    args = (64, 10_000, "normal", 1.0, 1.0, 0)
    raw = data.histogram(*args, False)
    for scaled in (False, True):
        hist, long, ends = data.histogram_frames(*args, scaled, ("E", "G"), True)
        assert hist.equals(data.histogram(*args, scaled))
        assert long.law.tolist() == ["E"] * len(hist) + ["G"] * len(hist)
        assert long.y.tolist() == hist.exact.tolist() + hist.gauss.tolist()
        assert ends.x.tolist() == [raw.x0.min(), raw.x1.max()]  # the unscaled one's edges
    # each histogram on its own axis: no ends (a frame the chart does not draw is refused)
    own = data.histogram_frames(*args, True, ("E", "G"), False)
    assert len(own) == 2 and own[0].equals(data.histogram(*args, True))


def test_variance_sweep_chart():
    d = 2.0 ** np.arange(13)
    df = pd.concat(
        [
            pd.DataFrame(
                {"d": d, "series": "raw", "var": d, "lo": 0.9 * d, "hi": 1.1 * d, "theory": d}
            ),
            pd.DataFrame(
                {"d": d, "series": "scaled", "var": 1.0, "lo": 0.9, "hi": 1.1, "theory": 1.0}
            ),
        ]
    )
    text = ChartText.of(
        title="T", x="d", y="v", alt="a", series_raw="raw", series_scaled="scaled",
        tips={"series": "quantity", "value": "var", "lo": "low", "hi": "high", "theory": "th"},
    )  # fmt: skip
    chart = story_charts.variance_sweep(df, text)
    alone = [layer["mark"]["type"] for layer in _layers(chart.to_dict())]
    assert alone == ["line", "rule", "point"]
    # the learner's d_k is layered on by workshop.chart (marker=), last
    spec = (chart + common_charts.d_marker()).to_dict()
    layers = _layers(spec)
    assert [layer["mark"]["type"] for layer in layers] == ["line", "rule", "point", "rule"]
    assert layers[2]["encoding"]["x"]["scale"]["type"] == "log"
    assert layers[2]["encoding"]["y"]["scale"]["type"] == "log"
    marker = layers[3]
    assert marker["data"] == {"name": common_charts.MARKER_DATASET}
    assert marker["encoding"]["x"]["field"] == "d"
    # colours follow the meaning, not the alphabetical order of the labels
    assert layers[2]["encoding"]["color"]["scale"]["domain"] == ["raw", "scaled"]
    assert layers[2]["encoding"]["color"]["scale"]["range"] == [
        common_charts.COLORS["unscaled"],
        common_charts.COLORS["sqrt"],
    ]
    # no raw field names: series, var, lo, hi and theory all titled; the error bars and
    # the theory line have tooltips of their own
    titles = ["quantity", "dₖ", "var", "low", "high", "th"]
    assert [t["title"] for t in layers[2]["encoding"]["tooltip"]] == titles
    assert [t["title"] for t in layers[1]["encoding"]["tooltip"]] == titles
    assert [t["title"] for t in layers[0]["encoding"]["tooltip"]] == ["quantity", "dₖ", "th"]
    # 0.9 … 4506: plain numbers, every decade
    axis = layers[2]["encoding"]["y"]["axis"]
    assert axis["labelExpr"] == axes.PLAIN_LABEL
    assert axis["values"] == [0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]


def test_running_sums_and_terms():
    i = np.arange(1, 201)
    paths = pd.DataFrame({"i": np.tile(i, 20), "path": np.repeat(np.arange(20), 200), "sum": 0.0})
    env = pd.DataFrame({"i": i, "band": "±1", "lo": -np.sqrt(i), "hi": np.sqrt(i)})
    text = ChartText.of(
        title="T", x="i", y="s", alt="a",
        tips={"path": "pair", "band": "envelope", "lo": "lower", "hi": "upper"},
    )  # fmt: skip
    spec = charts.running_sums((paths, env), text).to_dict()
    lines, upper, lower = _layers(spec)
    assert lines["encoding"]["detail"]["field"] == "path"
    assert [t["title"] for t in lines["encoding"]["tooltip"]] == ["pair", "i", "s"]
    assert [t["title"] for t in upper["encoding"]["tooltip"]] == ["envelope", "i", "upper"]
    assert [t["title"] for t in lower["encoding"]["tooltip"]] == ["envelope", "i", "lower"]
    terms = pd.DataFrame({"i": np.arange(1, 65), "term": np.linspace(-1, 1, 64), "sign": "+"})
    text = ChartText.of(title="T", x="i", y="t", color="s", alt="a", sign_pos="+", sign_neg="-")
    spec = charts.term_bars(terms, text).to_dict()
    assert spec["mark"]["type"] == "bar"
    assert spec["encoding"]["color"]["field"] == "sign"
    assert spec["encoding"]["color"]["scale"]["domain"] == ["+", "-"]
    assert [t["title"] for t in spec["encoding"]["tooltip"]] == ["i", "t", "s"]


def test_builders_reject_too_many_rows():
    big = _hist_frame(common_charts.MAX_ROWS + 1)
    with pytest.raises(ValueError, match="at most 5000 rows"):
        charts.histogram_with_law((big, big, big), HIST_TEXT)


def test_builders_do_not_configure():
    """Builders return layerable charts: no top-level config (it blocks alt.layer)."""
    chart = charts.histogram_with_law(_hist_frames(), HIST_TEXT)
    assert isinstance(chart, alt.LayerChart)
    assert "config" not in chart.to_dict() or set(chart.to_dict()["config"]) <= {"view"}


@pytest.mark.parametrize("d_k", [1, 2, 64])
def test_running_sum_paths_start_at_the_origin(d_k):
    paths, envelope = data.running_sums(d_k, "normal", 1.0, 1.0, 0)
    starts = paths[paths.i == 0]
    assert len(starts) == data.N_PATHS and (starts["sum"] == 0).all()
    # with d_k = 1 each path is still a segment: from the empty sum to q_1 k_1
    assert paths.groupby("path").size().min() >= 2
    assert paths.i.max() == d_k and set(envelope.i) == set(paths.i)


def test_sweep_layers_name_their_data_beside_the_marker():
    """The marks share one dataset, each naming it; the d_k marker keeps its own."""
    sweep = story_frames.scaled_sweep("normal", 0, 1.0, 1.0, ("raw", "scaled"))
    text = ChartText.of(
        title="T", x="d", y="v", alt="a", series_raw="raw", series_scaled="scaled",
        tips={"series": "s", "value": "v", "lo": "l", "hi": "h", "theory": "t"},
    )  # fmt: skip
    spec = (story_charts.variance_sweep(sweep, text) + common_charts.d_marker()).to_dict()
    assert "data" not in spec
    names = [layer["data"]["name"] for layer in spec["layer"]]
    assert len(set(names[:3])) == 1 and names[3] == common_charts.MARKER_DATASET


def test_frames_from_plain_values():
    """The charts' frames: the cached results with the labels they are given."""
    base = story_data.variance_sweep("normal", 0)
    sweep = story_frames.scaled_sweep("normal", 0, 2.0, 1.0, ("raw", "scaled"))
    assert list(dict.fromkeys(sweep.series)) == ["raw", "scaled"] and "scaled" not in sweep
    # σ_q²σ_k² = 4: every variance ×4, exactly (a power of two)
    for column in ("var", "lo", "hi", "theory"):
        np.testing.assert_array_equal(sweep[column], 4 * base[column])
    paths, envelope = data.walks(16, "normal", 1.0, 1.0, 0, ("±1", "±2"))
    assert dict(zip(envelope.k, envelope.band, strict=True)) == {1: "±1", 2: "±2"}
    assert paths.equals(data.running_sums(16, "normal", 1.0, 1.0, 0)[0])
    terms = data.signed_terms(16, "normal", 1.0, 1.0, 0, ("+", "−"))
    assert list(terms.columns) == ["i", "term", "sign"]
    assert ((terms.sign == "+") == (terms.term >= 0)).all()
    assert data.pair_sum(16, "normal", 1.0, 1.0, 0) == pytest.approx(terms.term.sum(), rel=1e-12)


def test_score_stats_are_the_histograms_numbers():
    args = (64, 10_000, "normal", 1.0, 1.0, 0)
    stats = data.score_stats(*args)
    raw, scaled = data.histogram(*args, False), data.histogram(*args, True)
    assert scaled.x1.max() == pytest.approx(raw.x1.max() / 8)  # divided by √64
    assert stats["var"] == data.score_histograms(*args)[2]["var"]
    assert stats["var"] == pytest.approx(64, rel=4 * stats["var_se"] / 64)
