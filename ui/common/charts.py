"""Altair chart builders: a tidy DataFrame in, a chart out.

No Streamlit calls and no ``.configure_*`` here (it would block layering); encodings
are channel objects (``alt.X("d:Q")``), never bare shorthand strings or dicts, which
Altair resolves through a schema walk costing milliseconds per channel on every rerun.
Layers that share a frame get it once, through ``alt.layer(..., data=df)``, and top-level
properties go into ``alt.layer(...)`` itself: ``.properties()`` or ``.resolve_scale()``
on a layered chart copies and re-merges every layer and validates each property again.
Every builder runs with Altair's validate-on-creation switch off (:func:`lean`); the
tests validate every builder's finished spec.

Every builder takes its user-facing strings as arguments so the page can pass translated
text. Colours come from the Okabe–Ito palette, which stays distinct under the common
forms of colour blindness.

This module holds the theme (colours, row limit) and the builders more than one page
uses; each page's own builders live in ``ui/<page>/charts.py``.
"""

from __future__ import annotations

import functools

import altair as alt
import pandas as pd

#: Okabe–Ito colours, by role.
COLORS = {
    "unscaled": "#D55E00",  # vermillion
    "sqrt": "#0072B2",  # blue: 1/√d_k
    "linear": "#009E73",  # green: 1/d_k
    "custom": "#CC79A7",  # reddish purple: free α
    "theory": "#000000",
    "accent": "#E69F00",  # orange
    "sky": "#56B4E9",
    "grey": "#999999",
}


#: Largest number of rows a builder accepts (the browser gets binned data only).
MAX_ROWS = 5_000


def lean(builder):
    """Run ``builder`` with ``altair.utils.schemapi.DEBUG_MODE`` off (same output, faster).

    With it on, Altair validates every mark, channel and layer as it is created. The
    switch is a module global: a concurrent session may build with it off too, which
    only skips that validation there as well.
    """

    @functools.wraps(builder)
    def wrapper(*args, **kwargs):
        with alt.utils.schemapi.debug_mode(False):
            return builder(*args, **kwargs)

    return wrapper


def check_rows(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` unchanged, or ValueError when it has more than ``MAX_ROWS`` rows (every
    builder checks its frames: the browser gets binned data only)."""
    if len(df) > MAX_ROWS:
        raise ValueError(f"chart data must have at most {MAX_ROWS} rows, got {len(df)}")
    return df


@lean
def d_marker(current_d: int) -> alt.Chart:
    """The orange rule that marks the learner's d_k on a chart against d_k."""
    return (
        alt.Chart(pd.DataFrame({"d": [current_d]}))
        .mark_rule(color=COLORS["accent"], strokeWidth=2)
        .encode(x=alt.X("d:Q"), tooltip=[alt.Tooltip("d:Q", title="d_k")])
    )


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
    "below_right": {"align": "right", "baseline": "top", "x": "width", "dx": -4, "dy": 3},
}


@lean
def sweep_lines(
    df: pd.DataFrame,
    *,
    current_d: int,
    title: str,
    x_title: str,
    y_title: str,
    description: str,
    log_y: bool = False,
    y_domain: tuple[float, float] | None = None,
    reference: pd.DataFrame | None = None,
    legend_columns: int = 4,
    height: int = 300,
    reference_label: str = "above_left",
) -> alt.LayerChart:
    """A statistic against d_k (log₂ axis), one line per series, with an error band.

    Parameters
    ----------
    df : DataFrame
        One row per (series, d_k): ``d``, ``series`` (legend label), ``color`` (hex, one
        per series), ``value``, ``lo``, ``hi`` (band, e.g. ±2 s.e. or a 10–90 % range).
    current_d : int
        The d_k marked with a vertical rule.
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
    order, colors = legend_colors(df, "series")
    color = alt.Color(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(domain=order, range=colors),
        legend=alt.Legend(orient="bottom", columns=legend_columns, symbolOpacity=1, labelLimit=260),
    )
    x = alt.X("d:Q", title=x_title, scale=alt.Scale(type="log", base=2))
    y_scale = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    if y_domain is not None:
        y_scale = alt.Scale(type="log" if log_y else "linear", domain=list(y_domain))
    base = alt.Chart(df.drop(columns="color"))
    band = base.mark_area(opacity=0.18).encode(
        x=x, y=alt.Y("lo:Q", scale=y_scale, title=y_title), y2=alt.Y2("hi:Q"), color=color
    )
    line = base.mark_line(point=True, strokeWidth=2).encode(
        x=x,
        y=alt.Y("value:Q", scale=y_scale, title=y_title),
        color=color,
        tooltip=[
            alt.Tooltip("series:N"),
            alt.Tooltip("d:Q", title="d_k"),
            alt.Tooltip("value:Q", format=".4g"),
            alt.Tooltip("lo:Q", format=".4g"),
            alt.Tooltip("hi:Q", format=".4g"),
        ],
    )
    layers = [band, line]
    if reference is not None and len(reference):
        rule = alt.Chart(reference).mark_rule(color=COLORS["theory"], strokeDash=[4, 3])
        layers.append(
            rule.encode(
                y=alt.Y("y:Q"), tooltip=[alt.Tooltip("label:N"), alt.Tooltip("y:Q", format=".4g")]
            )
        )
        layers.append(
            alt.Chart(reference)
            .mark_text(color=COLORS["theory"], **_REFERENCE_LABELS[reference_label])
            .encode(y=alt.Y("y:Q"), text=alt.Text("label:N"))
        )
    marker = d_marker(current_d)
    layers.append(marker)
    return alt.layer(*layers, title=title, description=description, height=height)


@lean
def log_histogram(
    df: pd.DataFrame,
    *,
    median: float,
    median_log10: float,
    x_domain: tuple[float, float],
    color: str,
    title: str,
    subtitle: str,
    x_title: str,
    y_title: str,
    median_title: str,
    description: str,
) -> alt.LayerChart:
    """Histogram on a log10 axis with its median as a dashed rule.

    Parameters
    ----------
    df : DataFrame
        ``x0``, ``x1`` (bin edges in decades), ``share`` (% of rows).
    median, median_log10 : float
        The median (for the tooltip) and its log10 (where the rule is drawn).
    x_domain : (float, float)
        Fixed x-range in decades: pass the same range to charts shown side by side.
    """
    check_rows(df)
    x = alt.X(
        "x0:Q",
        title=x_title,
        scale=alt.Scale(domain=list(x_domain), nice=False),
        axis=alt.Axis(format="d", tickMinStep=1),
    )
    bars = (
        alt.Chart(df)
        .mark_bar(color=color, opacity=0.8, binSpacing=0)
        .encode(
            x=x,
            x2=alt.X2("x1:Q"),
            y=alt.Y("share:Q", title=y_title),
            y2=alt.Y2(datum=0),
            tooltip=[
                alt.Tooltip("x0:Q", title="log10 from", format=".2f"),
                alt.Tooltip("x1:Q", title="log10 to", format=".2f"),
                alt.Tooltip("share:Q", title=y_title, format=".2f"),
            ],
        )
    )
    rule_data = pd.DataFrame({"x": [median_log10], "median": [median]})
    rule = (
        alt.Chart(rule_data)
        .mark_rule(color=COLORS["theory"], strokeDash=[6, 3], strokeWidth=2)
        .encode(
            x=alt.X("x:Q", scale=alt.Scale(domain=list(x_domain), nice=False)),
            tooltip=[alt.Tooltip("median:Q", title=median_title, format=".3~e")],
        )
    )
    return alt.layer(
        bars,
        rule,
        title=alt.Title(title, subtitle=subtitle),
        description=description,
        height=300,
    )
