"""Builders and frames of the √d_k-vs-d_k page: valid Vega-Lite, encodings, row counts."""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd
import pytest

from core.experiments import saturation_sweep
from tests.ui.helpers import legend_columns_at
from ui.common import axes
from ui.common import charts as common_charts
from ui.common.charts import NARROW_CHART_PX
from ui.sqrt_vs_d import charts, data, sections

D = [int(d) for d in 2 ** np.arange(13)]


def _sweep(alphas=(0.0, 0.5, 1.0), rho=0.5, n_keys=10):
    """The frame ui.common.data.saturation_sweep returns, built without the data."""
    out = saturation_sweep(
        D, n_keys, list(alphas), rng=np.random.default_rng(0), n_rows=2_000, rho=rho
    )
    return pd.DataFrame({k: np.asarray(v).ravel() for k, v in out.items()})


def _layers(spec):
    return spec.get("layer", [spec])


SE_TIPS = {"series": "scaling", "lo": "mean − 2 s.e.", "hi": "mean + 2 s.e."}


def test_logit_scale_chart():
    df = data.logit_frame(_sweep(), "std", 0.5)
    assert len(df) == 39  # 3 α × 13 d_k
    spec = charts.logit_scale(
        df,
        title="T",
        subtitle="S",
        x_title="d",
        y_title="std",
        theory_title="theory",
        description="alt",
        tips=SE_TIPS,
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
    assert colour["range"] == [common_charts.alpha_color(a) for a in (0.0, 0.5, 1.0)]
    assert marker["encoding"]["x"]["field"] == "d"
    # every mark titled: the theory line and the error bars too
    titles = ["scaling", "dₖ", "std", "mean − 2 s.e.", "mean + 2 s.e.", "theory"]
    assert [t["title"] for t in points["encoding"]["tooltip"]] == titles
    assert [t["title"] for t in bars["encoding"]["tooltip"]] == titles
    assert [t["title"] for t in theory["encoding"]["tooltip"]] == ["scaling", "dₖ", "theory"]
    # one label format on the log axis, sized for the half-width plot
    axis = points["encoding"]["y"]["axis"]
    assert axis["labelExpr"] == axes.PLAIN_LABEL  # 0.01 … 100: plain numbers
    assert axis["values"] == [0.01, 0.1, 1.0, 10.0, 100.0]


def test_logit_frames_follow_theory():
    sweep = _sweep()
    std = data.logit_frame(sweep, "std", 0.5)
    np.testing.assert_allclose(std["theory"], std["d"] ** (0.5 - std["alpha"]))
    mean = data.logit_frame(sweep, "mean", 0.5)
    np.testing.assert_allclose(mean["theory"], 0.5 * mean["d"] ** (1 - mean["alpha"]))
    # error bars stay positive on the log axis
    assert (mean["lo"] > 0).all() and (mean["lo"] <= mean["value"]).all()


def test_lines_frame_and_log_floor():
    sweep = _sweep()
    ent = data.lines(sweep, "entropy_mean", divide_by=math.log(10))
    assert set(ent.columns) >= {"d", "series", "color", "value", "lo", "hi"}
    assert ent["value"].between(0, 1.0001).all()
    grad = data.lines(sweep, "grad_fro_mean", log=True)
    assert (grad["value"] > data.LOG_FLOOR).all()
    assert len(grad) < len(ent)  # α = 0 at ρ = 0.5 underflows at large d_k and is dropped
    assert (grad["lo"] >= grad["value"] / 10 - 1e-300).all()
    argmax = data.argmax_line(sweep)
    assert argmax["series"].nunique() == 1 and len(argmax) == 13


def test_in_range():
    sweep = _sweep()
    part = data.in_range(sweep, 16, 256)
    assert sorted(part["d"].unique()) == [16, 32, 64, 128, 256]


def test_references():
    ref = data.references(10, 0.5, limit=True)
    assert ref["y"].tolist() == [pytest.approx(0.154828, abs=1e-6)]
    assert data.references(10, 0.0, limit=True)["y"].tolist() == [0.1]
    assert data.references(10, 0.5, limit=False)["y"].tolist() == [0.1]


def test_alpha_heatmap():
    alphas = [round(0.05 * i, 2) for i in range(31)]
    d, a = np.meshgrid(D, alphas)
    df = pd.DataFrame(
        {"d": d.ravel(), "alpha": a.ravel(), "share": 0.5, "share_se": 0.01}
    )  # 13 × 31 cells
    rules = data.heatmap_rules()
    assert rules["alpha"].tolist() == [0.5, 1.0]
    spec = charts.alpha_heatmap(
        df, rules, title="T", x_title="d", y_title="α", color_title="H", description="alt",
        tips={"se": "standard error", "rule": "scaling"},
    ).to_dict()  # fmt: skip
    rect, lines = _layers(spec)
    # no grid lines across the cells
    assert rect["encoding"]["x"]["axis"]["grid"] is False
    assert rect["encoding"]["y"]["axis"]["grid"] is False
    assert [t["title"] for t in rect["encoding"]["tooltip"]] == ["dₖ", "α", "H", "standard error"]
    assert lines["encoding"]["tooltip"][0]["title"] == "scaling"
    assert rect["mark"]["type"] == "rect" and lines["mark"]["type"] == "rule"
    assert rect["encoding"]["x"]["type"] == "ordinal"
    assert rect["encoding"]["color"]["scale"]["domain"] == [0, 1]
    assert rect["encoding"]["y"]["scale"]["domain"] == [pytest.approx(-0.025), pytest.approx(1.525)]
    assert lines["encoding"]["color"]["scale"]["range"] == [
        common_charts.COLORS["sqrt"],
        common_charts.COLORS["linear"],
    ]
    sizes = sorted(len(v) for v in spec["datasets"].values())
    assert sizes == [2, 403]


def test_legend_columns_and_rows_limit():
    df = data.lines(_sweep(), "max_weight_mean")
    chart = charts.chart(
        "sweep_lines", df, title="T", x_title="d", y_title="p", description="a", tips=SE_TIPS
    )
    spec = chart.to_dict()
    # the plot keeps its height; title and legend add to the chart's (fit-x)
    assert spec["height"] == charts.HALF_PLOT_PX
    assert spec["autosize"] == {"type": "fit-x", "contains": "padding"}
    assert spec["config"]["legend"]["symbolOpacity"] == 1
    legends = [
        layer["encoding"]["color"].get("legend")
        for layer in _layers(spec)
        if "color" in layer.get("encoding", {}) and "field" in layer["encoding"]["color"]
    ]
    assert legends and all(legend_columns_at(legend, NARROW_CHART_PX) == 2 for legend in legends)
    big = pd.concat([data.logit_frame(_sweep(), "std", 0.5)] * 200, ignore_index=True)
    with pytest.raises(ValueError, match="at most 5000 rows"):
        charts.logit_scale(
            big,
            title="",
            subtitle="",
            x_title="",
            y_title="",
            theory_title="",
            description="",
            tips=SE_TIPS,
        )
    assert isinstance(chart, alt.LayerChart)


def test_logit_latex_substitutes_live_numbers():
    text = sections.logit_latex(64, 0.5, 0.5)
    assert r"d_k = 64,\ \alpha = 0.5,\ \rho = 0.5" in text
    assert "= 1," in text and "= 4," in text and text.endswith(r"= 4\end{gathered}")
    # one formula a line, so that none runs past a narrow column
    assert text.startswith(r"\begin{gathered}") and text.count(r"\\") == 3


# --- workshop questions: the answer follows the numbers in the frame ---------------------------
def _frame(values: dict[tuple[float, int], dict[str, float]]) -> pd.DataFrame:
    rows = [{"alpha": a, "d": d, **stats} for (a, d), stats in values.items()]
    return pd.DataFrame(rows)


def _max_frame(start: float, end: float) -> pd.DataFrame:
    return _frame(
        {
            (1.0, 1): {"max_weight_mean": start},
            (1.0, 4096): {"max_weight_mean": end},
            (0.5, 4096): {"max_weight_mean": 0.5},
        }
    )


@pytest.mark.parametrize(
    ("start", "end", "answer"),
    [(0.27, 0.102, 2), (0.27, 0.155, 2), (0.68, 0.72, 1), (0.27, 0.22, 1), (0.3, 0.9, 0)],
)
def test_max_weight_question_picks_the_nearest_level(start, end, answer):
    q = sections.max_weight_question(_max_frame(start, end), n_keys=10, rho=0.5)
    assert q["answer"] == answer
    assert len(q["options"]) == 3 and f"{start:.2f}" in q["options"][1]
    assert f"{end:.3f}" in q["explain"] and "ρ = 0.5" in q["question"]
    # with an aligned key the large-d_k level is softmax(ρ, 0, …, 0)'s largest weight
    assert "0.155" in q["options"][2] and "0.155" in q["explain"]


def test_max_weight_question_without_an_aligned_key_names_uniform():
    q = sections.max_weight_question(_max_frame(0.27, 0.102), n_keys=10, rho=0.0)
    assert q["answer"] == 2 and "1/n_keys = 0.1" in q["options"][2]


@pytest.mark.parametrize(
    ("n_keys", "rho", "start", "asked"),
    [
        (512, 0.5, 0.025, True),  # limit 0.0032: an 8× fall, small in absolute terms
        (512, 0.0, 0.037, True),  # limit 1/512
        (10, 0.5, 0.27, True),  # limit 0.155
        (2, 0.9, 0.65, False),  # limit 0.711: within 25 %
        (3, 0.9, 0.50, False),  # limit 0.551
    ],
)
def test_max_weight_question_is_asked_unless_stays_and_falls_coincide(n_keys, rho, start, asked):
    from core.scaling import linear_scaling_weight_limit

    limit = linear_scaling_weight_limit(n_keys, rho)
    q = sections.max_weight_question(_max_frame(start, limit), n_keys=n_keys, rho=rho)
    assert (q["unanswerable"] is None) == asked
    assert asked == (abs(start / limit - 1) >= sections.MAX_WEIGHT_TIE)
    if not asked:
        assert f"{limit:.3f}" in q["unanswerable"] and "25 %" in q["unanswerable"]


def _relevant_frame(a: float, b: float, se: float = 0.001) -> pd.DataFrame:
    stats = {"relevant_weight_mean": 0.155, "relevant_weight_se": se}
    return _frame(
        {
            (0.5, 16): {"relevant_weight_mean": a, "relevant_weight_se": se},
            (0.5, 4096): {"relevant_weight_mean": b, "relevant_weight_se": se},
            (1.0, 16): stats,
            (1.0, 4096): stats,
        }
    )


@pytest.mark.parametrize(
    ("a", "b", "se", "answer"),
    [
        (0.37, 1.0, 0.0, 0),  # n = 10, ρ = 0.5: 1/√d_k from d_k = 16 to 4096 (docs §2.4)
        (0.1, 0.1, 0.001, 1),  # ρ = 0
        (0.1, 0.115, 0.001, 1),  # within 0.02
        (0.1, 0.13, 0.001, 0),
        (0.1, 0.13, 0.01, 1),  # within 4 s.e. of the difference
        (0.3, 0.1, 0.001, 2),
    ],
)
def test_relevant_weight_question_reads_the_change(a, b, se, answer):
    q = sections.relevant_weight_question(_relevant_frame(a, b, se), n_keys=10, rho=0.5)
    assert q["answer"] == answer
    assert f"{a:.3f}" in q["explain"] and f"{b:.3f}" in q["explain"]


def test_myth_numbers_from_a_real_sweep():
    df = _sweep(rho=0.0)
    nums = sections.myth_numbers(df, 10)
    assert float(nums["h_one"]) == pytest.approx(1.0, abs=0.005)  # 1/d_k: uniform
    assert float(nums["m_one"]) == pytest.approx(0.1, abs=0.005)
    assert float(nums["h_half"]) < 0.9 and float(nums["m_half"]) > 0.25  # 1/√d_k: not
    assert nums["h_half"] in sections.myth_reality(df, 10, 0.0)
    assert "flattening attention toward uniform" in sections.myth_reality(df, 10, 0.0)


def test_myth_with_an_aligned_key_reads_the_numbers_it_shows():
    from core.scaling import linear_scaling_weight_limit

    df = _sweep(rho=0.5)
    nums = sections.myth_numbers(df, 10)
    # 1/√d_k locks onto the aligned key; 1/d_k gives softmax(ρ, 0, …, 0) at every width
    assert float(nums["m_half"]) > 0.99 and float(nums["h_half"]) < 0.02
    assert float(nums["m_one"]) == pytest.approx(linear_scaling_weight_limit(10, 0.5), abs=0.01)
    text = sections.myth_reality(df, 10, 0.5)
    assert nums["m_one"] in text and "softmax(ρ, 0, …, 0)" in text and "locks onto it" in text


def test_value_at_needs_exactly_one_row():
    with pytest.raises(ValueError, match=r"alpha=0\.25"):
        sections.value_at(_sweep(), 0.25, 64, "entropy_mean")


def test_gradient_scale_axis_labels_every_other_decade_in_one_format():
    """The gradient chart's log axis: 1e0 … 1e−10 (not a mix of 0.000001 and 1e-7), two
    decades apart in the half-width plot so that no two labels collide."""
    df = data.lines(_sweep(), "grad_fro_mean", log=True)
    spec = charts.chart(
        "sweep_lines", df, title="T", x_title="d", y_title="g", description="a", tips=SE_TIPS,
        log_y=True,
    ).to_dict()  # fmt: skip
    axis = _layers(spec)[1]["encoding"]["y"]["axis"]
    assert axis["labelExpr"] == axes.EXP_LABEL
    values = axis["values"]
    lo = axes.positive_range(df["lo"], df["value"], df["hi"])[0]
    assert values[0] <= lo * 10 and values[-1] >= 1
    gaps = np.diff(np.log10(values))
    assert np.allclose(gaps, gaps[0]) and charts.HALF_PLOT_PX / len(values) >= 26
