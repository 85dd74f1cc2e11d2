"""Altair chart builders: a tidy DataFrame in, a chart out.

No Streamlit calls and no ``.configure_*`` here (it would block layering). Encodings
are channel objects with an explicit type (``alt.X("d:Q")``). Layers that share a frame
get it once, through ``alt.layer(..., data=df)``. The tests validate every builder's
finished spec.

Every builder takes its user-facing strings as arguments so the page can pass translated
text. Colours come from the Okabe–Ito palette, which stays distinct under the common
forms of colour blindness.

This module holds the theme (colours, row limit) and the builders more than one page
uses; each page's own builders live in ``ui/<page>/charts.py``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence

import altair as alt
import pandas as pd

from ui.common.axes import log_axis, positive_range
from ui.common.chart_text import ChartText

#: Okabe–Ito colours of marks, by role. They are drawn on the light and on the dark
#: background alike, so none may be black or white. Chart text is in :data:`INK` instead.
COLORS = {
    "unscaled": "#D55E00",  # vermillion
    "sqrt": "#0072B2",  # blue: 1/√d_k
    "linear": "#009E73",  # green: 1/d_k
    "custom": "#CC79A7",  # reddish purple: free α
    # exact laws and reference lines: a grey with contrast ≥ 4.2 on white and on the
    # dark theme's #171614 alike (black vanishes on the dark background)
    "theory": "#7A7A7A",
    "accent": "#E69F00",  # orange
    "sky": "#56B4E9",
    "grey": "#999999",
}

#: Chart text, per theme (7.8:1 on white, 9.3:1 on the dark #171614): no one colour reaches
#: 4.5:1 on both (the best grey, 4.35:1). :data:`INK` picks it from the chart's background,
#: which Streamlit's theme sets in the browser (right on the first load too, unlike
#: ``st.context.theme``); ``specs.THEME_CHART_CONFIG`` applies it to axes, legends,
#: subtitles and text marks, so a text mark sets no colour of its own.
TEXT_INK = {"light": "#55524E", "dark": "#BDB9B3"}
INK = alt.ExprRef(f"luminance(background) < 0.5 ? '{TEXT_INK['dark']}' : '{TEXT_INK['light']}'")


def cell_ink(field: str, scale: str = "color") -> alt.ExprRef:
    """A heatmap cell's number in black or white, whichever contrasts more with the cell
    (colour scale ``scale`` of ``datum[field]``): one of them always reaches 4.58:1."""
    cell = f"scale({json.dumps(scale)}, datum[{json.dumps(field)}])"
    return alt.ExprRef(f"contrast('white', {cell}) > contrast('black', {cell}) ? 'white' : 'black'")


#: Largest number of rows a builder accepts (the browser gets binned data only).
MAX_ROWS = 5_000

#: The key dimension as charts write it (axis, legend and tooltip titles): a symbol, the
#: same in every language. URL parameters keep the ASCII name ``d_k``.
D_K = "dₖ"


# --- titles and legends that fit a phone ------------------------------------------------
# Chart text is measured in columns: a Latin letter is one, a CJK character (full width)
# two. Vega cuts a line longer than its room with "…"; these helpers break titles into
# lines and size legends so that nothing is cut on a 390-px phone, on a half-width chart
# beside an open sidebar, or in presenter mode's larger type.

#: Width of one column of title text, px: bold 19 px (presenter mode; 16 px otherwise).
TITLE_PX_PER_COLUMN = 10.5
#: Line lengths (columns) a title may be wrapped to; the widest that fits is drawn. The
#: narrowest is for a half-width chart beside the open sidebar at 800 px (~190 px plot).
TITLE_LINE_COLUMNS = (18, 26, 34, 46, 62, 84)
#: Subtitles are wrapped once, to fit the narrowest chart (phone, presenter type).
SUBTITLE_LINE_COLUMNS = 40
#: ... or, for a chart drawn half width, the narrowest such chart (two side by side beside
#: the open sidebar in an 800-px window: a plot of about 190 px).
HALF_SUBTITLE_LINE_COLUMNS = 28
#: Width of the narrowest chart the app draws (a 390-px phone, less the page margins).
NARROW_CHART_PX = 300
#: Width of the narrowest plot a legend is drawn under: a half-width chart beside the open
#: sidebar in an 800-px window. A longer legend label breaks into lines there.
HALF_CHART_PX = 170
#: Width of one column of legend label text, px (14 px labels; 15 px when presenting).
LEGEND_PX_PER_COLUMN = 7.5
#: A legend entry's symbol and padding, px.
LEGEND_SYMBOL_PX = 24

# breakable units: runs of spaces, single CJK characters, runs of other characters (a
# no-break space or a word joiner is no space: it holds its neighbours together)
_CJK = "\u2e80-\u303f\u3040-\u9fff\uf900-\ufaff\uff00-\uffef"
_TOKEN = re.compile(rf"[ \t]+|[{_CJK}]|[^ \t{_CJK}]+")
#: No line break on either side: no-break space (drawn as a space), word joiner (U+2060,
#: a "no break here" for Chinese text, removed from the lines).
_JOINERS, _WORD_JOINER = "\u00a0\u2060", "\u2060"
#: Punctuation that never starts a line / never ends one.
_CLOSING, _OPENING = "，。、；：！？）》」』”’,.;:!?)]", "（《「『“‘(["


def text_columns(text: str) -> int:
    """Display width of ``text`` in columns: 2 for a wide (CJK) character, else 1."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def wrap_text(text: str, columns: int) -> list[str]:
    """``text`` broken into lines of at most ``columns`` (see :func:`text_columns`).

    English breaks at spaces; Chinese between any two characters (it has no spaces),
    but never before closing or after opening punctuation. A word longer than a line
    keeps a line of its own: a word is never cut. A ``\n`` in ``text`` always breaks; a
    no-break space or a word joiner (U+2060) never does, so a symbol such as
    ``‖J‖ = 0.145`` stays on one line.

    Raises
    ------
    ValueError
        If ``columns`` < 1.
    """
    if columns < 1:
        raise ValueError(f"columns must be at least 1, got {columns}")
    if "\n" in text:  # a line break the text asks for stays
        return [line for part in text.split("\n") for line in wrap_text(part, columns)]
    tokens: list[str] = []
    for token in _TOKEN.findall(text.strip()):
        # closing punctuation sticks to what precedes it, opening to what follows
        if (
            tokens
            and not tokens[-1].isspace()
            and not token.isspace()
            and (token[0] in _CLOSING + _JOINERS or tokens[-1][-1] in _OPENING + _JOINERS)
        ):
            tokens[-1] += token
        else:
            tokens.append(token)
    lines: list[str] = []
    line = ""
    for token in tokens:
        if token.isspace():
            if line:
                line += " "
            continue
        if line and text_columns(line + token) > columns:
            lines.append(line.rstrip())
            line = ""
        line += token
    if line.strip():
        lines.append(line.rstrip())
    return [line.replace(_WORD_JOINER, "") for line in lines] or [""]


def _text(lines: list[str]) -> str | list[str]:
    return lines[0] if len(lines) == 1 else lines


def chart_title(
    text: str,
    subtitle: str | None = None,
    *,
    subtitle_columns: int = SUBTITLE_LINE_COLUMNS,
    **options,
) -> str | alt.Title:
    """A chart title that wraps instead of being cut: use it for every chart's title.

    Vega draws a title on one line and cuts it with "…" where it meets the chart's
    width. This title is the text wrapped to each of :data:`TITLE_LINE_COLUMNS`, and the
    chart draws the widest wrapping whose lines fit its plot width (a Vega expression on
    ``width``, so it follows the chart as the window changes). The subtitle is wrapped
    once, to ``subtitle_columns`` (:data:`HALF_SUBTITLE_LINE_COLUMNS` for a chart drawn
    half width). ``options`` go to ``alt.Title`` as they are. A title
    that fits on one line everywhere, with nothing else, stays a plain string.
    """
    wraps: list[list[str]] = []  # narrowest first, each distinct wrapping once
    for columns in TITLE_LINE_COLUMNS:
        lines = wrap_text(text, columns)
        if lines not in wraps:
            wraps.append(lines)
    if len(wraps) == 1:
        title_text: object = _text(wraps[0])
    else:
        # widest first: "width >= 650 ? [...] : width >= 480 ? [...] : [...]"
        expr = json.dumps(wraps[0], ensure_ascii=False)
        for lines in wraps[1:]:
            need = round(text_columns(max(lines, key=text_columns)) * TITLE_PX_PER_COLUMN)
            expr = f"width >= {need} ? {json.dumps(lines, ensure_ascii=False)} : {expr}"
        title_text = alt.ExprRef(expr)
    if subtitle is not None:
        options["subtitle"] = _text(wrap_text(subtitle, subtitle_columns))
    if isinstance(title_text, str) and not options:
        return title_text
    return alt.Title(title_text, **options)


def title_text(title: object) -> str:
    """The text of a chart title as one line, whatever form :func:`chart_title` gave it
    (a string, a list of lines, a ``{"text": …}`` object or an expression choosing a
    wrapping); for finding a chart by its title in a spec."""
    if isinstance(title, dict):
        title = title.get("text", "")
        if isinstance(title, dict):  # {"expr": "width >= … ? [widest lines] : …"}
            title = json.JSONDecoder().raw_decode(title["expr"][title["expr"].index("[") :])[0]
    if isinstance(title, list):
        cjk = re.compile(f"[{_CJK}]")
        joined = ""
        for line in title:  # Chinese lines join without a space
            gap = "" if not joined or (cjk.search(joined[-1]) and cjk.search(line[0])) else " "
            joined += gap + line
        return joined
    return str(title)


def legend_below(
    labels: Sequence[str], *, columns: int | None = None, orient: str = "bottom", **options
) -> alt.Legend:
    """A legend under the plot whose labels are never cut, even on a phone.

    As many entries share a row as fit :data:`NARROW_CHART_PX` with the longest of
    ``labels`` (at most ``columns``, if given); a label may take the whole width.
    ``options`` go to ``alt.Legend`` (e.g. ``symbolOpacity=1``). A chart's second
    legend goes above the plot (:func:`legend_above`): Vega sets legends that share
    a side next to each other, wider than a phone.
    """
    entry_px = max((_entry_px(label) for label in labels), default=_entry_px(" "))
    fit = max(1, int(NARROW_CHART_PX // entry_px))
    n = max(1, len(labels))
    options.setdefault("labelLimit", NARROW_CHART_PX - LEGEND_SYMBOL_PX)
    wrapped = _wrapped_labels(labels)
    if wrapped is not None:
        label_expr, widest = wrapped
        options.setdefault("labelExpr", label_expr)
        # Vega spaces the rows by the symbols: a label of two lines needs the room
        options.setdefault("rowPadding", alt.ExprRef(f"width < {widest} ? 16 : 2"))
    most = min(fit, n, columns or n)
    # A half-width chart beside the open sidebar (800 px) is narrower than a phone's
    # chart: fewer entries a row when the plot is narrower than `most` of them.
    per_row: int | alt.ExprRef = most
    if most > 1:
        expr = "1"
        for k in range(2, most + 1):
            expr = f"width >= {round(k * entry_px)} ? {k} : {expr}"
        per_row = alt.ExprRef(expr)
    return alt.Legend(orient=orient, columns=per_row, **options)


def _entry_px(label: object) -> float:
    """Width of one legend entry on one line, px: its symbol and its label."""
    return text_columns(str(label)) * LEGEND_PX_PER_COLUMN + LEGEND_SYMBOL_PX


def _wrapped_labels(labels: Sequence[str]) -> tuple[str, int] | None:
    """A legend ``labelExpr`` that breaks each label wider than :data:`HALF_CHART_PX` into
    lines when the plot is narrower than the label, and the plot width below which one
    does; None if every label fits."""
    room = int((HALF_CHART_PX - LEGEND_SYMBOL_PX) // LEGEND_PX_PER_COLUMN)
    expr, widest = "datum.label", 0
    for label in map(str, labels):
        need = round(_entry_px(label))
        if need <= HALF_CHART_PX:
            continue
        lines = json.dumps(wrap_text(label, room), ensure_ascii=False)
        expr = f"datum.label === {json.dumps(label, ensure_ascii=False)} && width < {need} ? {lines} : {expr}"
        widest = max(widest, need)
    return None if not widest else (expr, widest)


def legend_above(labels: Sequence[str], **options) -> alt.Legend:
    """:func:`legend_below`, above the plot: for a chart's second legend."""
    return legend_below(labels, orient="top", **options)


def gradient_legend_below(**options) -> alt.Legend:
    """A colour-ramp legend under the plot (beside it, it takes a phone chart's width)."""
    options.setdefault("gradientLength", 120)
    return alt.Legend(orient="bottom", direction="horizontal", **options)


def check_rows(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` unchanged, or ValueError when it has more than ``MAX_ROWS`` rows (every
    builder checks its frames: the browser gets binned data only)."""
    if len(df) > MAX_ROWS:
        raise ValueError(f"chart data must have at most {MAX_ROWS} rows, got {len(df)}")
    return df


#: The rule that marks the learner's own value on a chart (d_k, a gap, a learning rate):
#: dashed and in the theme's ink, so that it differs from every series by more than its hue
#: (the orange of "none (α = 0)" and Var(q·k) among them).
MARKER_RULE = {"color": INK, "strokeWidth": 2, "strokeDash": [6, 3]}

#: Name of the dataset holding the learner's d_k (one row, field ``d``): a chart names it,
#: and :func:`ui.common.workshop.chart` fills it in when the chart is drawn.
MARKER_DATASET = "d_marker"


def d_marker() -> alt.Chart:
    """The dashed rule (:data:`MARKER_RULE`) that marks the learner's d_k on a chart against d_k.

    Its data is the named dataset :data:`MARKER_DATASET`, filled in as the chart is drawn
    (``workshop.chart(..., marker=d_k)``): one cached spec serves every d_k, and the
    browser swaps one row instead of drawing the chart anew.
    """
    return (
        alt.Chart(alt.NamedData(name=MARKER_DATASET))
        .mark_rule(**MARKER_RULE)
        .encode(x=alt.X("d:Q"), tooltip=[alt.Tooltip("d:Q", title=D_K, format="d")])
    )


def own_data(chart: alt.LayerChart) -> alt.LayerChart:
    """``chart`` with the frame its layers share given to each layer, changed in place.

    Altair moves a frame that every layer holds up to the layer chart, when the chart is
    made and again when it is copied (``chart + d_marker()`` in
    :func:`ui.common.workshop.chart` copies it). Each layer keeps its own view of the frame
    (a shallow copy: the same data, one dataset in the spec), so the spec has one form
    whether or not the d_k marker is layered on.
    """
    shared = chart.data
    if shared is not alt.Undefined:
        for layer in chart.layer:
            if layer.data is alt.Undefined:
                layer.data = shared.copy(deep=False)
        chart.data = alt.Undefined
    return chart


def legend_colors(df: pd.DataFrame, field: str) -> tuple[list[str], list[str]]:
    """Legend order (first appearance) of ``field`` and the ``color`` of each entry."""
    first: dict = {}
    for value, color in zip(df[field], df["color"], strict=True):
        first.setdefault(value, color)
    return list(first), list(first.values())


def alpha_color(alpha: float) -> str:
    """Colour of a scaling exponent: vermillion none, blue 1/√d_k, green 1/d_k, purple other."""
    return {0.0: COLORS["unscaled"], 0.5: COLORS["sqrt"], 1.0: COLORS["linear"]}.get(
        round(float(alpha), 6), COLORS["custom"]
    )


#: Text-mark placement of a reference line's label, by name (see :func:`sweep_lines`).
_REFERENCE_LABELS = {
    "above_left": {"align": "left", "baseline": "bottom", "x": 4, "dy": -2},
    "above_right": {"align": "right", "baseline": "bottom", "x": "width", "dx": -4, "dy": -2},
    # below: clear of the point markers on the line (up to ~10 px across), which a line
    # that converges onto the reference draws right over it
    "below_right": {"align": "right", "baseline": "top", "x": "width", "dx": -4, "dy": 7},
}


def band_tooltip(
    tips: dict[str, str], value: str = "value", *extra: alt.Tooltip
) -> list[alt.Tooltip]:
    """Tooltip of a statistic with a band against d_k: its series, d_k, the field
    ``value`` and the band's ``lo`` and ``hi`` (4 significant digits), then ``extra``.

    ``tips`` titles the fields: ``series``, ``value``, ``lo``, ``hi`` (the page's language).
    """
    return [
        alt.Tooltip("series:N", title=tips["series"]),
        alt.Tooltip("d:Q", title=D_K, format="d"),
        *(
            alt.Tooltip(f"{field}:Q", title=tips[key], format=".4g")
            for field, key in ((value, "value"), ("lo", "lo"), ("hi", "hi"))
        ),
        *extra,
    ]


def band_and_line(
    df: pd.DataFrame,
    *,
    x: alt.X,
    y_scale: alt.Scale,
    y_title: str,
    color: alt.Color,
    tooltip: list[alt.Tooltip],
    band_opacity: float = 0.18,
    y_axis: alt.Axis | alt.UndefinedType = alt.Undefined,
) -> list[alt.Chart]:
    """The two layers of a statistic with a band: an area from ``lo`` to ``hi`` and a
    line with points through ``value`` (the tooltip on the line), over ``x``.

    ``df`` has ``series``, ``value``, ``lo``, ``hi``, the x field and possibly ``color``
    (dropped: the colour scale holds it; a frame without it is drawn as it is, as a
    ``swap_data`` chart needs). ``y_axis``: e.g. a :func:`log_axis`.
    """
    base = alt.Chart(df.drop(columns="color") if "color" in df.columns else df)
    band = base.mark_area(opacity=band_opacity, tooltip=False).encode(
        x=x,
        y=alt.Y("lo:Q", scale=y_scale, title=y_title, axis=y_axis),
        y2=alt.Y2("hi:Q"),
        color=color,
    )
    line = base.mark_line(point=True, strokeWidth=2).encode(
        x=x,
        y=alt.Y("value:Q", scale=y_scale, title=y_title, axis=y_axis),
        color=color,
        tooltip=tooltip,
    )
    return [band, line]


def sweep_lines(
    df: pd.DataFrame,
    text: ChartText,
    *,
    log_y: bool = False,
    y_domain: tuple[float, float] | None = None,
    reference: pd.DataFrame | None = None,
    legend_columns: int = 4,
    height: int = 300,
    reference_label: str = "above_left",
    plot_px: float | None = None,
) -> alt.LayerChart:
    """A statistic against d_k (log₂ axis), one line per series, with an error band.

    Parameters
    ----------
    df : DataFrame
        One row per (series, d_k): ``d``, ``series`` (legend label), ``color`` (hex, one
        per series), ``value``, ``lo``, ``hi`` (band, e.g. ±2 s.e. or a 10–90 % range).
    text : ChartText
        ``title``, ``x``, ``y``, ``alt``; ``tips``: ``series``, ``lo``, ``hi`` (the band's
        edges), optionally ``value`` (default: ``y``) and, with a ``reference``,
        ``reference`` (its label).
    log_y : bool
        Logarithmic y-axis (values must be positive).
    y_domain : (float, float), optional
        Fixed y-range, e.g. (0, 1) for weights.
    reference : DataFrame, optional
        Horizontal reference lines: ``y`` and ``label`` (e.g. ln n_keys, 1/n_keys).
    legend_columns : int
        Legend entries per row (2 fits a half-width chart).
    height : int
        Pixels for the whole chart, titles and legend included (Streamlit fits the view).
    reference_label : {"above_left", "above_right", "below_right"}
        Where a reference line's label goes: above it at the left or right edge, or
        below it at the right edge (for a floor no line goes under, such as 1/n_keys for
        weights).
    plot_px : float, optional
        The plot's height, where the caller knows it (the log axis is labelled to fit);
        default: half of ``height`` (the title and the legend take the rest).

    Raises
    ------
    ValueError
        If ``reference_label`` is not one of the placements.
    """
    if reference_label not in _REFERENCE_LABELS:
        raise ValueError(
            f"reference_label must be one of {sorted(_REFERENCE_LABELS)}, got {reference_label!r}"
        )
    check_rows(df)
    x_title, y_title, tips = text.x, text.y, text.tips
    order, colors = legend_colors(df, "series")
    color = alt.Color(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(domain=order, range=colors),
        legend=legend_below(order, columns=legend_columns, symbolOpacity=1),
    )
    x = alt.X("d:Q", title=x_title, scale=alt.Scale(type="log", base=2))
    y_scale = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    if y_domain is not None:
        y_scale = alt.Scale(type="log" if log_y else "linear", domain=list(y_domain))
    y_axis = alt.Undefined
    if log_y:
        span = y_domain or positive_range(df["lo"], df["value"], df["hi"])
        y_axis = log_axis(*span, length=plot_px or height / 2)
    tooltip = band_tooltip({"value": y_title, **tips})
    layers = band_and_line(
        df, x=x, y_scale=y_scale, y_title=y_title, color=color, tooltip=tooltip, y_axis=y_axis
    )
    if reference is not None and len(reference):
        rule = alt.Chart(reference).mark_rule(color=COLORS["theory"], strokeDash=[4, 3])
        layers.append(
            rule.encode(
                y=alt.Y("y:Q"),
                tooltip=[
                    alt.Tooltip("label:N", title=tips["reference"]),
                    alt.Tooltip("y:Q", title=y_title, format=".4g"),
                ],
            )
        )
        layers.append(
            alt.Chart(reference)
            .mark_text(**_REFERENCE_LABELS[reference_label], tooltip=False)  # in INK: text
            .encode(y=alt.Y("y:Q"), text=alt.Text("label:N"))
        )
    return alt.layer(
        *layers, title=chart_title(text.title), description=text.description, height=height
    )
