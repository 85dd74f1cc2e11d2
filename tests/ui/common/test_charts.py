"""Shared chart builders: sweep lines against d_k, valid Vega-Lite, intended encodings."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from tests.ui.helpers import legend_columns_at
from ui.common import axes, charts


def _layers(spec):
    return spec.get("layer", [spec])


TIPS = {"series": "scaling", "lo": "mean − 2 s.e.", "hi": "mean + 2 s.e.", "reference": "ref"}


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
    text = charts.ChartText.of(title="T", x="d", y="y", alt="a", tips=TIPS)
    spec = (
        charts.sweep_lines(df, text, reference=ref, y_domain=(0, 1)) + charts.d_marker()
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
    # every field titled in the page's words; numbers to 4 significant figures
    line_tips = layers[1]["encoding"]["tooltip"]
    assert [t["title"] for t in line_tips] == [
        "scaling",
        "dₖ",
        "y",
        "mean − 2 s.e.",
        "mean + 2 s.e.",
    ]
    assert [t.get("format") for t in line_tips] == [None, "d", ".4g", ".4g", ".4g"]
    assert [t["title"] for t in layers[2]["encoding"]["tooltip"]] == ["ref", "y"]
    assert layers[4]["encoding"]["tooltip"] == [
        {"field": "d", "format": "d", "title": "dₖ", "type": "quantitative"}
    ]


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
    words = charts.ChartText.of(title="T", x="d", y="y", alt="a", tips=TIPS)
    text = _layers(
        charts.sweep_lines(df, words, reference=ref, reference_label=placement).to_dict()
    )[3]
    assert text["mark"]["type"] == "text"
    assert (text["mark"]["align"], text["mark"]["baseline"], text["mark"]["x"]) == (
        align,
        baseline,
        x,
    )
    # below the rule means a positive offset (down), above a negative one
    assert (text["mark"]["dy"] > 0) == (baseline == "top")
    # text, not a mark: no colour of its own, so it takes the theme's ink when drawn
    assert "color" not in text["mark"]
    with pytest.raises(ValueError, match="reference_label must be one of"):
        charts.sweep_lines(df, words, reference=ref, reference_label="middle")


def test_builders_use_channel_objects():
    """Every encoding in a chart module is a channel object (``alt.X(...)``), never a bare
    shorthand string or a dict, which Altair parses through its schema on every build."""
    import ast
    from pathlib import Path

    bare = []
    for path in sorted(Path("ui").glob("*/charts.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "encode":
                for kw in node.keywords:
                    if isinstance(kw.value, ast.Constant | ast.Dict):
                        bare.append(f"{path}:{kw.value.lineno}: {kw.arg}")
    assert not bare, bare


def test_check_rows():
    ok = pd.DataFrame({"x": range(charts.MAX_ROWS)})
    assert charts.check_rows(ok) is ok
    with pytest.raises(ValueError, match="at most 5000 rows"):
        charts.check_rows(pd.DataFrame({"x": range(charts.MAX_ROWS + 1)}))


# --- titles and legends that fit a phone ---------------------------------------------------
def test_text_columns_counts_cjk_twice():
    assert charts.text_columns("d_k") == 3
    assert charts.text_columns("方差") == 4
    assert charts.text_columns("α 的值") == 6  # α is narrow, the space one, 的值 four


def test_wrap_text_breaks_english_at_spaces_only():
    text = "q·k as a running sum over dimensions (20 pairs), with ±1 and ±2 std envelopes"
    lines = charts.wrap_text(text, 26)
    assert " ".join(lines) == text
    assert all(charts.text_columns(line) <= 26 for line in lines)
    assert lines == [
        "q·k as a running sum over",
        "dimensions (20 pairs),",
        "with ±1 and ±2 std",
        "envelopes",
    ]
    # a word longer than the line keeps a line of its own, whole
    assert charts.wrap_text("a ‖∂p/∂s‖_F=d_k^−α‖J‖_F b", 6) == ["a", "‖∂p/∂s‖_F=d_k^−α‖J‖_F", "b"]


def test_wrap_text_breaks_chinese_between_characters_not_before_closing_punctuation():
    text = "每行最大权重（批次 4，序列长度 10），带 ±2 标准误"
    lines = charts.wrap_text(text, 12)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert all(charts.text_columns(line) <= 12 for line in lines)
    assert not any(line[0] in "，。、；：）" for line in lines)
    assert not any(line[-1] in "（" for line in lines)
    with pytest.raises(ValueError, match="columns must be at least 1"):
        charts.wrap_text("x", 0)


def test_chart_title_picks_a_wrapping_by_plot_width():
    assert charts.chart_title("Short") == "Short"  # fits everywhere: a plain string
    long = "Mean largest weight against d_k, n_keys = 10 (bands ±2 s.e.)"
    title = charts.chart_title(long, "a subtitle " * 8).to_dict()
    expr = title["text"]["expr"]
    # every wrapping holds the whole title; the narrowest is the fallback at the end
    narrow = charts.wrap_text(long, charts.TITLE_LINE_COLUMNS[0])
    assert expr.endswith(": " + json.dumps(narrow, ensure_ascii=False))
    assert expr.startswith("width >= ")
    widths = [int(w) for w in re.findall(r"width >= (\d+)", expr)]
    assert widths == sorted(widths, reverse=True)
    assert all(
        charts.text_columns(line) <= charts.SUBTITLE_LINE_COLUMNS for line in title["subtitle"]
    )


def test_legend_below_fits_the_narrowest_chart():
    short = charts.legend_below(["a", "b", "c", "d"]).to_dict()
    assert short["orient"] == "bottom"
    assert legend_columns_at(short, charts.NARROW_CHART_PX) == 4
    labels = ["none (α = 0)", "1/√d_k (α = ½)", "1/d_k (α = 1)", "α = 0.75"]
    legend = charts.legend_below(labels, columns=4).to_dict()
    entry = max(map(charts.text_columns, labels)) * charts.LEGEND_PX_PER_COLUMN
    entry_px = entry + charts.LEGEND_SYMBOL_PX
    most = legend_columns_at(legend, charts.NARROW_CHART_PX)
    assert most == int(charts.NARROW_CHART_PX // entry_px) == 2
    assert legend["labelLimit"] >= entry
    assert charts.legend_below(labels, columns=1).to_dict()["columns"] == 1
    # narrower plots (a half-width chart beside the open sidebar): fewer entries a row,
    # never more than fit, never fewer than one, never more than at the phone's width
    for width in range(120, 700, 7):
        k = legend_columns_at(legend, width)
        assert 1 <= k <= most
        assert k == 1 or k * entry_px <= width
        assert k == min(most, max(1, int(width // entry_px)))


def test_colours_read_on_light_and_dark_backgrounds():
    def luminance(hex_colour: str) -> float:
        rgb = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    def contrast(a: str, b: str) -> float:
        hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
        return (hi + 0.05) / (lo + 0.05)

    # the series and the exact laws; the orange d_k marker is a wide rule, not a series
    for role in ("theory", "unscaled", "sqrt", "linear", "custom"):
        for background in ("#FFFFFF", "#0E1117"):  # Streamlit's light and dark backgrounds
            assert contrast(charts.COLORS[role], background) >= 3, (role, background)


@pytest.mark.parametrize(
    "text",
    [
        "Short",
        "Mean largest weight against d_k, n_keys = 10 (bands ±2 s.e.), unscaled and scaled",
        "每行最大权重（批次 4，序列长度 10），带 ±2 标准误，这个标题足够长，需要换行才能放下",
    ],
)
def test_title_text_recovers_the_title(text):
    title = charts.chart_title(text)
    spec = title if isinstance(title, str) else title.to_dict()
    assert charts.title_text(spec) == text
    assert charts.title_text({"text": ["two", "lines"]}) == "two lines"


def test_wrap_text_keeps_the_line_breaks_it_is_given():
    assert charts.wrap_text("Logit std per head\nmean over sentences", 12) == [
        "Logit std", "per head", "mean over", "sentences",
    ]  # fmt: skip
    assert charts.wrap_text("a\nb", 80) == ["a", "b"]


def test_subtitle_wraps_to_the_columns_asked_for():
    subtitle = "line: median · band: 10–90 % of rows · dashed: mean"
    wide = charts.chart_title("T", subtitle).to_dict()["subtitle"]
    half = charts.chart_title(
        "T", subtitle, subtitle_columns=charts.HALF_SUBTITLE_LINE_COLUMNS
    ).to_dict()["subtitle"]
    assert max(map(charts.text_columns, wide)) <= charts.SUBTITLE_LINE_COLUMNS
    assert max(map(charts.text_columns, half)) <= charts.HALF_SUBTITLE_LINE_COLUMNS < 40
    assert half != wide and " ".join(half) == " ".join(wide) == subtitle


def _label_at(expr: str, label: str, width: int):
    """Evaluate a legend_below labelExpr (nested `label === … && width < N ? … :`)."""
    for name, need, lines in re.findall(
        r'datum\.label === (".*?") && width < (\d+) \? (\[.*?\])', expr
    ):
        if json.loads(name) == label and width < int(need):
            return json.loads(lines)
    return label


def test_legend_labels_too_long_for_a_half_width_chart_break_into_lines():
    short, long = "none (÷1)", "÷√d_k = ÷5.66 (as trained)"
    legend = charts.legend_below([short, long], columns=1).to_dict()
    need = round(charts.text_columns(long) * charts.LEGEND_PX_PER_COLUMN + charts.LEGEND_SYMBOL_PX)
    assert need > charts.HALF_CHART_PX
    # on a plot as wide as the label it stays one line; narrower, it breaks
    assert _label_at(legend["labelExpr"], long, need) == long
    lines = _label_at(legend["labelExpr"], long, need - 1)
    assert " ".join(lines) == long and len(lines) == 2
    assert all(
        charts.text_columns(line) * charts.LEGEND_PX_PER_COLUMN + charts.LEGEND_SYMBOL_PX
        <= charts.HALF_CHART_PX
        for line in lines
    )
    assert _label_at(legend["labelExpr"], short, 100) == short
    # the rows make room for a second line only where a label breaks
    assert legend["rowPadding"] == {"expr": f"width < {need} ? 16 : 2"}
    # labels that fit everywhere: no expression at all
    plain = charts.legend_below([short, "1/d_k (α = 1)"]).to_dict()
    assert "labelExpr" not in plain and "rowPadding" not in plain


def test_sweep_lines_log_axis_and_d_marker():
    df = pd.DataFrame(
        {"d": [1.0, 2.0, 4.0], "series": "s", "color": "#0072B2", "value": [1.0, 1e-3, 1e-9]}
    ).assign(lo=lambda f: f.value / 2, hi=lambda f: f.value * 2)
    text = charts.ChartText.of(title="T", x="d", y="y", alt="a", tips=TIPS)
    spec = charts.sweep_lines(df, text, log_y=True, plot_px=220).to_dict()
    axis = _layers(spec)[1]["encoding"]["y"]["axis"]
    assert axis["labelExpr"] == axes.EXP_LABEL
    assert axis["values"] == [10.0**k for k in range(-10, 2, 2)]


def test_cell_ink_picks_the_ink_that_contrasts_more_with_the_cell():
    assert charts.cell_ink("std").to_dict() == {
        "expr": 'contrast(\'white\', scale("color", datum["std"])) > '
        "contrast('black', scale(\"color\", datum[\"std\"])) ? 'white' : 'black'"
    }

    # the better of black and white reaches 4.5:1 on any cell colour (the worst case, a
    # cell of luminance 0.179, gets 4.58:1 from both)
    def luminance(rgb):
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    grid = np.linspace(0, 1, 18)
    for rgb in ((r, g, b) for r in grid for g in grid for b in grid):
        lum = luminance(rgb)
        assert max(1.05 / (lum + 0.05), (lum + 0.05) / 0.05) >= 4.58
