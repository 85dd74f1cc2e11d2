"""Which-d chart builders and page helpers: valid Vega-Lite, encodings, data sizes."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from ui.common import axes
from ui.common.charts import ChartText
from ui.common.pages import default_heads
from ui.story import cards
from ui.story import charts as story_charts
from ui.story import data as story_data
from ui.story import frames as story_frames
from ui.which_d import charts, data, formulas, sections


def _layers(spec):
    return spec.get("layer", [spec])


def _rows(spec):
    return sorted(len(v) for v in spec.get("datasets", {}).values())


def _bars_and_points(n_heads=5):
    labels = ["÷√d_k = ÷8", "÷√d_model = ÷22.6", "none (÷1)"]
    bars = pd.DataFrame(
        {
            "rank": [0, 1, 2],
            "label": labels,
            "color": ["#0072B2", "#56B4E9", "#D55E00"],
            "selected": [True, False, False],
            "std": [1.0, 0.354, 8.0],
            "entropy": [3.68, 4.10, 0.58],
            "theory_std": [1.0, 0.3536, 8.0],
            "opacity": [1.0, 0.45, 0.45],
            "outline": [2.5, 0.0, 0.0],
            "top_std": [1.2, 0.4, 8.0],
            "top_entropy": [3.7, 4.2, 0.6],
        }
    )
    points = pd.DataFrame(
        {
            "rank": np.repeat([0, 1, 2], n_heads),
            "label": np.repeat(labels, n_heads),
            "head": np.tile(np.arange(1, n_heads + 1), 3),
            "std": np.repeat([1.0, 0.354, 8.0], n_heads),
            "entropy": np.repeat([3.68, 4.10, 0.58], n_heads),
        }
    )
    return bars, points


def _text(x="divisor", y="logit std", **entries):
    return ChartText.of(
        title="T", x=x, y=y, alt="alt", reference="uniform: ln 64",
        tips={"head": "head", "theory": "theory", "reference": "reference line"}, **entries,
    )  # fmt: skip


def test_divisor_bars_std():
    bars, points = _bars_and_points()
    spec = story_charts.divisor_bars((points, bars), _text(), value="std").to_dict()
    assert spec["description"] == "alt" and spec["title"] == "T"
    # x and y are shared by every mark of the layer
    assert spec["encoding"]["x"]["field"] == "label"
    # by rank, whatever order the labels come in as the data is swapped in place
    assert spec["encoding"]["x"]["sort"] == {"field": "rank", "op": "min"}
    assert spec["encoding"]["y"]["field"] == "std"
    layers = _layers(spec)
    assert [layer["mark"]["type"] for layer in layers] == ["bar", "circle", "text", "tick"]
    bar = layers[0]["encoding"]
    # colour, highlight and where a value is printed come from the bars' own columns
    assert bar["color"] == {"field": "color", "type": "nominal", "scale": None, "legend": None}
    assert bar["opacity"]["field"] == "opacity" and bar["strokeWidth"]["field"] == "outline"
    assert layers[2]["encoding"]["y"]["field"] == "top_std"
    assert layers[3]["encoding"]["y"]["field"] == "theory_std"
    # every mark says which divisor it is about
    assert [t["title"] for t in bar["tooltip"]] == ["divisor", "logit std"]
    assert [t["title"] for t in layers[1]["encoding"]["tooltip"]] == [
        "divisor",
        "head",
        "logit std",
    ]
    assert [t["title"] for t in layers[3]["encoding"]["tooltip"]] == ["divisor", "theory"]
    assert _rows(spec) == [3, 15]


def _first_lines(expr: str, label: str, width: int) -> list[str] | str:
    """What the labelExpr shows for ``label`` on a plot ``width`` wide, evaluated the way
    Vega does for the three forms it uses (a test-side reading of the expression)."""
    need = int(expr.split("width < ")[1].split(" ")[0])
    if width >= need:
        return label
    for mark in story_charts.LABEL_BREAKS:
        cut = label.find(mark)
        if f"indexof(datum.label, '{mark}')" in expr and cut > 0:
            return [label[:cut], label[cut + (1 if mark.startswith(" ") else 0) :]]
    return label


def test_divisor_labels_break_in_two_on_a_narrow_plot():
    bars, points = _bars_and_points()
    spec = story_charts.divisor_bars((points, bars), _text("d", "s"), value="std").to_dict()
    axis = spec["encoding"]["x"]["axis"]
    assert axis["labelOverlap"] is False  # every label drawn, none dropped
    expr = axis["labelExpr"]
    # three labels of at most 17 columns (a number counted as four): one line from
    # 3 × (17 × 7.5 + 8) = 406 px up
    assert story_charts.text_columns("÷√d_model = ÷22.6") == 17
    need = 3 * (17 * story_charts.AXIS_PX_PER_COLUMN + story_charts.AXIS_LABEL_GAP_PX)
    assert expr.startswith(f"width < {round(need)} ? (") and expr.endswith(") : datum.label")
    assert _first_lines(expr, "÷√d_model = ÷22.6", 406) == "÷√d_model = ÷22.6"
    assert _first_lines(expr, "÷√d_model = ÷22.6", 200) == ["÷√d_model", "= ÷22.6"]
    assert _first_lines(expr, "none (÷1)", 200) == ["none", "(÷1)"]
    assert _first_lines(expr, "不除（÷1）", 200) == ["不除", "（÷1）"]
    # the same expression for every value a label prints: one spec serves every d_model
    other = bars.assign(label=["÷√d_k = ÷1", "÷√d_model = ÷64", "none (÷1)"])
    again = story_charts.divisor_bars((points, other), _text("d", "s"), value="std").to_dict()
    assert again["encoding"]["x"]["axis"]["labelExpr"] == expr


def test_divisor_bars_spec_does_not_depend_on_the_values():
    """Drawn with swap_data: bars and dots of other values, other labels, another
    highlight make the same spec, datasets aside."""
    bars, points = _bars_and_points()
    labels = ["÷√d_k = ÷2.83", "÷√d_model = ÷45.3", "none (÷1)"]
    relabel = dict(zip(bars.label, labels, strict=True))
    other_bars = bars.assign(
        label=labels, std=[0.5, 0.1, 3.0], opacity=[0.45, 1.0, 0.45], outline=[0.0, 2.5, 0.0]
    )
    other_points = points.assign(label=points.label.map(relabel), std=points["std"] * 3)
    for options in ({"value": "std"}, {"value": "entropy", "reference_y": 4.0, "theory": False}):
        specs = [
            story_charts.divisor_bars(frames, _text(), **options).to_dict()
            for frames in ((points, bars), (other_points, other_bars))
        ]
        for spec in specs:
            for layer in spec.get("layer", []):
                layer.pop("data", None)
                for inner in layer.get("layer", []):
                    inner.pop("data", None)
            spec.pop("data", None)
            spec.pop("datasets", None)
        assert specs[0] == specs[1]


def test_divisor_bars_entropy_with_reference_and_no_theory():
    bars, points = _bars_and_points(n_heads=16)
    spec = story_charts.divisor_bars(
        (points, bars), _text(y="entropy (nats)"), value="entropy", theory=False,
        value_labels=False, reference_y=math.log(64),
    ).to_dict()  # fmt: skip
    assert spec["description"] == "alt"
    marks, rule = _layers(spec)
    assert [layer["mark"]["type"] for layer in marks["layer"]] == ["bar", "circle"]
    assert marks["encoding"]["y"]["field"] == "entropy"
    assert rule["mark"]["type"] == "rule" and rule["encoding"]["y"]["field"] == "y"
    assert [t["title"] for t in rule["encoding"]["tooltip"]] == ["reference line", "entropy (nats)"]
    assert _rows(spec) == [1, 3, 48]
    (line,) = (rows for rows in spec["datasets"].values() if len(rows) == 1)
    assert line == [{"y": math.log(64), "label": "uniform: ln 64"}]


def test_divisor_bars_all_zero_gets_a_unit_axis():
    """W_q = 0: every logit is 0; the caller asks for the unit axis
    (:func:`ui.story.answers.divisor_options`)."""
    bars, points = _bars_and_points()
    bars = bars.assign(std=0.0, theory_std=0.0)
    points = points.assign(std=0.0)
    spec = story_charts.divisor_bars((points, bars), _text(), value="std", unit_y=True).to_dict()
    assert spec["encoding"]["y"]["scale"] == {"domain": [0, 1]}
    plain = story_charts.divisor_bars((points, bars), _text(), value="std").to_dict()
    assert plain["encoding"]["y"]["scale"] == {"zero": True}


def test_divisor_bars_rejects_too_many_rows():
    bars, _ = _bars_and_points()
    big = pd.DataFrame({"label": ["a"] * 5001, "head": 1, "std": 1.0})
    with pytest.raises(ValueError, match="at most"):
        story_charts.divisor_bars((big, bars), _text(), value="std")


def test_scale_lines():
    scales = np.array([float(s) for s in data.WHICH_D_X_SCALES])
    df = pd.concat(
        [
            pd.DataFrame(
                {"scale": scales, "series": "raw", "color": "#D55E00", "value": scales**2}
            ).assign(theory=scales**2),
            pd.DataFrame(
                {"scale": scales, "series": "ln", "color": "#0072B2", "value": 1.0, "theory": 1.0}
            ),
        ],
        ignore_index=True,
    )
    text = ChartText.of(
        title="T", x="s", y="std", alt="alt", alt_one_dim="one line",
        tips={"series": "normalisation", "theory": "theory"},
    )  # fmt: skip
    spec = charts.scale_lines(df, text, current=4.0).to_dict()
    assert spec["description"] == "alt"
    one = charts.scale_lines(df[df.series == "raw"], text, current=4.0, alt_entry="alt_one_dim")
    assert one.to_dict()["description"] == "one line"
    line, theory, marker = _layers(spec)
    assert line["encoding"]["x"]["scale"] == {"type": "log", "base": 2}
    # every other power of two from s = 1: a narrow axis drops no label, and 1 has one
    assert line["encoding"]["x"]["axis"]["values"] == [0.25, 1.0, 4.0, 16.0, 64.0]
    assert line["encoding"]["y"]["scale"] == {"type": "log"}
    assert line["encoding"]["color"]["scale"]["range"] == ["#D55E00", "#0072B2"]
    assert theory["mark"]["strokeDash"] == [5, 4] and theory["encoding"]["y"]["field"] == "theory"
    assert marker["mark"]["type"] == "rule"
    assert [t["title"] for t in theory["encoding"]["tooltip"]] == ["normalisation", "s", "theory"]
    # 1/64 … 4096: plain numbers in one format
    assert line["encoding"]["y"]["axis"]["labelExpr"] == axes.PLAIN_LABEL
    assert _rows(spec) == [1, 20]


def test_heads_helpers():
    assert default_heads(512) == 8  # d_k = 64
    assert default_heads(4096) == 64
    assert default_heads(64) == 1
    assert default_heads(97) == 1  # d_k = 97 is closer to 64 than 1
    assert default_heads(1000) == 20  # d_k = 50
    assert sections.nearest_divisor(513, 8) == 9
    assert sections.nearest_divisor(512, 8) == 8
    assert sections.nearest_divisor(97, 50) == 97


def test_tex_number():
    assert formulas.tex_number(64) == "64"
    assert formulas.tex_number(0) == "0"
    assert formulas.tex_number(0.353553) == "0.3536"
    assert formulas.tex_number(5e7) == r"5\times 10^{7}"
    assert formulas.tex_number(3.355e7) == r"3.355\times 10^{7}"
    assert formulas.tex_number(2.5e-5) == r"2.5\times 10^{-5}"


def test_divisor_frames_pick_one_init_and_mark_the_selection():
    frame, _ = story_data.which_d_heads.__wrapped__(128, 4, 0)
    labels = {"d_k": "a", "d_model": "b", "none": "c"}
    bars, points = story_data.divisor_frames(frame, "fan_in", "d_model", labels)
    assert list(bars.label) == ["a", "b", "c"]
    assert list(bars.selected) == [False, True, False]
    assert list(bars.color) == [story_data.DIVISOR_COLORS[d] for d in labels]
    assert len(points) == 3 * 4
    # the same scores divided by √32 and by √128: ratio √n_heads = 2 exactly
    std = bars.set_index("divisor")["std"]
    assert std["d_k"] / std["d_model"] == pytest.approx(2.0, rel=1e-12)
    assert bars.set_index("divisor").loc["d_k", "theory_std"] == pytest.approx(1.0)


def test_divisor_points_carry_their_bar_and_tick():
    """The per-head frame (the charts' CSV) holds every value the chart draws."""
    frame, _ = story_data.which_d_heads.__wrapped__(128, 4, 0)
    labels = {"d_k": "a", "d_model": "b", "none": "c"}
    bars, points = story_data.divisor_frames(frame, "one", "d_k", labels)
    assert list(points.columns) == [
        "label",
        "head",
        "std",
        "entropy",
        "mean_std",
        "mean_entropy",
        "theory_std",
        "rank",
    ]
    by_label = points.groupby("label", sort=False)
    for value in ("std", "entropy"):
        assert by_label[value].mean().tolist() == pytest.approx(bars[value].tolist(), rel=1e-12)
        assert by_label[f"mean_{value}"].nunique().eq(1).all()
        assert by_label[f"mean_{value}"].first().tolist() == bars[value].tolist()
    assert by_label["theory_std"].first().tolist() == bars["theory_std"].tolist()


@pytest.mark.parametrize("n_heads", [2, 3, 8, 64, 4096])
def test_std_options_are_distinct_and_the_answer_is_the_nearest(n_heads):
    values, labels = cards.std_options(n_heads)
    assert values == sorted(values) and len(set(labels)) == 4
    assert all(b / a >= math.sqrt(2) - 1e-12 for a, b in itertools.pairwise(values))
    assert cards.closest_option(values, n_heads**-0.5 * 1.15) == 1
    assert cards.closest_option(values, 0.97) == 2
    assert cards.closest_option(values, 0.0) == 0  # W_q = 0: no spread at all


def test_fan_in_means():
    frame, _ = story_data.which_d_heads(512, 8, 0)
    means = story_data.divisor_means(frame, "fan_in")
    assert list(means) == ["d_k", "d_model", "none"]
    assert means["d_model"]["std"] == pytest.approx(means["d_k"]["std"] / math.sqrt(8))
    assert means["d_k"]["std"] == pytest.approx(1.0, rel=0.05)
    entropy = [means[d]["entropy"] for d in ("none", "d_k", "d_model")]
    assert entropy == sorted(entropy)
    fan_in = frame[(frame.init == "fan_in") & (frame.divisor == "d_k")]
    assert means["d_k"]["entropy"] == pytest.approx(fan_in.entropy.mean())


def test_cached_numbers_are_the_charts_numbers():
    """The metrics' numbers (plain values) are the bars' and the lines' values."""
    labels = (("d_k", "a"), ("d_model", "b"), ("none", "c"))
    points, bars = story_frames.head_divisors(128, 4, 0, "one", "d_model", labels)
    assert list(bars.label) == ["a", "b", "c"] and list(bars.selected) == [False, True, False]
    assert set(points.label) == {"a", "b", "c"} and len(points) == 3 * 4
    means = story_data.head_means(128, 4, 0, "one")
    for _, row in bars.iterrows():
        assert [means[row.divisor][c] for c in ("std", "entropy", "max_weight")] == [
            row["std"],
            row["entropy"],
            row["max_weight"],
        ]
    cross = (("d_k", "a"), ("d_q", "b"), ("d_kv", "c"))
    points, bars = data.cross_divisors(64, 128, 16, 0, "fan_in", cross)
    assert list(bars.selected) == [True, False, False]
    assert len(points) == 3 * data.WHICH_D_CROSS_HEADS
    lines = data.qk_frame(512, 8, 0, ("raw", "ln"))
    now = data.qk_point(512, 8, 0, 4.0)
    at = lines[lines.scale == 4.0].set_index("series")["value"]
    assert (now[False]["std"], now[True]["std"]) == (at["raw"], at["ln"])
    # d_k = 1: LayerNorm maps everything to 0, no normalised line
    assert set(data.qk_frame(64, 64, 0, ("raw", "ln")).series) == {"raw"}
    extras = data.head_extras(128, 4, 0)
    assert extras["d_k"] == 32 and extras["quarter_gap"] < 1e-12
