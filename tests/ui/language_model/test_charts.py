"""Language-model page: chart builders (valid Vega-Lite, encodings, tooltips, axes)."""

from __future__ import annotations

import pytest

from ui.common.axes import PLAIN_LABEL
from ui.common.charts import COLORS, ChartText
from ui.language_model import charts, data, frames

LABELS = tuple((v, f"label {v}") for v in data.VARIANTS)
TIPS = {
    "series": "variant", "lr": "rate", "lo": "lowest", "hi": "highest", "step": "step",
    "sensitivity": "sensitivity", "best": "best rate", "reference": "reference",
    "onehot": "one-hot", "x0": "from", "x1": "to",
}  # fmt: skip


def text(**extra) -> ChartText:
    return ChartText.of(title="T", x="X", y="Y", alt="A", tips=TIPS, **extra)


def _layers(spec: dict) -> list[dict]:
    return spec.get("layer", [spec])


def _tooltips(layer: dict) -> list[dict]:
    tips = layer.get("encoding", {}).get("tooltip", [])
    return tips if isinstance(tips, list) else [tips]


def test_logit_histogram():
    df = frames.logits_at_start(64, LABELS)
    spec = charts.logit_histogram(df, text()).to_dict()
    (line,) = _layers(spec)
    assert line["mark"]["interpolate"] == "step"
    assert line["encoding"]["y"]["scale"]["type"] == "sqrt"
    assert line["encoding"]["color"]["scale"]["range"] == [
        COLORS["sqrt"], COLORS["unscaled"], COLORS["linear"], COLORS["custom"]
    ]  # fmt: skip
    assert [t["title"] for t in _tooltips(line)] == ["variant", "from", "to", "Y"]


def test_loss_against_rate():
    df = frames.loss_against_rate(16, LABELS)
    spec = charts.loss_against_rate(
        df, text(reference="unigram"), reference=3.36, y_domain=(2.2, 3.5), rates=(0.001, 0.3)
    ).to_dict()
    band, line, best, rule, words = _layers(spec)
    assert band["mark"]["type"] == "area" and band["mark"]["tooltip"] is False
    x = line["encoding"]["x"]
    assert x["scale"]["type"] == "log" and x["axis"]["labelExpr"] == PLAIN_LABEL
    assert x["axis"]["values"][:3] == [0.001, 0.01, 0.1]
    assert {t["field"] for t in _tooltips(line)} >= {"lo", "hi", "sensitivity"}
    assert best["mark"]["type"] == "point"
    assert rule["mark"]["type"] == "rule" and words["mark"]["align"] == "left"


@pytest.mark.parametrize(("name", "log_y"), [("max_logit", True), ("entropy", False)])
def test_over_training(name, log_y):
    df = frames.over_training(64, 0.3, name, 0, LABELS)
    options = {"log_y": True, "y_domain": (0.3, 4e5)} if log_y else {"reference": 3.21}
    spec = charts.over_training(df, text(reference="even"), **options).to_dict()
    band, line, *rest = _layers(spec)
    assert band["mark"]["clip"] and line["mark"]["clip"]
    y = line["encoding"]["y"]
    if log_y:
        assert y["scale"]["type"] == "log" and "values" in y["axis"]
        assert _tooltips(line)[2]["format"] == ",.4r"  # 274,300, not 2.743e+5
        assert _tooltips(line)[-1]["field"] == "onehot"
    else:
        assert [layer["mark"]["type"] for layer in rest] == ["rule", "text"]
        assert rest[1]["mark"]["align"] == "right"


def test_next_char_bars():
    df = frames.next_chars("ROMEO. ", 64, 0.8, LABELS, ("space", "new line"))
    spec = charts.next_char_bars(df, text()).to_dict()
    enc = spec["encoding"]
    assert enc["yOffset"]["field"] == "series" and enc["y"]["field"] == "char"
    top = enc["x"]["scale"]["domain"][1]
    assert top in (0.25, 0.5, 0.75, 1.0) and df["p"].max() <= top
    assert enc["y"]["sort"][0] == df.sort_values("rank")["char"].iloc[0]
