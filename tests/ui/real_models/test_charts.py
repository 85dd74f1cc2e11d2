"""Real-models chart builders and frames: valid Vega-Lite, encodings, row counts."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from core import real_models as rm
from ui.common import i18n
from ui.common.charts import ChartText
from ui.real_models import charts, data, frames
from ui.real_models.field_guide import COLUMNS, ROWS
from ui.story.trained_charts import REAL_DIVISOR_COLORS

TIPS = {"layer": "layer", "head": "head", "value": "v", "min": "lo", "max": "hi"}


def _grid(n_layers=6, n_heads=12):
    rng = np.random.default_rng(0)
    v = rng.uniform(0.5, 3.0, n_layers * n_heads)
    return pd.DataFrame(
        {
            "layer": np.repeat(np.arange(n_layers), n_heads),
            "head": np.tile(np.arange(n_heads), n_layers),
            "std": v,
            "std_min": v - 0.1,
            "std_max": v + 0.1,
        }
    )


@pytest.mark.parametrize("log_color", [False, True])
def test_head_grid_heatmap(log_color):
    df = _grid()
    text = ChartText.of(title="T\nsub", x="head", y="layer", color="std", alt="alt", tips=TIPS)
    spec = charts.head_grid_heatmap(df, text, value="std", log_color=log_color).to_dict()
    assert spec["description"] == "alt"
    assert spec["title"]["text"] == ["T", "sub"]  # a line break of the text stays
    assert spec["encoding"]["x"]["field"] == "head" and spec["encoding"]["y"]["field"] == "layer"
    # no grid lines across the cells
    assert spec["encoding"]["x"]["axis"]["grid"] is False
    assert spec["encoding"]["y"]["axis"]["grid"] is False
    rect, text = spec["layer"]
    # the cells' numbers only where 12 heads leave a cell 17 px wide; the ramp fits the plot
    assert text["mark"]["opacity"] == {"expr": "width >= 204 ? 1 : 0"}
    assert rect["encoding"]["color"]["legend"]["gradientLength"] == {
        "expr": "clamp(width - 50, 60, 200)"
    }
    assert rect["encoding"]["color"]["field"] == "std"
    assert rect["encoding"]["color"]["scale"].get("type") == ("log" if log_color else None)
    assert rect["encoding"]["color"]["legend"]["orient"] == "bottom"
    assert text["encoding"]["text"]["field"] == "std"
    # each number in black or white, whichever contrasts more with its own cell
    assert text["mark"]["color"] == charts.cell_ink("std").to_dict()
    assert "color" not in text["encoding"] and "resolve" not in spec
    assert [tip["title"] for tip in rect["encoding"]["tooltip"]] == list(TIPS.values())
    assert rect["encoding"]["color"]["title"] == "std"
    (rows,) = spec["datasets"].values()
    assert len(rows) == 72


def test_one_sentence_grid_names_its_extremes_and_draws_the_same_chart():
    """The CSV of one sentence's std grid says what its extremes are (the smallest and
    largest logit); the chart reads them under the fields the glance grid uses."""
    c = data.corpus()
    frame = frames.sentence_grid(4, None, "none", "std")
    assert list(frame.columns) == ["layer", "head", "std", "logit_min", "logit_max"]
    z = c.logits[4] * rm.logit_multiplier("none", c.d_k)  # (layers, heads, T, T)
    np.testing.assert_allclose(frame["logit_max"], z.max(axis=(-2, -1)).ravel(), rtol=1e-12)
    lo, hi = data.grid_range(data.shipped_heads(4), "none", c.d_k, "std")
    assert (lo, hi) == (frame["std"].min(), frame["std"].max())
    text = ChartText.of(title="T", x="head", y="layer", color="std", alt="alt", tips=TIPS)
    named = charts.head_grid_heatmap(
        frame, text, value="std", extremes=frames.SENTENCE_EXTREMES["std"]
    ).to_dict()
    plain = charts.head_grid_heatmap(
        frame.rename(columns={"logit_min": "std_min", "logit_max": "std_max"}), text, value="std"
    ).to_dict()
    assert named == plain
    rect = named["layer"][0]
    assert [tip["field"] for tip in rect["encoding"]["tooltip"]][2:] == [
        "std",
        "std_min",
        "std_max",
    ]


def test_logit_histogram():
    bars, curve = frames.histogram()
    text = ChartText.of(
        title="T", x="x", y="density", alt="alt", bars="pooled", curve="N(0, 1)",
        tips={"bin_from": "from", "bin_to": "to"},
    )  # fmt: skip
    spec = charts.logit_histogram((bars, curve), text).to_dict()
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["bar", "line"]
    # bars rise from 0: a bar ranged in x without a base is drawn as a tick at its height
    assert spec["layer"][0]["encoding"]["y2"] == {"datum": 0}
    assert [tip["title"] for tip in spec["layer"][0]["encoding"]["tooltip"][:2]] == ["from", "to"]
    assert [tip["title"] for tip in spec["layer"][1]["encoding"]["tooltip"]] == ["x", "density"]
    assert spec["layer"][0]["encoding"]["color"]["scale"]["domain"] == ["pooled", "N(0, 1)"]
    assert sorted(len(v) for v in spec["datasets"].values()) == [64, 161]
    assert len(bars) == len(data.HIST_EDGES) - 1
    # N(0, 1) on the grid, and the pooled histogram integrates to the share inside [−8, 8]
    assert curve["density"].max() == pytest.approx(1 / math.sqrt(2 * math.pi))
    hist = data.corpus().hist
    inside = float((bars["density"] * (bars["x1"] - bars["x0"])).sum())
    assert inside == pytest.approx(1 - hist["below"] - hist["above"], rel=1e-12)


def test_attention_heatmap_labels_rows_with_tokens():
    c = data.corpus()
    frame = data.head_frame(0, 0, 5, "sqrt_d_k")
    tokens = list(c.tokens[0])
    t = len(tokens)
    assert len(frame) == t * t
    text = ChartText.of(
        title="A\nB", x="key", y="query", color="w", alt="alt",
        tips={"query": "q", "key": "k", "trained": "tr", "logit": "z", "weight": "p"},
    )  # fmt: skip
    spec = charts.attention_heatmap(frame, text, tokens=c.tokens[0]).to_dict()
    enc = spec["encoding"]
    assert enc["x"]["field"] == "key" and enc["y"]["field"] == "query"
    assert enc["x"]["axis"]["labelExpr"].startswith('["[CLS]", "the", "cat"')
    assert enc["y"]["axis"]["labelOverlap"] is False
    assert enc["x"]["axis"]["grid"] is False and enc["y"]["axis"]["grid"] is False
    assert enc["color"]["scale"]["domain"] == [0, 1]
    assert [tip["field"] for tip in enc["tooltip"]] == [
        "query_token", "key_token", "trained", "logit", "weight",
    ]  # fmt: skip
    assert spec["height"] == 190 + 22 * t
    assert enc["color"]["title"] == "w" and spec["title"]["text"] == ["A", "B"]
    (rows,) = spec["datasets"].values()
    assert len(rows) == t * t and "row_entropy" not in rows[0]


def test_head_frame_divisors_rescale_the_same_logits():
    """The chart columns are float32: the trained logits (float16 values) exactly, the
    others rounded once, within half a float32 spacing (relative 2^-24)."""
    c = data.corpus()
    maps = {d: data.head_frame(3, 2, 7, d) for d in rm.DIVISORS}
    trained = maps["sqrt_d_k"]["trained"].to_numpy(dtype=np.float64)
    np.testing.assert_array_equal(trained, c.logits[3][2, 7].ravel())  # exact by construction
    r = math.sqrt(c.d_k)
    half_ulp = 2.0**-24
    assert maps["sqrt_d_k"]["logit"].to_numpy() == pytest.approx(trained, rel=half_ulp)
    assert maps["none"]["logit"].to_numpy() == pytest.approx(trained * r, rel=half_ulp)
    assert maps["d_k"]["logit"].to_numpy() == pytest.approx(trained / r, rel=half_ulp)
    t = c.logits[3].shape[-1]
    for frame in maps.values():
        # T weights each within 2^-24 relative, summed in float32: T more roundings at most
        sums = frame.groupby("query")["weight"].sum().to_numpy(dtype=np.float64)
        assert sums == pytest.approx(np.ones(t), rel=2 * t * half_ulp)
        assert frame["query"].dtype == np.int16 and frame["query_token"].dtype == "category"
    m = {d: data.head_metrics(f) for d, f in maps.items()}
    assert m["none"]["entropy"] < m["sqrt_d_k"]["entropy"] < m["d_k"]["entropy"] < math.log(t)
    # the page's numbers of a head: the same metrics, cached as plain values
    assert data.head_stats(3, None, 2, 7, "none") == m["none"]
    assert data.Chosen(data.shipped_heads(3), index=3).head_stats(2, 7, "d_k") == m["d_k"]


def test_divisor_layer_bars():
    layers = frames.layers()
    assert len(layers) == 18
    labels = (("none", "none"), ("sqrt_d_k", "√d_k"), ("d_k", "d_k"))
    words = {"title": "T", "x": "layer", "y": "share", "alt": "alt", "reference": "ln T"}
    text = ChartText.of(**words, tips={"series": "divisor", "reference": "reference line"})
    spec = charts.divisor_layer_bars(
        layers, text, value="collapsed", labels=labels, fmt=".1%", axis_format="%",
        reference=2.7,
    ).to_dict()  # fmt: skip
    bars, rule = spec["layer"]
    assert [t["title"] for t in rule["encoding"]["tooltip"]] == ["reference line", "share"]
    assert spec["datasets"][rule["data"]["name"]] == [{"y": 2.7, "label": "ln T"}]
    assert [t["title"] for t in bars["encoding"]["tooltip"]] == ["divisor", "layer", "share"]
    with pytest.raises(ValueError, match=r"tips\.reference"):
        charts.divisor_layer_bars(
            layers, ChartText.of(**words, tips={"series": "divisor"}), value="collapsed",
            labels=labels, reference=2.7,
        )  # fmt: skip
    # the plot keeps its height; title and legend add to the chart's
    assert spec["height"] == 190 and spec["autosize"] == {"type": "fit-x", "contains": "padding"}
    assert bars["encoding"]["xOffset"]["field"] == "series"
    assert bars["encoding"]["y"]["axis"]["format"] == "%"
    assert bars["encoding"]["color"]["scale"]["range"] == [
        REAL_DIVISOR_COLORS[n] for n, _ in labels
    ]
    assert bars["encoding"]["color"]["scale"]["domain"] == ["none", "√d_k", "d_k"]
    assert rule["mark"]["type"] == "rule"
    assert sorted(len(v) for v in spec["datasets"].values()) == [1, 18]


def test_figures_match_the_reference_values():
    """The page's figures to the digits it prints (within half a unit of the last one,
    not a rounding that other last bits could flip at …5); the collapsed share is a count
    of heads below 0.1 nats (35.5 %, 1.4 %, 0 % of 1224)."""
    fig = data.figures(data.corpus())
    expected = [1.90, 2.15, 1.97, 1.47, 1.50, 1.21]
    np.testing.assert_allclose(fig["std_layers"], expected, rtol=0, atol=0.005)
    np.testing.assert_allclose(fig["collapsed"] * 1224, [435, 17, 0], rtol=0, atol=1e-9)
    assert fig["collapsed_heads"] == [(0, 2)]
    assert fig["std_hi_head"] == (0, 2)
    assert fig["pooled_std"] > fig["std_mean"]  # heads differ: pooling adds the spread


def test_field_guide_rows_have_sources():
    assert len(ROWS) >= 15
    assert len({row.id for row in ROWS}) == len(ROWS)
    for row in ROWS:
        assert row.source.startswith("https://"), row.id
    for lang in i18n.LANGUAGES:  # every cell in both catalogs (no empty one: test_catalogs)
        for row in ROWS:
            for col in COLUMNS:
                assert f"real_models.guide_{row.id}_{col}" in i18n.catalog(lang)
    en = i18n.catalog("en")
    models = " ".join(en[f"real_models.guide_{r.id}_model"] for r in ROWS)
    for name in ("GPT-2", "BERT", "T5", "Gemma 2", "Gemma 3", "DeepSeek-V2", "OLMo 2", "Qwen3",
                 "ViT-22B", "Llama 4", "Grok-1", "μP", "SSMax"):  # fmt: skip
        assert name in models


def test_field_guide_head_widths_as_the_sources_give_them():
    """T5: d_kv = 64 for small/base/large, 128 for 3B and 11B (their config.json);
    ViT-22B: width 6144 over 48 heads = 128 (Dehghani et al. 2023, Table 1)."""
    en = i18n.catalog("en")
    rows = {row.id: row for row in ROWS}
    cell = lambda row, col: en[f"real_models.guide_{row}_{col}"]  # noqa: E731
    assert cell("t5", "d_k").split()[0] == "64"
    assert all(size in cell("t5", "model") for size in ("small", "base", "large"))
    assert cell("t5_3b", "d_k").split()[0] == "128"
    assert all(size in cell("t5_3b", "model") for size in ("3B", "11B"))
    assert rows["t5_3b"].source.endswith("t5-3b/blob/main/config.json")
    assert cell("vit22b", "d_k").split()[0] == "128" == str(6144 // 48)
    assert "6144" in cell("vit22b", "d_k") and "Table 1" in cell("vit22b", "extras")
    for lang in i18n.LANGUAGES:  # the numbers are the same in both languages
        cat = i18n.catalog(lang)
        for row, width in (("t5", "64"), ("t5_3b", "128"), ("vit22b", "128")):
            assert cat[f"real_models.guide_{row}_d_k"].startswith(width)


def test_production_head_sizes_stay_between_64_and_256():
    """The field guide's d_k column, which the sqrt-vs-d page cites: every production
    model's head width is 64–256 (MiniLM, a distilled encoder, has 32; "—" and "any"
    are methods for any width)."""
    en = i18n.catalog("en")
    widths = {}
    for row in ROWS:
        cell = en[f"real_models.guide_{row.id}_d_k"].split()[0]
        if cell.isdigit():
            widths[row.id] = int(cell)
    assert widths.pop("minilm") == 32
    assert len(widths) >= 12 and all(64 <= w <= 256 for w in widths.values()), widths
    assert "between 64 and 256" in en["real_models.guide_lead"]
    assert "between 64 and 256" in en["sqrt_vs_d.why_d"]
