"""Altair chart builders: a tidy DataFrame in, a chart out.

No Streamlit calls and no ``.configure_*`` here (it would block layering); encodings
are channel objects (``alt.X("d:Q")``), never bare shorthand strings or dicts, which
Altair resolves through a schema walk costing milliseconds per channel on every rerun.
Layers that share a frame get it once, through ``alt.layer(..., data=df)``, and top-level
properties go into ``alt.layer(...)`` itself: ``.properties()`` or ``.resolve_scale()``
on a layered chart copies and re-merges every layer and validates each property again.
Every builder runs with Altair's validate-on-creation switch off (:func:`_lean`); the
tests validate every builder's finished spec.

Every builder takes its user-facing strings as arguments so the page can pass translated
text. Colours come from the Okabe–Ito palette, which stays distinct under the common
forms of colour blindness.
"""

from __future__ import annotations

import altair as alt
import numpy as np
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


def _lean(builder):
    """Run ``builder`` with ``altair.utils.schemapi.DEBUG_MODE`` off (same output, faster).

    With it on, Altair validates every mark, channel and layer as it is created. The
    switch is a module global: a concurrent session may build with it off too, which
    only skips that validation there as well.
    """
    import functools

    @functools.wraps(builder)
    def wrapper(*args, **kwargs):
        with alt.utils.schemapi.debug_mode(False):
            return builder(*args, **kwargs)

    return wrapper


def _check_rows(df: pd.DataFrame) -> pd.DataFrame:
    if len(df) > MAX_ROWS:
        raise ValueError(f"chart data must have at most {MAX_ROWS} rows, got {len(df)}")
    return df


@_lean
def d_marker(current_d: int) -> alt.Chart:
    """The orange rule that marks the learner's d_k on a chart against d_k."""
    return (
        alt.Chart(pd.DataFrame({"d": [current_d]}))
        .mark_rule(color=COLORS["accent"], strokeWidth=2)
        .encode(x=alt.X("d:Q"), tooltip=[alt.Tooltip("d:Q", title="d_k")])
    )


def _legend_colors(df: pd.DataFrame, field: str) -> tuple[list[str], list[str]]:
    """Legend order (first appearance) of ``field`` and the ``color`` of each entry."""
    first: dict = {}
    for value, color in zip(df[field], df["color"], strict=True):
        first.setdefault(value, color)
    return list(first), list(first.values())


@_lean
def histogram_with_law(
    df: pd.DataFrame,
    *,
    title: str,
    x_title: str,
    y_title: str,
    law_labels: tuple[str, str],
    description: str,
    color: str = COLORS["sqrt"],
) -> alt.LayerChart:
    """Histogram bars with the exact law and its Gaussian limit drawn over them.

    Parameters
    ----------
    df : DataFrame
        One row per bin: ``x0``, ``x1`` (bin edges), ``x`` (centre), ``density``
        (empirical), ``exact`` (exact law), ``gauss`` (Gaussian limit).
    title, x_title, y_title, description : str
        Chart title, axis titles and alt text.
    law_labels : (str, str)
        Legend labels of the exact law and of the Gaussian limit.
    """
    _check_rows(df)
    base = alt.Chart(df)
    tooltip = [
        alt.Tooltip("x:Q", title=x_title, format=".3g"),
        alt.Tooltip("density:Q", title=y_title, format=".4g"),
        alt.Tooltip("exact:Q", title=law_labels[0], format=".4g"),
    ]
    # rectangles from 0 to the density over [x0, x1] (a bar with x2 would be horizontal)
    bars = base.mark_rect(opacity=0.55, color=color, stroke="white", strokeWidth=0.5).encode(
        x=alt.X("x0:Q", title=x_title),
        x2=alt.X2("x1:Q"),
        y=alt.Y("density:Q", title=y_title),
        y2=alt.Y2(datum=0),
        tooltip=tooltip,
    )
    long = df.melt(id_vars=["x"], value_vars=["exact", "gauss"], var_name="law", value_name="y")
    names = dict(zip(("exact", "gauss"), law_labels, strict=True))
    long["law"] = long["law"].map(names)
    lines = (
        alt.Chart(long)
        .mark_line(strokeWidth=2, color=COLORS["theory"])
        .encode(
            x=alt.X("x:Q"),
            y=alt.Y("y:Q"),
            strokeDash=alt.StrokeDash(
                "law:N",
                title=None,
                sort=list(names.values()),
                legend=alt.Legend(orient="top-right"),
            ),
            tooltip=[
                alt.Tooltip("law:N"),
                alt.Tooltip("x:Q", format=".3g"),
                alt.Tooltip("y:Q", format=".4g"),
            ],
        )
    )
    return alt.layer(bars, lines, title=title, description=description, height=300)


@_lean
def variance_sweep(
    df: pd.DataFrame,
    *,
    current_d: int,
    series_order: tuple[str, str],
    title: str,
    x_title: str,
    y_title: str,
    description: str,
) -> alt.LayerChart:
    """Empirical Var(q·k) and Var(q·k/√d_k) against d_k on log–log axes.

    Parameters
    ----------
    df : DataFrame
        Rows per (d_k, series): ``d``, ``series`` (legend label), ``var``, ``lo``,
        ``hi`` (95 % interval), ``theory``.
    current_d : int
        The d_k marked with a vertical rule.
    series_order : (str, str)
        The unscaled and the scaled series' labels (drawn vermillion and blue).
    """
    _check_rows(df)
    x = alt.X("d:Q", title=x_title, scale=alt.Scale(type="log", base=2))
    y_scale = alt.Scale(type="log")
    series = alt.Color(
        "series:N",
        title=None,
        scale=alt.Scale(domain=list(series_order), range=[COLORS["unscaled"], COLORS["sqrt"]]),
        legend=alt.Legend(orient="top-left"),
    )
    tooltip = [
        alt.Tooltip("series:N"),
        alt.Tooltip("d:Q", title="d_k"),
        alt.Tooltip("var:Q", format=".4g"),
        alt.Tooltip("lo:Q", format=".4g"),
        alt.Tooltip("hi:Q", format=".4g"),
        alt.Tooltip("theory:Q", format=".4g"),
    ]
    base = alt.Chart(df)
    theory = base.mark_line(color=COLORS["theory"], strokeDash=[4, 3], strokeWidth=1.5).encode(
        x=x, y=alt.Y("theory:Q", scale=y_scale, title=y_title), detail=alt.Detail("series:N")
    )
    bars = base.mark_rule(strokeWidth=2).encode(
        x=x, y=alt.Y("lo:Q", scale=y_scale), y2=alt.Y2("hi:Q"), color=series
    )
    points = base.mark_point(filled=True, size=50).encode(
        x=x, y=alt.Y("var:Q", scale=y_scale, title=y_title), color=series, tooltip=tooltip
    )
    marker = d_marker(current_d)
    return alt.layer(theory, bars, points, marker, title=title, description=description, height=320)


@_lean
def running_sums(
    paths: pd.DataFrame,
    envelope: pd.DataFrame,
    *,
    title: str,
    x_title: str,
    y_title: str,
    description: str,
) -> alt.LayerChart:
    """Partial sums of q_i k_i against i for several pairs, with ±√i and ±2√i envelopes.

    Parameters
    ----------
    paths : DataFrame
        ``i``, ``path`` (pair id), ``sum``.
    envelope : DataFrame
        ``i``, ``band`` (legend label, e.g. "±1 std"), ``lo``, ``hi``.
    """
    _check_rows(paths)
    _check_rows(envelope)
    x = alt.X("i:Q", title=x_title, axis=alt.Axis(tickMinStep=1))  # dimensions are whole
    lines = (
        alt.Chart(paths)
        .mark_line(strokeWidth=1, opacity=0.7, color=COLORS["sqrt"])
        .encode(
            x=x,
            y=alt.Y("sum:Q", title=y_title),
            detail=alt.Detail("path:N"),
            tooltip=[alt.Tooltip("path:N"), alt.Tooltip("i:Q"), alt.Tooltip("sum:Q", format=".3g")],
        )
    )
    env = alt.Chart(envelope)
    dash = alt.StrokeDash("band:N", title=None, legend=alt.Legend(orient="bottom", labelLimit=400))
    upper = env.mark_line(color=COLORS["theory"]).encode(x=x, y=alt.Y("hi:Q"), strokeDash=dash)
    lower = env.mark_line(color=COLORS["theory"]).encode(x=x, y=alt.Y("lo:Q"), strokeDash=dash)
    return alt.layer(lines, upper, lower, title=title, description=description, height=320)


@_lean
def term_bars(
    df: pd.DataFrame,
    *,
    title: str,
    x_title: str,
    y_title: str,
    sign_title: str,
    sign_order: tuple[str, str],
    description: str,
) -> alt.Chart:
    """Bars of the per-dimension products q_i k_i of one pair, coloured by sign.

    Parameters
    ----------
    df : DataFrame
        ``i`` (1-based dimension), ``term`` (q_i k_i), ``sign`` (legend label).
    sign_order : (str, str)
        Labels of positive and negative terms (blue and vermillion).
    """
    _check_rows(df)
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("i:O", title=x_title, axis=alt.Axis(labelOverlap=True, labelAngle=0)),
            y=alt.Y("term:Q", title=y_title),
            color=alt.Color(
                "sign:N",
                title=sign_title,
                scale=alt.Scale(
                    domain=list(sign_order), range=[COLORS["sqrt"], COLORS["unscaled"]]
                ),
                legend=alt.Legend(orient="bottom"),
            ),
            tooltip=[alt.Tooltip("i:O", title="i"), alt.Tooltip("term:Q", format=".4g")],
        )
        .properties(title=title, description=description, height=300)
    )


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


@_lean
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
    _check_rows(df)
    order, colors = _legend_colors(df, "series")
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


# --- sqrt_vs_d page ---
@_lean
def logit_scale(
    df: pd.DataFrame,
    *,
    current_d: int,
    title: str,
    subtitle: str,
    x_title: str,
    y_title: str,
    theory_title: str,
    description: str,
    legend_columns: int = 4,
) -> alt.LayerChart:
    """Measured points with error bars and theory lines against d_k, log–log, per series.

    Parameters
    ----------
    df : DataFrame
        One row per (series, d_k): ``d``, ``series`` (legend label), ``color`` (hex, one
        per series), ``value`` (measured, > 0), ``lo``, ``hi`` (error bar, > 0),
        ``theory`` (> 0).
    current_d : int
        The d_k marked with a vertical rule.
    subtitle : str
        Says which marks are measured and which are theory.
    theory_title : str
        Tooltip title of the theory value.
    legend_columns : int
        Legend entries per row (2 fits a half-width chart).
    """
    _check_rows(df)
    order, colors = _legend_colors(df, "series")
    color = alt.Color(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(domain=order, range=colors),
        legend=alt.Legend(orient="bottom", columns=legend_columns),
    )
    x = alt.X("d:Q", title=x_title, scale=alt.Scale(type="log", base=2))
    y_scale = alt.Scale(type="log")
    base = alt.Chart(df.drop(columns="color"))
    theory = base.mark_line(strokeWidth=1.5, opacity=0.75).encode(
        x=x, y=alt.Y("theory:Q", scale=y_scale, title=y_title), color=color
    )
    bars = base.mark_rule(strokeWidth=2).encode(
        x=x, y=alt.Y("lo:Q", scale=y_scale), y2=alt.Y2("hi:Q"), color=color
    )
    points = base.mark_point(filled=True, size=45, opacity=1).encode(
        x=x,
        y=alt.Y("value:Q", scale=y_scale, title=y_title),
        color=color,
        tooltip=[
            alt.Tooltip("series:N"),
            alt.Tooltip("d:Q", title="d_k"),
            alt.Tooltip("value:Q", format=".4g"),
            alt.Tooltip("lo:Q", format=".4g"),
            alt.Tooltip("hi:Q", format=".4g"),
            alt.Tooltip("theory:Q", title=theory_title, format=".4g"),
        ],
    )
    marker = d_marker(current_d)
    return alt.layer(
        theory,
        bars,
        points,
        marker,
        title=alt.TitleParams(title, subtitle=subtitle),
        description=description,
        height=300,
    )


@_lean
def alpha_heatmap(
    df: pd.DataFrame,
    rules: pd.DataFrame,
    *,
    title: str,
    x_title: str,
    y_title: str,
    color_title: str,
    description: str,
) -> alt.LayerChart:
    """A statistic in [0, 1] over the grid (d_k, α), with horizontal rules at chosen α.

    Parameters
    ----------
    df : DataFrame
        One row per cell: ``d`` (ordinal x, ascending), ``alpha`` (evenly spaced),
        ``share`` (colour, 0 … 1), ``share_se``.
    rules : DataFrame
        ``alpha``, ``label`` (legend text), ``color`` (hex) of the exponents to draw,
        e.g. α = ½ and α = 1.
    """
    _check_rows(df)
    alphas = sorted(df["alpha"].unique())
    step = float(alphas[1] - alphas[0]) if len(alphas) > 1 else 0.05
    cells = df.assign(a0=df["alpha"] - step / 2, a1=df["alpha"] + step / 2)
    y_scale = alt.Scale(domain=[float(cells.a0.min()), float(cells.a1.max())], nice=False)
    rect = (
        alt.Chart(cells)
        .mark_rect()
        .encode(
            x=alt.X("d:O", title=x_title, sort="ascending", axis=alt.Axis(labelAngle=0)),
            y=alt.Y("a0:Q", title=y_title, scale=y_scale),
            y2=alt.Y2("a1:Q"),
            color=alt.Color(
                "share:Q",
                title=color_title,
                scale=alt.Scale(scheme="greys", domain=[0, 1], reverse=True),
                legend=alt.Legend(orient="right", gradientLength=220),
            ),
            tooltip=[
                alt.Tooltip("d:O", title="d_k"),
                alt.Tooltip("alpha:Q", title="α", format=".2f"),
                alt.Tooltip("share:Q", title=color_title, format=".3f"),
                alt.Tooltip("share_se:Q", title="s.e.", format=".1g"),
            ],
        )
    )
    labels = list(rules["label"])
    lines = (
        alt.Chart(rules)
        .mark_rule(strokeWidth=3)
        .encode(
            y=alt.Y("alpha:Q", scale=y_scale),
            color=alt.Color(
                "label:N",
                title=None,
                sort=labels,
                scale=alt.Scale(domain=labels, range=list(rules["color"])),
                legend=alt.Legend(orient="bottom"),
            ),
            tooltip=[alt.Tooltip("label:N"), alt.Tooltip("alpha:Q", title="α", format=".2f")],
        )
    )
    return alt.layer(
        rect,
        lines,
        resolve=alt.Resolve(scale=alt.ScaleResolveMap(color="independent")),
        title=title,
        description=description,
        height=360,
    )


# --- gradients page ---------------------------------------------------------------------
#: Diverging, colour-blind-safe scheme for signed Jacobian entries (blue < 0 < orange).
JACOBIAN_SCHEME = "blueorange"
#: Log-axis labels: 0.01, 0.1, 1 as decimals, smaller values as 1e-6.
LOG_LABELS = "datum.value >= 0.001 ? format(datum.value, '~g') : format(datum.value, '.0e')"
#: Ticks of the gap explorer's log axis: whole powers of ten (its values lie in 1e-14 … 1).
GAP_DECADES = [10.0**k for k in range(-20, 2)]


@_lean
def jacobian_heatmap(
    df: pd.DataFrame,
    *,
    domain_max: float,
    title: str,
    subtitle: str,
    x_title: str,
    y_title: str,
    color_title: str,
    description: str,
) -> alt.Chart:
    """Heatmap of one row's softmax Jacobian J_ij = ∂p_i/∂z_j on a fixed diverging scale.

    Parameters
    ----------
    df : DataFrame
        One row per cell: ``i``, ``j`` (key numbers), ``value`` (J_ij), ``p_i``, ``p_j``.
    domain_max : float
        The colour scale spans [−domain_max, domain_max], centred on 0. Pass the same
        value to the unscaled and the scaled heatmap so they share one scale.
    """
    _check_rows(df)
    m = float(domain_max) if domain_max > 0 else 1.0
    return (
        alt.Chart(df)
        .mark_rect()
        .encode(
            x=alt.X("j:O", title=x_title, axis=alt.Axis(labelAngle=0, labelOverlap=True)),
            y=alt.Y("i:O", title=y_title, axis=alt.Axis(labelOverlap=True)),
            color=alt.Color(
                "value:Q",
                title=color_title,
                scale=alt.Scale(scheme=JACOBIAN_SCHEME, domain=[-m, m], domainMid=0),
                legend=alt.Legend(orient="right", format=".2~g", gradientLength=220),
            ),
            tooltip=[
                alt.Tooltip("i:O", title="i"),
                alt.Tooltip("j:O", title="j"),
                alt.Tooltip("value:Q", title=color_title, format=".3e"),
                alt.Tooltip("p_i:Q", title="p_i", format=".6~g"),
                alt.Tooltip("p_j:Q", title="p_j", format=".6~g"),
            ],
        )
        .properties(title=alt.Title(title, subtitle=subtitle), description=description, height=340)
    )


@_lean
def gap_explorer(
    df: pd.DataFrame,
    *,
    current_g: float,
    quantity_order: tuple[str, str],
    kind_order: tuple[str, str],
    title: str,
    x_title: str,
    y_title: str,
    description: str,
) -> alt.LayerChart:
    """‖J‖_F and the largest off-diagonal |J_ij| against the logit gap g, exact and laws.

    Parameters
    ----------
    df : DataFrame
        ``g``, ``quantity`` (legend label), ``kind`` (legend label: exact or law), ``value``.
    current_g : float
        The gap marked with a vertical rule.
    quantity_order : (str, str)
        Labels of ‖J‖_F (blue) and of the off-diagonal entry (reddish purple).
    kind_order : (str, str)
        Labels of the exact curves (solid) and of the laws (dashed).
    """
    _check_rows(df)
    color = alt.Color(
        "quantity:N",
        title=None,
        sort=list(quantity_order),
        scale=alt.Scale(domain=list(quantity_order), range=[COLORS["sqrt"], COLORS["custom"]]),
        legend=alt.Legend(orient="bottom", labelLimit=300),
    )
    dash = alt.StrokeDash(
        "kind:N",
        title=None,
        sort=list(kind_order),
        scale=alt.Scale(domain=list(kind_order), range=[[1, 0], [6, 4]]),
        legend=alt.Legend(orient="bottom", labelLimit=300),
    )
    x = alt.X("g:Q", title=x_title)
    y = alt.Y(
        "value:Q",
        title=y_title,
        scale=alt.Scale(type="log"),
        axis=alt.Axis(values=GAP_DECADES, labelExpr=LOG_LABELS),
    )
    tooltip = [
        alt.Tooltip("quantity:N"),
        alt.Tooltip("kind:N"),
        alt.Tooltip("g:Q", format=".2f"),
        alt.Tooltip("value:Q", format=".4~e"),
    ]
    # one line layer: exact curves wide and translucent, laws thin and dashed, so both
    # stay visible where they coincide
    # (width and opacity as literal values, not scales of "kind": a second and third
    # legend-less scale on the field of the dash legend makes Vega-Lite warn)
    exact = (df["kind"] == kind_order[0]).to_numpy()
    df = df.assign(width=np.where(exact, 4.0, 1.5), alpha=np.where(exact, 0.45, 1.0))
    lines = (
        alt.Chart(df)
        .mark_line()
        .encode(
            x=x,
            y=y,
            color=color,
            strokeDash=dash,
            strokeWidth=alt.StrokeWidth(field="width", type="quantitative", scale=None),
            opacity=alt.Opacity(field="alpha", type="quantitative", scale=None),
            tooltip=tooltip,
        )
    )
    marker = (
        alt.Chart(pd.DataFrame({"g": [current_g]}))
        .mark_rule(color=COLORS["accent"], strokeWidth=2)
        .encode(x=alt.X("g:Q"), tooltip=[alt.Tooltip("g:Q", format=".2f")])
    )
    return alt.layer(lines, marker, title=title, description=description, height=320)


@_lean
def median_mean_sweep(
    df: pd.DataFrame,
    *,
    current_d: int,
    title: str,
    subtitle: str,
    x_title: str,
    y_title: str,
    mean_label: str,
    description: str,
) -> alt.LayerChart:
    """:func:`sweep_lines` on a log y-axis (median line, quantile band) plus dashed means.

    Parameters
    ----------
    df : DataFrame
        One row per (series, d_k): ``d``, ``series``, ``color``, ``value`` (median),
        ``lo``, ``hi`` (e.g. 10 % and 90 % quantiles), ``mean``. All positive.
    mean_label : str
        Legend text of the dashed mean lines.
    """
    _check_rows(df)
    df = df.assign(stat=mean_label)  # one dataset for every layer
    base = sweep_lines(
        df,
        current_d=current_d,
        title=title,
        x_title=x_title,
        y_title=y_title,
        description=description,
        log_y=True,
        legend_columns=2,
    )
    order, colors = _legend_colors(df, "series")
    means = (
        alt.Chart(df.drop(columns="color"))
        .mark_line(strokeWidth=1.5)
        .encode(
            x=alt.X("d:Q", scale=alt.Scale(type="log", base=2)),
            y=alt.Y("mean:Q", scale=alt.Scale(type="log")),
            color=alt.Color("series:N", sort=order, scale=alt.Scale(domain=order, range=colors)),
            strokeDash=alt.StrokeDash(
                "stat:N",
                title=None,
                scale=alt.Scale(domain=[mean_label], range=[[6, 4]]),
                legend=alt.Legend(orient="bottom-left", labelLimit=300),
            ),
            tooltip=[
                alt.Tooltip("series:N"),
                alt.Tooltip("d:Q", title="d_k"),
                alt.Tooltip("mean:Q", title=mean_label, format=".4g"),
            ],
        )
    )
    # extend the freshly built chart in place: a second alt.layer(...) would redo the
    # (slow) merging of the layers' parameters on every rerun
    chart = base
    chart.layer.append(means)
    chart.title = alt.Title(title, subtitle=subtitle)
    chart.height = 440  # two legends, a subtitle and a log axis spanning 30 decades
    return chart


@_lean
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
    _check_rows(df)
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


# --- saturation page ----------------------------------------------------------------


@_lean
def two_score_bars(
    df: pd.DataFrame,
    *,
    title: str,
    x_title: str,
    y_title: str,
    description: str,
) -> alt.LayerChart:
    """Grouped bars of two softmaxes of the same two scores (raw and divided), labelled.

    Parameters
    ----------
    df : DataFrame
        One row per (version, key): ``key`` (label, e.g. "key 1"), ``version``
        (legend label, e.g. "softmax([10, 5])"), ``color`` (hex, one per version),
        ``weight`` (0…1).
    """
    _check_rows(df)
    order, colors = _legend_colors(df, "version")
    x = alt.X("key:N", title=x_title, axis=alt.Axis(labelAngle=0))
    offset = alt.XOffset("version:N", sort=order)
    y = alt.Y("weight:Q", title=y_title, scale=alt.Scale(domain=[0, 1]))
    bars = (
        alt.Chart()
        .mark_bar()
        .encode(
            x=x,
            xOffset=offset,
            y=y,
            color=alt.Color(
                "version:N",
                title=None,
                sort=order,
                scale=alt.Scale(domain=order, range=colors),
                legend=alt.Legend(orient="bottom", columns=1, labelLimit=400, symbolOpacity=1),
            ),
            tooltip=[
                alt.Tooltip("version:N"),
                alt.Tooltip("key:N"),
                alt.Tooltip("weight:Q", format=".7f"),
            ],
        )
    )
    labels = (
        alt.Chart()
        .mark_text(dy=-6, fontSize=12)
        .encode(x=x, xOffset=offset, y=y, text=alt.Text("weight:Q", format=".4f"))
    )
    return alt.layer(
        bars,
        labels,
        data=df.drop(columns="color"),
        title=title,
        description=description,
        height=360,
    )


@_lean
def weight_bars(
    df: pd.DataFrame,
    *,
    color: str,
    title: str,
    x_title: str,
    y_title: str,
    description: str,
) -> alt.Chart:
    """The attention weights of one query row over its keys, on a fixed 0–1 axis.

    Parameters
    ----------
    df : DataFrame
        One row per key: ``key`` (1-based), ``score`` (q·k), ``logit``, ``weight``.
    color : str
        Bar colour (e.g. :func:`alpha_color` of the row's scaling).
    """
    _check_rows(df)
    return (
        alt.Chart(df)
        .mark_bar(color=color)
        .encode(
            x=alt.X("key:O", title=x_title, axis=alt.Axis(labelAngle=0, labelOverlap=True)),
            y=alt.Y("weight:Q", title=y_title, scale=alt.Scale(domain=[0, 1])),
            tooltip=[
                alt.Tooltip("key:O", title=x_title),
                alt.Tooltip("score:Q", title="q·k", format=".4g"),
                alt.Tooltip("logit:Q", title="logit", format=".4g"),
                alt.Tooltip("weight:Q", title=y_title, format=".4g"),
            ],
        )
        .properties(title=title, description=description, height=260)
    )


@_lean
def attention_heatmap(
    df: pd.DataFrame,
    *,
    title: str,
    x_title: str,
    y_title: str,
    color_title: str,
    max_title: str,
    description: str,
) -> alt.LayerChart:
    """Heatmap of an attention matrix (queries × keys, 0–1 colour scale) with each row's max.

    Parameters
    ----------
    df : DataFrame
        One row per cell: ``i`` (query, 1-based), ``j`` (key), ``score``, ``logit``,
        ``weight``, ``is_max`` (True in the cell holding the row's largest weight),
        ``row_max``. The text of each row's max is written in that cell (white on
        dark cells, black on light ones).
    """
    _check_rows(df)
    n = int(df["j"].max())
    font = 11 if n <= 12 else 9 if n <= 20 else 7
    x = alt.X("j:O", title=x_title, axis=alt.Axis(labelAngle=0, labelOverlap=True))
    y = alt.Y("i:O", title=y_title, axis=alt.Axis(labelOverlap=True))
    cells = (
        alt.Chart()
        .mark_rect()
        .encode(
            x=x,
            y=y,
            color=alt.Color(
                "weight:Q",
                title=color_title,
                scale=alt.Scale(scheme="blues", domain=[0, 1]),
                legend=alt.Legend(orient="right", gradientLength=160),
            ),
            tooltip=[
                alt.Tooltip("i:O", title=y_title),
                alt.Tooltip("j:O", title=x_title),
                alt.Tooltip("score:Q", title="q·k", format=".4g"),
                alt.Tooltip("logit:Q", title="logit", format=".4g"),
                alt.Tooltip("weight:Q", title=color_title, format=".4g"),
                alt.Tooltip("row_max:Q", title=max_title, format=".4g"),
            ],
        )
    )
    text = (
        alt.Chart()
        .transform_filter(alt.datum.is_max)
        .mark_text(fontSize=font)
        .encode(
            x=x,
            y=y,
            text=alt.Text("weight:Q", format=".2f"),
            color=alt.Color(
                "ink:N",
                scale=alt.Scale(domain=["white", "black"], range=["white", "black"]),
                legend=None,
            ),
        )
    )
    data = df.assign(ink=df["weight"].gt(0.5).map({True: "white", False: "black"}))
    side = 120 + max(200, min(520, 22 * n))  # plot area + axes and title
    return alt.layer(cells, text, data=data, title=title, description=description, height=side)


@_lean
def rowmax_histogram(
    hist: pd.DataFrame,
    marks: pd.DataFrame,
    *,
    title: str,
    x_title: str,
    y_title: str,
    description: str,
) -> alt.LayerChart:
    """Overlaid histograms of the row max (unscaled, scaled) with rules at summary values.

    The y-axis (share of rows) is on a square-root scale, so that a pile-up next to 1
    does not flatten every other bar.

    Parameters
    ----------
    hist : DataFrame
        One row per (series, bin): ``series`` (legend label), ``color`` (hex),
        ``x0``, ``x1`` (bin edges in [0, 1]), ``share`` (fraction of rows).
    marks : DataFrame
        Vertical rules: ``series``, ``color``, ``value`` (x), ``kind`` (legend label of
        the dash style, e.g. "mean of rows", "largest entry of a tensor (median)").
    """
    _check_rows(hist)
    _check_rows(marks)
    order, colors = _legend_colors(hist, "series")
    color = alt.Color(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(domain=order, range=colors),
        legend=alt.Legend(orient="bottom", direction="vertical", symbolOpacity=1, labelLimit=400),
    )
    x_scale = alt.Scale(domain=[0, 1])
    bars = (
        alt.Chart(hist.drop(columns="color"))
        .mark_bar(opacity=0.55, binSpacing=0)
        .encode(
            x=alt.X("x0:Q", title=x_title, scale=x_scale),
            x2=alt.X2("x1"),
            y=alt.Y(
                "share:Q",
                title=y_title,
                axis=alt.Axis(format="%"),
                scale=alt.Scale(type="sqrt"),
                stack=None,
            ),
            y2=alt.Y2(datum=0),  # bars rise from 0 (x/x2 alone would make them ranged in x)
            color=color,
            tooltip=[
                alt.Tooltip("series:N"),
                alt.Tooltip("x0:Q", title="from", format=".2f"),
                alt.Tooltip("x1:Q", title="to", format=".2f"),
                alt.Tooltip("share:Q", title=y_title, format=".1%"),
            ],
        )
    )
    kinds = list(dict.fromkeys(marks["kind"]))
    rules = (
        alt.Chart(marks.drop(columns="color"))
        .mark_rule(strokeWidth=2)
        .encode(
            x=alt.X("value:Q", scale=x_scale),
            color=color,
            strokeDash=alt.StrokeDash(
                "kind:N",
                title=None,
                sort=kinds,
                scale=alt.Scale(domain=kinds, range=[[1, 0], [6, 3], [2, 2]][: len(kinds)]),
                legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=400),
            ),
            tooltip=[
                alt.Tooltip("series:N"),
                alt.Tooltip("kind:N"),
                alt.Tooltip("value:Q", format=".4f"),
            ],
        )
    )
    return alt.layer(bars, rules, title=title, description=description, height=420)


@_lean
def overflow_lines(
    df: pd.DataFrame,
    *,
    current_d: int,
    title: str,
    x_title: str,
    y_title: str,
    description: str,
) -> alt.LayerChart:
    """Share of rows overflowing in a naive softmax against d_k (log₂ axis).

    Colour = scaling, dash = dtype, band = ±2 s.e., rule = the current d_k.

    Parameters
    ----------
    df : DataFrame
        One row per (series, dtype, d): ``d``, ``series`` (scaling label), ``color``
        (hex, one per series), ``dtype`` (legend label, e.g. "float16"), ``rate``
        (0…1), ``lo``, ``hi``.
    """
    _check_rows(df)
    order, colors = _legend_colors(df, "series")
    dtypes = list(dict.fromkeys(df["dtype"]))
    color = alt.Color(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(domain=order, range=colors),
        legend=alt.Legend(orient="bottom", columns=4, symbolOpacity=1, symbolType="stroke"),
    )
    x = alt.X("d:Q", title=x_title, scale=alt.Scale(type="log", base=2))
    y_scale = alt.Scale(domain=[0, 1])
    tooltip = [
        alt.Tooltip("series:N"),
        alt.Tooltip("dtype:N"),
        alt.Tooltip("d:Q", title="d_k"),
        alt.Tooltip("rate:Q", format=".2%"),
    ]
    band = (
        alt.Chart()
        .mark_area(opacity=0.15)
        .encode(
            x=x,
            y=alt.Y("lo:Q", scale=y_scale, title=y_title),
            y2=alt.Y2("hi"),
            color=color,
            detail=alt.Detail("dtype:N"),
        )
    )
    line = (
        alt.Chart()
        .mark_line(strokeWidth=2)
        .encode(
            x=x,
            y=alt.Y("rate:Q", scale=y_scale, title=y_title, axis=alt.Axis(format="%")),
            color=color,
            strokeDash=alt.StrokeDash(
                "dtype:N",
                title=None,
                sort=dtypes,
                scale=alt.Scale(domain=dtypes, range=[[1, 0], [6, 3]][: len(dtypes)]),
                legend=alt.Legend(orient="bottom", symbolStrokeColor="black"),
            ),
            tooltip=tooltip,
        )
    )
    points = (
        alt.Chart()
        .mark_point(filled=True, size=18)
        .encode(x=x, y=alt.Y("rate:Q", scale=y_scale), color=color, tooltip=tooltip)
    )
    marker = d_marker(current_d)
    # band, line and points take the layer's data; the marker keeps its own
    return alt.layer(
        band,
        line,
        points,
        marker,
        data=df.drop(columns="color"),
        title=title,
        description=description,
        height=400,
    )


@_lean
def saturation_sweep_lines(df: pd.DataFrame, **kwargs) -> alt.LayerChart:
    """:func:`sweep_lines` made taller: its legend sits below the plot, inside the height."""
    chart = sweep_lines(df, **kwargs)
    chart.height = 380  # set in place: .properties() would copy and re-merge every layer
    return chart


# --- which-d page ---------------------------------------------------------------------
# Encodings are channel objects with field= and type= (alt.X(field=..., type=...),
# alt.XValue, ...): Altair turns a shorthand string, alt.value() or alt.condition() into
# one through a schema lookup, and parses shorthands against the data frame in to_dict —
# milliseconds per channel on every rerun.


@_lean
def divisor_bars(
    bars: pd.DataFrame,
    points: pd.DataFrame,
    *,
    value: str,
    title: str,
    x_title: str,
    y_title: str,
    description: str,
    head_title: str,
    theory: bool = True,
    value_labels: bool = True,
    reference: pd.DataFrame | None = None,
) -> alt.LayerChart:
    """One bar per divisor (mean over heads), each head as a dot, theory as a black tick.

    Parameters
    ----------
    bars : DataFrame
        One row per divisor, in display order: ``label`` (axis text), ``color`` (hex),
        ``selected`` (bool: drawn opaque with an outline), the column ``value`` and,
        with ``theory``, ``theory_std``.
    points : DataFrame
        One row per (divisor, head): ``label``, ``head`` and the column ``value``.
    value : str
        The statistic shown, e.g. ``"std"`` or ``"entropy"``.
    head_title : str
        Tooltip title of the head number.
    theory : bool
        Draw ``theory_std`` as a black tick on each bar.
    value_labels : bool
        Print each bar's value above it.
    reference : DataFrame, optional
        Horizontal dashed reference lines: ``y`` and ``label`` (tooltip), e.g. ln n_keys.

    Notes
    -----
    Streamlit validates the whole spec on every rerun, at about 1.5 ms per layer: x and
    y are written once on the layer and inherited by its marks, which share its data.
    """
    _check_rows(bars)
    _check_rows(points)
    order = list(bars["label"])
    selected = bars["selected"].astype(bool)
    data = bars.drop(columns="color").assign(
        opacity=selected.map({True: 1.0, False: 0.45}),
        outline=selected.map({True: 2.5, False: 0.0}),
    )
    x = alt.X(
        field="label",
        type="nominal",
        title=x_title,
        sort=order,
        axis=alt.Axis(labelAngle=0, labelLimit=220),
    )
    top = max(bars[value].max(), points[value].max(), bars["theory_std"].max() if theory else 0)
    # all zero (W_q = 0): give the axis a unit range instead of a degenerate one
    y_scale = alt.Scale(domain=[0, 1]) if not top > 0 else alt.Scale(zero=True)
    y = alt.Y(field=value, type="quantitative", title=y_title, scale=y_scale)
    value_tip = alt.Tooltip(field=value, type="quantitative", title=y_title, format=".4g")
    marks = [
        alt.Chart()
        .mark_bar(stroke=COLORS["theory"])
        .encode(
            color=alt.Color(
                field="label",
                type="nominal",
                scale=alt.Scale(domain=order, range=list(bars["color"])),
                legend=None,
            ),
            opacity=alt.Opacity(field="opacity", type="quantitative", scale=None, legend=None),
            strokeWidth=alt.StrokeWidth(
                field="outline", type="quantitative", scale=None, legend=None
            ),
            tooltip=[value_tip],
        ),
        alt.Chart(points)
        .mark_circle(size=28, color=COLORS["theory"], opacity=0.55)
        .encode(
            tooltip=[alt.Tooltip(field="head", type="quantitative", title=head_title), value_tip]
        ),
    ]
    if value_labels:  # three significant digits without exponent: 0.354, 4,100
        marks.append(
            alt.Chart()
            .mark_text(dy=-9, fontWeight="bold")
            .encode(text=alt.Text(field=value, type="quantitative", format=",.3~r"))
        )
    if theory:
        marks.append(
            alt.Chart()
            .mark_tick(color=COLORS["theory"], thickness=2.5, size=46)
            .encode(
                y=alt.Y(field="theory_std", type="quantitative"),
                tooltip=[alt.Tooltip(field="theory_std", type="quantitative", format=".4g")],
            )
        )
    options = {"title": title, "description": description, "height": 280}
    shared = alt.FacetedEncoding(x=x, y=y)  # given to the constructor: .encode() copies
    if reference is None or not len(reference):
        return alt.layer(*marks, data=data, encoding=shared, **options)
    rule = (
        alt.Chart(reference)
        .mark_rule(color=COLORS["theory"], strokeDash=[4, 3], strokeWidth=1.5)
        .encode(
            y=alt.Y(field="y", type="quantitative"),
            tooltip=[
                alt.Tooltip(field="label", type="nominal"),
                alt.Tooltip(field="y", type="quantitative", format=".4g"),
            ],
        )
    )
    return alt.layer(alt.layer(*marks, data=data, encoding=shared), rule, **options)


@_lean
def scale_lines(
    df: pd.DataFrame,
    *,
    current: float,
    title: str,
    x_title: str,
    y_title: str,
    description: str,
    theory_title: str,
) -> alt.LayerChart:
    """A statistic against an input scale on log–log axes, one line per series, with
    dashed theory lines and a rule at the current scale.

    Parameters
    ----------
    df : DataFrame
        One row per (series, scale): ``scale`` (> 0), ``series`` (legend label),
        ``color`` (hex, one per series), ``value`` (> 0), ``theory`` (> 0).
    current : float
        The scale marked with a vertical rule.
    theory_title : str
        Tooltip title of the theory value.
    """
    _check_rows(df)
    order, colors = _legend_colors(df, "series")
    color = alt.Color(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(domain=order, range=colors),
        legend=alt.Legend(orient="top-left"),
    )
    scales = sorted(float(s) for s in df["scale"].unique())
    x = alt.X(
        "scale:Q",
        title=x_title,
        scale=alt.Scale(type="log", base=2),
        axis=alt.Axis(values=scales, format="~g", grid=False),
    )
    y_scale = alt.Scale(type="log")
    y_axis = alt.Axis(tickCount=6, format="~g")
    base = alt.Chart()  # line and theory share the top-level data
    line = base.mark_line(point=True, strokeWidth=2.5).encode(
        x=x,
        y=alt.Y(field="value", type="quantitative", scale=y_scale, title=y_title, axis=y_axis),
        color=color,
        tooltip=[
            alt.Tooltip(field="series", type="nominal"),
            alt.Tooltip(field="scale", type="quantitative", title=x_title, format="g"),
            alt.Tooltip(field="value", type="quantitative", title=y_title, format=".4g"),
            alt.Tooltip(field="theory", type="quantitative", title=theory_title, format=".4g"),
        ],
    )
    theory = base.mark_line(color=COLORS["theory"], strokeDash=[5, 4], strokeWidth=1.2).encode(
        x=x,
        y=alt.Y(field="theory", type="quantitative", scale=y_scale, title=y_title, axis=y_axis),
        detail=alt.Detail(field="series", type="nominal"),
    )
    marker = (
        alt.Chart(pd.DataFrame({"scale": [current]}))
        .mark_rule(color=COLORS["accent"], strokeWidth=2)
        .encode(
            x=alt.X(field="scale", type="quantitative"),
            tooltip=[alt.Tooltip(field="scale", type="quantitative", title=x_title, format="g")],
        )
    )
    return alt.layer(
        line,
        theory,
        marker,
        data=df.drop(columns="color"),
        title=title,
        description=description,
        height=320,
    )
