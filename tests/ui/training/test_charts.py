"""Training page: chart builders (valid Vega-Lite, encodings, row counts) and data helpers."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from core.training import DEFAULT_LRS, LR_GRIDS, Variant, final_loss, train_recall_variants
from ui.common import axes
from ui.common.charts import MAX_ROWS, ChartText
from ui.common.specs import finished
from ui.training import charts, data
from ui.training.runs import M_OPTIONS


def _layers(spec: dict) -> list[dict]:
    inner = spec.get("spec", spec)
    return inner.get("layer", [inner])


def _curve_frame(n_steps=100, names=("a", "b")) -> pd.DataFrame:
    step = np.arange(n_steps)
    return pd.DataFrame(
        {
            "step": np.tile(step, len(names)),
            "series": np.repeat(names, n_steps),
            "color": np.repeat(["#D55E00", "#0072B2"][: len(names)], n_steps),
            "raw": np.linspace(1.0, 0.01, n_steps * len(names)),
            "smooth": np.linspace(1.0, 0.01, n_steps * len(names)),
        }
    )


CURVE_TIPS = {
    "series": "scaling",
    "step": "step",
    "smooth": "avg",
    "raw": "batch",
    "reference": "ref",
}
PROBE_TIPS = {"series": "scaling", "row": "probe row", "key": "key", "weight": "w"}
LR_TIPS = dict.fromkeys(("series", "lr", "value", "lo", "hi", "ratio", "diverged", "initial"), "")
LR_TIPS |= {"lr": "learning rate", "initial": "ℓ₀"}


def _titles(layer) -> list[str]:
    return [tip["title"] for tip in layer["encoding"]["tooltip"]]


def _text(tips: dict[str, str], **entries: str) -> ChartText:
    return ChartText.of(**({"title": "T", "x": "x", "y": "y", "alt": "alt"} | entries), tips=tips)


def test_curves_spec_has_points_line_and_reference():
    text = _text(CURVE_TIPS, title="Loss", x="step", y="loss", reference="uniform")
    spec = charts.curves(_curve_frame(), text, log_y=True, reference=math.log(16)).to_dict()
    layers = _layers(spec)
    assert [layer["mark"]["type"] for layer in layers] == ["circle", "line", "rule", "text"]
    assert spec["title"] == {"text": "Loss"} and layers[0]["encoding"]["x"]["title"] == "step"
    assert layers[0]["encoding"]["y"]["field"] == "raw"
    assert layers[1]["encoding"]["y"]["field"] == "smooth"
    assert layers[1]["encoding"]["y"]["scale"]["type"] == "log"
    assert layers[1]["encoding"]["color"]["scale"]["domain"] == ["a", "b"]
    assert layers[1]["encoding"]["color"]["legend"]["orient"] == "bottom"
    assert spec["description"] == "alt"
    assert "color" not in next(iter(spec["datasets"].values()))[0]
    assert _titles(layers[1]) == ["scaling", "step", "avg", "batch"]  # from the catalog
    assert _titles(layers[2]) == ["ref", "loss"]
    # the reference line at its y, labelled with the chart's text
    rule = spec["datasets"][layers[2]["data"]["name"]]
    assert rule == [{"y": math.log(16), "label": "uniform"}]
    assert layers[3]["encoding"]["text"]["field"] == "label"
    # a hover anywhere on a line finds its nearest step: invisible points carry the
    # tooltip (a line's own tooltip shows its first point), and so do the faint points
    assert layers[1]["mark"]["point"] == {"filled": True, "opacity": 0, "size": 60}
    assert _titles(layers[0]) == _titles(layers[1])
    assert layers[1]["encoding"]["tooltip"][1]["format"] == "d"
    axis = layers[1]["encoding"]["y"]["axis"]
    assert axis["labelExpr"] in (axes.PLAIN_LABEL, axes.EXP_LABEL)


def test_curves_fixed_domain():
    spec = charts.curves(_curve_frame(), _text(CURVE_TIPS), y_domain=(0, 1)).to_dict()
    layers = _layers(spec)
    assert layers[1]["encoding"]["y"]["scale"]["domain"] == [0, 1]
    assert len(layers) == 2  # no reference line asked for


def test_builders_refuse_too_many_rows():
    with pytest.raises(ValueError, match="at most"):
        charts.curves(_curve_frame(MAX_ROWS), _text(CURVE_TIPS))


def test_probe_heatmap_one_scaling_at_its_containers_width_with_keys_and_steps_labelled():
    snaps, rows, keys = (0, 10, 50, 299), 4, 16
    s, r, k = np.meshgrid(snaps, np.arange(rows), np.arange(keys), indexing="ij")
    df = pd.DataFrame(
        {"snapshot": s.ravel(), "row": r.ravel(), "key": k.ravel(), "weight": 1 / keys,
         "target": (k == r).ravel().astype(int), "series": "none"}
    )  # fmt: skip
    text = _text(PROBE_TIPS, title="W", x="key", y="step", color="weight")
    spec = charts.probe_heatmap(df, text).to_dict()
    # one scaling per chart, no facet: the page draws one per column, and a chart without
    # a width takes its column's (Streamlit's "stretch"), so the cells grow with the screen
    assert "facet" not in spec and "width" not in spec
    rect, outline = spec["layer"]
    enc = rect["encoding"]
    # every key labelled along x, every step along y, the probe rows inside each step
    assert enc["x"]["field"] == "key" and enc["x"]["axis"].get("labels", True) is True
    assert enc["x"]["axis"]["labelAngle"] == 0
    assert enc["y"]["field"] == "snapshot" and enc["y"]["title"] == "step"
    assert enc["yOffset"]["field"] == "row"
    assert enc["x"]["axis"]["grid"] is False and enc["y"]["axis"]["grid"] is False
    assert enc["color"]["scale"]["domain"] == [0, 1] and enc["color"]["title"] == "weight"
    assert spec["title"] == "W" and spec["description"] == "alt"
    assert outline["transform"] == [{"filter": "(datum.target === 1)"}]
    # rows tall enough to read
    band = spec["height"] * (1 - charts.PROBE_STEP_GAP) / len(snaps)
    assert band / rows == pytest.approx(charts.PROBE_ROW_PX, rel=0.02)
    assert charts.PROBE_ROW_PX >= 10
    assert _titles(rect) == ["scaling", "step", "probe row", "key", "w"]
    assert _titles(outline) == _titles(rect)
    assert len(next(iter(spec["datasets"].values()))) == 4 * rows * keys


def _lr_frame(scale: float = 1.0):
    lrs = np.asarray(LR_GRIDS["adam"])
    return pd.DataFrame(
        {
            "lr": np.tile(lrs, 2),
            "series": np.repeat(["none", "sqrt"], lrs.size),
            "value": scale * np.linspace(0.9, 0.005, 2 * lrs.size),
            "lo": scale * np.linspace(0.8, 0.004, 2 * lrs.size),
            "hi": scale * np.linspace(0.95, 0.006, 2 * lrs.size),
            "ratio": np.linspace(1.0, 0.01, 2 * lrs.size),
            "diverged": 0,
        }
    )


#: The two series of :func:`_lr_frame` and the options every sweep chart is drawn with.
LR_OPTIONS = {
    "series": (("none", "#D55E00"), ("sqrt", "#0072B2")),
    "lr_range": (LR_GRIDS["adam"][0], LR_GRIDS["adam"][-1]),
    "y_domain": (1e-3, 1.2),
}


def test_lr_lines_log_log_with_rules():
    initial = pd.DataFrame({"series": ["none", "sqrt"], "y": [0.88, 0.54]})
    text = _text(LR_TIPS, title="Final loss|Adam", x="lr", y="loss")
    spec = charts.lr_lines((_lr_frame(), initial), text, current_lr=0.01, **LR_OPTIONS).to_dict()
    layers = _layers(spec)
    assert [layer["mark"]["type"] for layer in layers] == ["area", "line", "rule", "rule"]
    assert layers[1]["encoding"]["x"]["scale"]["type"] == "log"
    assert layers[1]["encoding"]["y"]["scale"]["type"] == "log"
    assert layers[2]["encoding"]["color"]["field"] == "series"  # ℓ₀ in each scaling's colour
    # the legend in the options' order and colours
    assert layers[1]["encoding"]["color"]["scale"] == {
        "domain": ["none", "sqrt"],
        "range": ["#D55E00", "#0072B2"],
    }
    assert spec["title"]["text"] == ["Final loss", "Adam"]
    assert _titles(layers[1])[1] == "learning rate" and _titles(layers[2])[1] == "ℓ₀"
    assert _titles(layers[3]) == ["learning rate"]  # the learner's rate
    # the rate axis in one format: Adam's grid 1e−6 … 1, every other decade on 300 px
    x_axis = layers[1]["encoding"]["x"]["axis"]
    assert x_axis["labelExpr"] == axes.EXP_LABEL
    assert x_axis["values"] == [1e-6, 1e-4, 1e-2, 1.0]
    # uniform attention's loss: one grey rule, the scale every verdict is read on
    text = _text(LR_TIPS | {"uniform": "uniform"}, x="lr", y="loss")
    with_uniform = charts.lr_lines(_lr_frame(), text, uniform=0.21875, **LR_OPTIONS).to_dict()
    rule = _layers(with_uniform)[-1]
    assert rule["mark"]["type"] == "rule" and rule["mark"]["color"] == "#7A7A7A"
    assert _titles(rule) == ["uniform"]


def test_lr_lines_without_marker_on_the_given_domain():
    text = _text(LR_TIPS, title="d_k = 16", x="lr", y="loss")
    spec = charts.lr_lines(_lr_frame(), text, **LR_OPTIONS).to_dict()
    layers = _layers(spec)
    assert len(layers) == 2
    assert spec["title"] == {"text": "d_k = 16"}  # one line: a string, not a list
    assert layers[1]["encoding"]["y"]["scale"]["domain"] == [1e-3, 1.2]


def test_lr_lines_draws_its_frames_as_they_are():
    """One spec for every sweep (``swap_data``): two frames of other values give the same
    spec once their datasets are set aside."""
    text = _text(LR_TIPS | {"initial": "ℓ₀"}, title="Final loss|Adam", x="lr", y="loss")
    specs = []
    for scale in (1.0, 0.3):
        initial = pd.DataFrame({"series": ["none", "sqrt"], "y": [0.88 * scale, 0.54 * scale]})
        made = (_lr_frame(scale), initial)
        spec = finished(charts.lr_lines(made, text, current_lr=0.01, **LR_OPTIONS), placed=made)
        specs.append(spec)
    assert specs[0] == specs[1]
    data_names = {layer["data"]["name"] for layer in _layers(specs[0]) if "data" in layer}
    assert {"data-0", "data-1"} <= data_names  # the frames, by their place


# --- data helpers ---------------------------------------------------------------------------
def test_lr_options_cover_both_grids_and_defaults():
    options = set(data.LR_OPTIONS)
    assert len(data.LR_OPTIONS) == 41  # 1e-6 … 1e4 in quarter decades
    for opt in ("sgd", "adam"):
        assert {data.lr_text(lr) for lr in LR_GRIDS[opt]} <= options
        assert data.lr_text(DEFAULT_LRS[opt]) in options
    assert data.LR_OPTIONS[0] == "0.000001" and data.LR_OPTIONS[-1] == "10000"
    for text in data.LR_OPTIONS:  # the text is the value, within 3 significant digits
        k = data.LR_OPTIONS.index(text) - 24
        assert float(text) == pytest.approx(10 ** (k / 4), rel=5e-3)


def test_smooth_is_a_centred_mean_with_short_ends():
    x = np.arange(20, dtype=float)
    out = data.smooth(x, window=3)
    assert out[5] == pytest.approx(5.0)
    assert out[0] == pytest.approx(0.5)  # (0 + 1) / 2
    y = x.copy()
    y[10:] = np.nan  # a diverged run: NaN stays NaN, finite values are not pulled by it
    out = data.smooth(y, window=3)
    assert np.isnan(out[10:]).all()
    assert out[9] == pytest.approx(8.5)


def test_thinned_steps_keep_the_last_and_bound_the_count():
    for steps in (100, 300, 1000, 7):
        kept = data.thinned_steps(steps)
        assert kept[0] == 0 and kept[-1] == steps - 1
        assert len(kept) <= data.CURVE_POINTS + 1
    assert list(data.thinned_steps(100)) == list(range(100))


@pytest.mark.parametrize(
    ("gap", "verdict"),
    [(0.05, "learns"), (0.0999, "learns"), (0.5, "partly"), (0.9001, "fails"), (1.2, "fails"),
     (-0.2, "learns"), (float("nan"), "diverged")],
)  # fmt: skip
@pytest.mark.parametrize("m", [1, 2, 4])
def test_verdict_on_the_task_scale(gap, verdict, m):
    """A final loss at gap left g from the task's best: ℓ* + g (ℓ_u − ℓ*)."""
    best, u = data.task_best(m), data.uniform(m)
    assert 0 < best < u
    final = best + gap * (u - best)
    assert data.verdict(final, m) == verdict
    if math.isfinite(final):
        assert data.gap_left(final, m) == pytest.approx(gap, abs=1e-12)


def test_variants_match_the_sweep_file():
    doc = json.loads(data.SWEEP_FILE.read_text(encoding="utf-8"))
    file_variants = {
        v["name"]: Variant(v["alpha"], v["init"], v["qk_norm"]) for v in doc["variants"]
    }
    assert file_variants == {k: data.VARIANTS[k] for k in data.BASE_VARIANTS}
    assert tuple(doc["m"]) == M_OPTIONS
    assert tuple(doc["d_k"]) == data.SWEEP_D_KS
    assert tuple(doc["seeds"]) == data.PRECOMPUTED_SEEDS
    assert doc["params"]["steps"] == data.PRECOMPUTED_STEPS
    assert doc["params"]["n_keys"] == data.N_KEYS and doc["params"]["last"] == data.LAST


def test_precomputed_cells_and_needed_cells():
    cells = data.precomputed()
    n = data.SWEEP_SEEDS
    assert len(cells) == 3 * 2 * 4 * n
    frame = cells[(2, "adam", 64, 0, 300)]
    assert list(frame.columns) == list(data.CELL_COLUMNS)
    assert len(frame) == 3 * len(LR_GRIDS["adam"])
    needed = data.needed_cells(4, "sgd", 24, 5, 300)
    assert needed[:n] == [(4, "sgd", 24, 5 + i, 300) for i in range(n)]
    assert len(needed) == 5 * n
    assert len(data.needed_cells(1, "sgd", 64, 0, 300)) == 4 * n
    # the folded initialisation and QK-norm are not in the file: computed on demand
    assert data.shipped_cell((1, "adam", 64, 0, 300), data.BASE_VARIANTS) is not None
    assert data.shipped_cell((1, "adam", 64, 0, 300), (*data.BASE_VARIANTS, "folded")) is None


def test_a_computed_cell_equals_the_shipped_one_where_runs_do_not_separate():
    """The page's "Compute now" path (task m = 4) against the shipped cell: ℓ₀ and the
    final losses at the two lowest rates (runs that do not separate: test_sweep_data) to
    the file's 4 digits; at larger rates a run amplifies last-bit rounding."""
    variants = data.BASE_VARIANTS
    computed = data.sweep_cell(4, "sgd", 16, 0, 300, variants)
    shipped = data.precomputed()[(4, "sgd", 16, 0, 300)].reset_index(drop=True)
    assert list(computed["variant"]) == list(shipped["variant"])
    np.testing.assert_allclose(computed["initial_loss"], shipped["initial_loss"], rtol=5e-4)
    steady = computed["lr"] <= LR_GRIDS["sgd"][1]
    assert steady.sum() == 2 * len(variants)
    np.testing.assert_allclose(
        computed["final_loss"][steady], shipped["final_loss"][steady], rtol=5e-4
    )
    assert (computed["diverged_at"][steady] == shipped["diverged_at"][steady]).all()


def test_sweep_summary_and_conclusions_from_the_file():
    cells = [data.precomputed()[(2, "adam", 64, s, 300)] for s in data.PRECOMPUTED_SEEDS]
    summary = data.sweep_summary(cells, 2)
    assert len(summary) == 3 * len(LR_GRIDS["adam"])
    one = summary[(summary["variant"] == "alpha_0") & (summary["lr"] == 0.01)].iloc[0]
    values = [
        c[(c["variant"] == "alpha_0") & (c["lr"] == 0.01)]["final_loss"].iloc[0] for c in cells
    ]
    assert one["value"] == pytest.approx(np.median(values), rel=1e-15)
    assert one["lo"] == min(values) and one["hi"] == max(values)  # copies of file values
    per = data.conclusions(cells, 2)
    from core.training import lr_sensitivity

    per_seed = [
        lr_sensitivity(c[c["variant"] == "alpha_half"]["final_loss"].to_numpy(), 0.21875)
        for c in cells
    ]  # capped at uniform attention's loss, the same for every variant
    half = per["alpha_half"]
    assert half["sensitivity"] == pytest.approx(np.median(per_seed), rel=1e-12)
    assert (half["sensitivity_lo"], half["sensitivity_hi"]) == (min(per_seed), max(per_seed))
    best = summary[summary["variant"] == "alpha_half"].set_index("lr")["value"].idxmin()
    assert half["best_lr"] == best


@pytest.mark.parametrize("m", [1, 4])
def test_single_run_frames_are_small_and_match_core(m):
    run = data.single_run(16, "sgd", 1.0, 100, data.BASE_VARIANTS, 0, m)
    histories = train_recall_variants(
        16, [data.VARIANTS[v] for v in data.BASE_VARIANTS], [1.0], optimizer="sgd", steps=100,
        seed=0, snapshot_steps=data.SNAPSHOTS, n_probe=data.N_PROBE, m=m,
    )  # fmt: skip
    summary = run["summary"]
    for h, final in zip(histories, summary["final_loss"], strict=True):
        assert final == pytest.approx(float(final_loss(h, 30)[0]), rel=1e-12)
    for metric in data.METRICS:
        frame = run["curves"][metric]
        assert len(frame) == 3 * 100
        assert frame["raw"].dtype == np.float32
    probe = run["probe"]
    assert len(probe) == 3 * 4 * data.N_PROBE * data.N_KEYS  # snapshots 0, 10, 50, 99
    sums = probe.groupby(["variant", "snapshot", "row"])["weight"].sum()
    np.testing.assert_allclose(sums, 1.0, rtol=1e-5)
    assert (probe.groupby(["variant", "snapshot", "row"])["target"].sum() == m).all()
    first = probe[(probe["variant"] == "alpha_0") & (probe["snapshot"] == 0)]
    for row, targets in enumerate(histories[0].probe_target):
        marked = first[(first["row"] == row) & (first["target"] == 1)]["key"]
        assert sorted(marked) == sorted(targets)
    assert list(summary["initial_loss"]) == [h.initial_loss for h in histories]
