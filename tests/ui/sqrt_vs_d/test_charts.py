"""Builders and frames of the √d_k-vs-d_k page: valid Vega-Lite, encodings, row counts;
the workshop questions and the misconception card from the sweep's numbers."""

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
from ui.common.charts import MARKER_DATASET, NARROW_CHART_PX, ChartText, d_marker
from ui.sqrt_vs_d import charts, data, frames, sections
from ui.story import cards
from ui.story import charts as story_charts
from ui.story import data as story_data
from ui.story import frames as story_frames

D = [int(d) for d in 2 ** np.arange(13)]


def _sweep(alphas=(0.0, 0.5, 1.0), rho=0.5, n_keys=10):
    """The frame ui.common.data.saturation_sweep returns, built without the data."""
    out = saturation_sweep(
        D, n_keys, list(alphas), rng=np.random.default_rng(0), n_rows=2_000, rho=rho
    )
    return pd.DataFrame({k: np.asarray(v).ravel() for k, v in out.items()})


def _cells(df: pd.DataFrame) -> dict[tuple[float, int], dict[str, float]]:
    """A sweep frame as story_data.preset_cells gives it: statistics by (α, d_k)."""
    return {
        (float(r.pop("alpha")), int(r.pop("d"))): {k: float(v) for k, v in r.items()}
        for r in df.to_dict("records")
    }


def _layers(spec):
    return spec.get("layer", [spec])


SE_TIPS = {"series": "scaling", "lo": "mean − 2 s.e.", "hi": "mean + 2 s.e."}
LABELS = {0.0: "none", 0.5: "1/√d", 1.0: "1/d"}
NO_REFERENCE = data.reference_frame(())


def _text(**entries: str) -> ChartText:
    return ChartText.of(
        **{"title": "T", "x": "d", "y": "p", "alt": "a", "tips": SE_TIPS, **entries}
    )


def test_logit_scale_chart():
    df = story_data.logit_frame(_sweep(), "std", 0.5, LABELS)
    assert len(df) == 39  # 3 α × 13 d_k
    assert df.groupby("alpha").series.first().to_dict() == LABELS
    text = ChartText.of(
        title="T", subtitle="S", x="d", y="std", alt="alt", tips={**SE_TIPS, "theory": "theory"}
    )
    chart = story_charts.logit_scale(df, text)
    spec = chart.to_dict()
    assert spec["description"] == "alt"
    assert spec["title"] == {"text": "T", "subtitle": "S"}
    # drawn half width; each layer names the frame (the marker, added by workshop.chart, last)
    assert spec["height"] == story_charts.HALF_PLOT_PX and "data" not in spec
    theory, bars, points, marker = _layers((chart + d_marker()).to_dict())
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
    assert marker["encoding"]["x"]["field"] == "d" and marker["data"]["name"] == MARKER_DATASET
    assert theory["data"] == bars["data"] == points["data"]
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
    std = story_data.logit_frame(sweep, "std", 0.5, LABELS)
    np.testing.assert_allclose(std["theory"], std["d"] ** (0.5 - std["alpha"]))
    mean = story_data.logit_frame(sweep, "mean", 0.5, LABELS)
    np.testing.assert_allclose(mean["theory"], 0.5 * mean["d"] ** (1 - mean["alpha"]))
    # error bars stay positive on the log axis
    assert (mean["lo"] > 0).all() and (mean["lo"] <= mean["value"]).all()


def test_lines_frame_and_log_floor():
    sweep = _sweep()
    ent = data.lines(sweep, "entropy_mean", LABELS, divide_by=math.log(10))
    assert set(ent.columns) >= {"d", "series", "color", "value", "lo", "hi"}
    assert ent["value"].between(0, 1.0001).all()
    assert ent.series.tolist() == [LABELS[a] for a in ent.alpha]
    grad = data.lines(sweep, "grad_fro_mean", LABELS, log=True)
    assert (grad["value"] > story_data.SWEEP_LOG_FLOOR).all()
    assert len(grad) < len(ent)  # α = 0 at ρ = 0.5 underflows at large d_k and is dropped
    assert (grad["lo"] >= grad["value"] / 10 - 1e-300).all()
    argmax = data.argmax_line(sweep, "every α")
    assert argmax["series"].unique().tolist() == ["every α"] and len(argmax) == 13
    assert argmax["color"].unique().tolist() == [common_charts.COLORS["theory"]]


def test_in_range():
    sweep = _sweep()
    part = story_data.in_range(sweep, 16, 256)
    assert sorted(part["d"].unique()) == [16, 32, 64, 128, 256]


def test_references():
    y, label = sections.reference(10, 0.5, limit=True)
    assert y == pytest.approx(0.154828, abs=1e-6) and "0.155" in label and "0.1" in label
    assert sections.reference(10, 0.0, limit=True) == (0.1, "1/n_keys = 0.1")
    assert sections.reference(10, 0.5, limit=False) == (0.1, "1/n_keys = 0.1")
    ref = data.reference_frame(((0.1, "1/n_keys = 0.1"),))
    assert ref.to_dict("list") == {"y": [0.1], "label": ["1/n_keys = 0.1"]}
    assert sections.floor_label(0.1) == "below_right"
    assert sections.floor_label(1 / 512) == "above_right"  # clear of the tick labels


def test_chart_frames_from_plain_values():
    labels = tuple(LABELS.items())
    ent, ref = frames.stat_lines("entropy", 10, 0.5, 0.5, 0, 4, 64, labels, ((1.0, "uniform"),))
    assert sorted(ent["d"].unique()) == [4, 8, 16, 32, 64] and len(ent) == 3 * 5
    assert ref.to_dict("list") == {"y": [1.0], "label": ["uniform"]}
    grad, none = frames.stat_lines("grad", 10, 0.75, 0.5, 0, 1, 4096, (*labels, (0.75, "α")))
    assert set(grad.series) == {"none", "1/√d", "1/d", "α"} and none.empty
    assert (grad["value"] > story_data.SWEEP_LOG_FLOOR).all()
    argmax, _ = frames.argmax(10, 0.5, 0, 1, 4096, "every α", ((0.1, "chance"),))
    assert (argmax.alpha == 0.5).all() and len(argmax) == 13
    logit = story_frames.logit("mean", 10, 0.5, 0.5, 0, 1, 4096, labels)
    np.testing.assert_allclose(logit["theory"], 0.5 * logit["d"] ** (1 - logit["alpha"]))
    heat, rules = frames.heatmap(10, 0.5, 0, 16, 256, ((0.5, "½"), (1.0, "1")))
    assert sorted(heat["d"].unique()) == [16, 32, 64, 128, 256]
    assert len(heat) == 5 * len(data.HEATMAP_ALPHAS)
    assert rules.to_dict("list") == {
        "alpha": [0.5, 1.0],
        "label": ["½", "1"],
        "color": [common_charts.COLORS["sqrt"], common_charts.COLORS["linear"]],
    }


def test_alpha_heatmap():
    alphas = [round(0.05 * i, 2) for i in range(31)]
    d, a = np.meshgrid(D, alphas)
    df = pd.DataFrame(
        {"d": d.ravel(), "alpha": a.ravel(), "share": 0.5, "share_se": 0.01}
    )  # 13 × 31 cells
    rules = data.heatmap_rules(((0.5, "1/√d"), (1.0, "1/d")))
    assert rules["alpha"].tolist() == [0.5, 1.0]
    text = ChartText.of(
        title="T", x="d", y="α", color="H", alt="alt",
        tips={"se": "standard error", "rule": "scaling"},
    )  # fmt: skip
    spec = charts.alpha_heatmap((df, rules), text).to_dict()
    assert spec["config"]["legend"]["symbolOpacity"] == 1
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
    df = data.lines(_sweep(), "max_weight_mean", LABELS)
    chart = charts.stat_lines((df, NO_REFERENCE), _text())
    spec = chart.to_dict()
    # the plot keeps its height; title and legend add to the chart's (fit-x)
    assert spec["height"] == story_charts.HALF_PLOT_PX
    assert spec["autosize"] == {"type": "fit-x", "contains": "padding"}
    assert spec["config"]["legend"]["symbolOpacity"] == 1
    legends = [
        layer["encoding"]["color"].get("legend")
        for layer in _layers(spec)
        if "color" in layer.get("encoding", {}) and "field" in layer["encoding"]["color"]
    ]
    assert legends and all(legend_columns_at(legend, NARROW_CHART_PX) == 2 for legend in legends)
    big = pd.concat([story_data.logit_frame(_sweep(), "std", 0.5, LABELS)] * 200, ignore_index=True)
    with pytest.raises(ValueError, match="at most 5000 rows"):
        story_charts.logit_scale(big, _text(subtitle="", tips={**SE_TIPS, "theory": ""}))
    assert isinstance(chart, alt.LayerChart)


def test_logit_latex_substitutes_live_numbers():
    text = sections.logit_latex(64, 0.5, 0.5)
    assert r"d_k = 64,\ \alpha = 0.5,\ \rho = 0.5" in text
    assert "= 1," in text and "= 4," in text and text.endswith(r"= 4\end{gathered}")
    # one formula a line, so that none runs past a narrow column
    assert text.startswith(r"\begin{gathered}") and text.count(r"\\") == 3


# --- workshop questions: the answer follows the numbers of the sweep ---------------------------
def _max_cells(start: float, end: float) -> dict[tuple[float, int], dict[str, float]]:
    return {
        (1.0, 1): {"max_weight_mean": start},
        (1.0, 4096): {"max_weight_mean": end},
        (0.5, 4096): {"max_weight_mean": 0.5},
    }


@pytest.mark.parametrize(
    ("start", "end", "answer"),
    [(0.27, 0.102, 2), (0.27, 0.155, 2), (0.68, 0.72, 1), (0.27, 0.22, 1), (0.3, 0.9, 0)],
)
def test_max_weight_question_picks_the_nearest_level(start, end, answer):
    q = cards.max_weight_question(_max_cells(start, end), n_keys=10, rho=0.5)
    assert q["answer"] == answer
    assert len(q["options"]) == 3 and f"{start:.2f}" in q["options"][1]
    assert f"{end:.3f}" in q["explain"] and "ρ = 0.5" in q["question"]
    # with an aligned key the large-d_k level is softmax(ρ, 0, …, 0)'s largest weight
    assert "0.155" in q["options"][2] and "0.155" in q["explain"]


def test_max_weight_question_without_an_aligned_key_names_uniform():
    q = cards.max_weight_question(_max_cells(0.27, 0.102), n_keys=10, rho=0.0)
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
    q = cards.max_weight_question(_max_cells(start, limit), n_keys=n_keys, rho=rho)
    assert (q["unanswerable"] is None) == asked
    assert asked == (abs(start / limit - 1) >= cards.MAX_WEIGHT_TIE)
    if not asked:
        assert f"{limit:.3f}" in q["unanswerable"] and "25 %" in q["unanswerable"]


def _relevant_cells(a: float, b: float, se: float = 0.001) -> dict:
    stats = {"relevant_weight_mean": 0.155, "relevant_weight_se": se}
    return {
        (0.5, 16): {"relevant_weight_mean": a, "relevant_weight_se": se},
        (0.5, 4096): {"relevant_weight_mean": b, "relevant_weight_se": se},
        (1.0, 16): stats,
        (1.0, 4096): stats,
    }


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
    q = sections.relevant_weight_question(_relevant_cells(a, b, se), n_keys=10, rho=0.5)
    assert q["answer"] == answer
    assert f"{a:.3f}" in q["explain"] and f"{b:.3f}" in q["explain"]


def test_myth_numbers_from_a_real_sweep():
    df = _cells(_sweep(rho=0.0))
    nums = sections.myth_numbers(df, 10)
    assert float(nums["h_one"]) == pytest.approx(1.0, abs=0.005)  # 1/d_k: uniform
    assert float(nums["m_one"]) == pytest.approx(0.1, abs=0.005)
    assert float(nums["h_half"]) < 0.9 and float(nums["m_half"]) > 0.25  # 1/√d_k: not
    assert nums["h_half"] in sections.myth_reality(df, 10, 0.0)
    assert "flattening attention toward uniform" in sections.myth_reality(df, 10, 0.0)


def test_myth_with_an_aligned_key_reads_the_numbers_it_shows():
    from core.scaling import linear_scaling_weight_limit

    df = _cells(_sweep(rho=0.5))
    nums = sections.myth_numbers(df, 10)
    # 1/√d_k locks onto the aligned key; 1/d_k gives softmax(ρ, 0, …, 0) at every width
    assert float(nums["m_half"]) > 0.99 and float(nums["h_half"]) < 0.02
    assert float(nums["m_one"]) == pytest.approx(linear_scaling_weight_limit(10, 0.5), abs=0.01)
    text = sections.myth_reality(df, 10, 0.5)
    assert nums["m_one"] in text and "softmax(ρ, 0, …, 0)" in text and "locks onto it" in text


def test_value_at_needs_the_cell():
    with pytest.raises(ValueError, match=r"alpha=0\.25"):
        cards.value_at(_cells(_sweep()), 0.25, 64, "entropy_mean")
    assert cards.value_at(_cells(_sweep()), 0.5, 64, "max_weight_mean") > 0.1


def test_gradient_scale_axis_labels_every_other_decade_in_one_format():
    """The gradient chart's log axis: 1e0 … 1e−10 (not a mix of 0.000001 and 1e-7), two
    decades apart in the half-width plot so that no two labels collide."""
    df = data.lines(_sweep(), "grad_fro_mean", LABELS, log=True)
    spec = charts.stat_lines((df, NO_REFERENCE), _text(y="g"), log_y=True).to_dict()
    axis = _layers(spec)[1]["encoding"]["y"]["axis"]
    assert axis["labelExpr"] == axes.EXP_LABEL
    values = axis["values"]
    lo = axes.positive_range(df["lo"], df["value"], df["hi"])[0]
    assert values[0] <= lo * 10 and values[-1] >= 1
    gaps = np.diff(np.log10(values))
    assert np.allclose(gaps, gaps[0]) and story_charts.HALF_PLOT_PX / len(values) >= 26


def test_the_texts_numbers_are_the_sweeps():
    """The questions, the myth card and the summary table read plain numbers (cached):
    the same numbers as the sweeps the charts draw."""
    cells = story_data.preset_cells(10, 0.5, 0, cards.QUOTED_D)
    assert set(cells) == {(a, d) for a in (0.0, 0.5, 1.0) for d in cards.QUOTED_D}
    full = story_data.sqrt_vs_d_sweep(10, 0.75, 0.5, 0)
    for (a, d), stats in cells.items():
        row = full[(full["alpha"] == a) & (full["d"] == d)]
        assert stats == {k: float(row[k].iloc[0]) for k in stats}
    # ρ = 0.5, 1/d_k: the largest weight settles at softmax(ρ, 0, …, 0)'s (docs §2.4)
    assert cards.value_at(cells, 1.0, 4096, "max_weight_mean") == pytest.approx(0.155, abs=0.01)
    rows = data.at_d(64, 10, 0.75, 0.5, 0)
    assert [r["alpha"] for r in rows] == [0.0, 0.5, 1.0, 0.75]
    table = data.summary_table(rows, 64, 10, 0.5).to_pandas()
    assert len(table) == 4 and table.iloc[1, 0].endswith("(1)")  # α = ½: theory std 1
    assert (
        table.index[1] == "1/√dₖ (α = ½)"
        and table.iloc[1, 0].split()[0] == f"{rows[1]['logit_std']:.3g}"
    )


# --- the closed-form chart, computed in the browser ----------------------------------------
THEORY_LABELS = (("÷√dₖ", "÷dₖ"), ("mean", "std"))
THEORY_TEXT = ChartText.of(
    title="T", subtitle="solid · dashed", x="dₖ", y="size", alt="alt", sqrt="÷√dₖ", linear="÷dₖ", mean="mean", std="std",
    point_sqrt="{d} ÷√dₖ: {m} {s}", point_linear="{d} ÷dₖ: {m} {s}",
    tips={"divisor": "divisor", "quantity": "q"},
)  # fmt: skip


def test_logit_theory_lines():
    df = frames.logit_theory(THEORY_LABELS)
    assert len(df) == 2 * 2 * 13 and sorted(set(df["d"])) == D
    inputs = (("alignment", "ρ", 0.05, 0.95, 0.05, 0.5),)
    spec = charts.logit_theory_lines(df, THEORY_TEXT, inputs=inputs).to_dict()
    lines, one, *values = spec["layer"]
    assert lines["transform"] == [{"calculate": charts.logit_theory().vega, "as": "value"}]
    assert lines["encoding"]["y"]["scale"] == {"type": "log", "domain": list(charts.THEORY_Y)}
    assert lines["encoding"]["color"]["scale"]["domain"] == ["÷√dₖ", "÷dₖ"]
    assert lines["encoding"]["strokeDash"]["scale"]["domain"] == ["mean", "std"]
    assert one["mark"]["type"] == "rule"
    # the values at d_k read the marker's row, which workshop's marker= fills and layers
    assert [v["data"] for v in values] == [{"name": MARKER_DATASET}] * 2
    assert "format(datum.ms, '.3~g')" in values[0]["transform"][-1]["calculate"]
    assert "format(datum.sl, '.3~g')" in values[1]["transform"][-1]["calculate"]
    assert [(p["name"], p["value"]) for p in spec["params"]] == [("alignment", 0.5)]


@pytest.mark.parametrize("rho", [0.05, 0.3, 0.5, 0.95])
def test_the_browsers_logit_scale_is_the_core_one(rho):
    """The chart's expression gives core.scaling's mean and std (the source of truth) at
    every point it draws (tolerance 1e-12 relative: the same powers, one rounding each),
    and every value lies on the fixed axis."""
    from core.scaling import independent_logit_std, relevant_logit_mean

    df = frames.logit_theory(THEORY_LABELS)
    got = charts.logit_theory().evaluate(
        {"d": df["d"], "alpha": df["alpha"], "signal": df["signal"], "alignment": rho}
    )
    want = [
        relevant_logit_mean(int(d), a, rho) if s else independent_logit_std(int(d), a)
        for d, a, s in zip(df["d"], df["alpha"], df["signal"], strict=True)
    ]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    lo, hi = charts.THEORY_Y
    assert np.all(got >= lo) and np.all(got <= hi)
    # the four values written at d_k: the same formulas with α fixed
    at = {"d": np.array([64.0]), "alignment": rho}
    assert charts.logit_mean(0.5).evaluate(at)[0] == pytest.approx(rho * 8, rel=1e-12)
    assert charts.logit_std(1.0).evaluate(at)[0] == pytest.approx(1 / 8, rel=1e-12)
