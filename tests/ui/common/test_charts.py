"""Shared chart builders: sweep lines against d_k, valid Vega-Lite, intended encodings."""

import altair as alt
import numpy as np
import pandas as pd
import pytest

from ui.common import charts


def _layers(spec):
    return spec.get("layer", [spec])


def test_sweep_lines():
    d = 2.0 ** np.arange(13)
    rows = []
    for alpha, label in ((0.0, "none"), (0.5, "sqrt"), (1.0, "linear")):
        rows.append(
            pd.DataFrame(
                {
                    "d": d,
                    "series": label,
                    "color": charts.alpha_color(alpha),
                    "value": 0.5,
                    "lo": 0.4,
                    "hi": 0.6,
                }
            )
        )
    df = pd.concat(rows, ignore_index=True)
    ref = pd.DataFrame({"y": [np.log(10)], "label": ["ln n"]})
    spec = charts.sweep_lines(
        df,
        current_d=64,
        title="T",
        x_title="d",
        y_title="y",
        description="a",
        reference=ref,
        y_domain=(0, 1),
    ).to_dict()
    layers = _layers(spec)
    assert [
        layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
        for layer in layers
    ] == [
        "area",
        "line",
        "rule",
        "text",
        "rule",
    ]
    color = layers[1]["encoding"]["color"]["scale"]
    assert color["domain"] == ["none", "sqrt", "linear"]
    assert color["range"] == [
        charts.COLORS["unscaled"],
        charts.COLORS["sqrt"],
        charts.COLORS["linear"],
    ]
    assert layers[1]["encoding"]["y"]["scale"]["domain"] == [0, 1]
    assert charts.alpha_color(0.75) == charts.COLORS["custom"]
    assert (layers[3]["mark"]["align"], layers[3]["mark"]["baseline"]) == ("left", "bottom")


@pytest.mark.parametrize(
    ("placement", "align", "baseline", "x"),
    [
        ("above_left", "left", "bottom", 4),
        ("above_right", "right", "bottom", "width"),
        ("below_right", "right", "top", "width"),
    ],
)
def test_sweep_lines_reference_label_placement(placement, align, baseline, x):
    df = pd.DataFrame(
        {"d": [1.0, 2.0], "series": "s", "color": "#000000", "value": 0.5, "lo": 0.4, "hi": 0.6}
    )
    ref = pd.DataFrame({"y": [0.1], "label": ["1/n_keys = 0.1"]})
    kwargs = dict(current_d=1, title="T", x_title="d", y_title="y", description="a", reference=ref)
    text = _layers(charts.sweep_lines(df, reference_label=placement, **kwargs).to_dict())[3]
    assert text["mark"]["type"] == "text"
    assert (text["mark"]["align"], text["mark"]["baseline"], text["mark"]["x"]) == (
        align,
        baseline,
        x,
    )
    # below the rule means a positive offset (down), above a negative one
    assert (text["mark"]["dy"] > 0) == (baseline == "top")
    with pytest.raises(ValueError, match="reference_label must be one of"):
        charts.sweep_lines(df, reference_label="middle", **kwargs)


def test_sweep_lines_use_channel_objects(monkeypatch):
    """No shorthand strings or dicts in encodings: each costs a schema walk per rerun."""
    from altair.utils import core

    calls = []
    real = core._ChannelCache._wrap_in_channel

    def spy(self, obj, encoding):
        if not isinstance(obj, (alt.SchemaBase, list, tuple)):
            calls.append((encoding, obj))
        return real(self, obj, encoding)

    monkeypatch.setattr(core._ChannelCache, "_wrap_in_channel", spy)
    test_sweep_lines()
    assert not calls, calls


def test_check_rows():
    ok = pd.DataFrame({"x": range(charts.MAX_ROWS)})
    assert charts.check_rows(ok) is ok
    with pytest.raises(ValueError, match="at most 5000 rows"):
        charts.check_rows(pd.DataFrame({"x": range(charts.MAX_ROWS + 1)}))
