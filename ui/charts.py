"""Altair chart builders: a tidy DataFrame in, a chart out.

No Streamlit calls and no ``.configure_*`` here (it would block layering); every
builder takes its user-facing strings as arguments so the page can pass translated
text. Colours come from the Okabe–Ito palette, which stays distinct under the common
forms of colour blindness.
"""

from __future__ import annotations

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


def _check_rows(df: pd.DataFrame) -> pd.DataFrame:
    if len(df) > MAX_ROWS:
        raise ValueError(f"chart data must have at most {MAX_ROWS} rows, got {len(df)}")
    return df


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
    bars = base.mark_bar(opacity=0.55, color=color, binSpacing=0).encode(
        x=alt.X("x0:Q", title=x_title),
        x2="x1:Q",
        y=alt.Y("density:Q", title=y_title),
        tooltip=tooltip,
    )
    long = df.melt(id_vars=["x"], value_vars=["exact", "gauss"], var_name="law", value_name="y")
    names = dict(zip(("exact", "gauss"), law_labels, strict=True))
    long["law"] = long["law"].map(names)
    lines = (
        alt.Chart(long)
        .mark_line(strokeWidth=2)
        .encode(
            x="x:Q",
            y="y:Q",
            strokeDash=alt.StrokeDash(
                "law:N",
                title=None,
                sort=list(names.values()),
                legend=alt.Legend(orient="top-right"),
            ),
            color=alt.value(COLORS["theory"]),
            tooltip=[
                alt.Tooltip("law:N"),
                alt.Tooltip("x:Q", format=".3g"),
                alt.Tooltip("y:Q", format=".4g"),
            ],
        )
    )
    return alt.layer(bars, lines).properties(title=title, description=description, height=300)


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
        x=x, y=alt.Y("theory:Q", scale=y_scale, title=y_title), detail="series:N"
    )
    bars = base.mark_rule(strokeWidth=2).encode(
        x=x, y=alt.Y("lo:Q", scale=y_scale), y2="hi:Q", color=series
    )
    points = base.mark_point(filled=True, size=50).encode(
        x=x, y=alt.Y("var:Q", scale=y_scale, title=y_title), color=series, tooltip=tooltip
    )
    marker = (
        alt.Chart(pd.DataFrame({"d": [current_d]}))
        .mark_rule(color=COLORS["accent"], strokeWidth=2)
        .encode(x="d:Q", tooltip=[alt.Tooltip("d:Q", title="d_k")])
    )
    return alt.layer(theory, bars, points, marker).properties(
        title=title, description=description, height=320
    )


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
    x = alt.X("i:Q", title=x_title)
    lines = (
        alt.Chart(paths)
        .mark_line(strokeWidth=1, opacity=0.7)
        .encode(
            x=x,
            y=alt.Y("sum:Q", title=y_title),
            detail="path:N",
            color=alt.value(COLORS["sqrt"]),
            tooltip=[alt.Tooltip("path:N"), alt.Tooltip("i:Q"), alt.Tooltip("sum:Q", format=".3g")],
        )
    )
    env = alt.Chart(envelope)
    dash = alt.StrokeDash("band:N", title=None, legend=alt.Legend(orient="bottom"))
    upper = env.mark_line(color=COLORS["theory"]).encode(x=x, y="hi:Q", strokeDash=dash)
    lower = env.mark_line(color=COLORS["theory"]).encode(x=x, y="lo:Q", strokeDash=dash)
    return alt.layer(lines, upper, lower).properties(
        title=title, description=description, height=320
    )


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
        .properties(title=title, description=description, height=260)
    )


def alpha_color(alpha: float) -> str:
    """Colour of a scaling exponent: vermillion none, blue 1/√d_k, green 1/d_k, purple other."""
    return {0.0: COLORS["unscaled"], 0.5: COLORS["sqrt"], 1.0: COLORS["linear"]}.get(
        round(float(alpha), 6), COLORS["custom"]
    )


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
    """
    _check_rows(df)
    order = list(dict.fromkeys(df["series"]))
    colors = [df.loc[df["series"] == s, "color"].iloc[0] for s in order]
    color = alt.Color(
        "series:N",
        title=None,
        sort=order,
        scale=alt.Scale(domain=order, range=colors),
        legend=alt.Legend(orient="bottom", columns=4),
    )
    x = alt.X("d:Q", title=x_title, scale=alt.Scale(type="log", base=2))
    y_scale = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    if y_domain is not None:
        y_scale = alt.Scale(type="log" if log_y else "linear", domain=list(y_domain))
    base = alt.Chart(df.drop(columns="color"))
    band = base.mark_area(opacity=0.18).encode(
        x=x, y=alt.Y("lo:Q", scale=y_scale, title=y_title), y2="hi:Q", color=color
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
            rule.encode(y="y:Q", tooltip=[alt.Tooltip("label:N"), alt.Tooltip("y:Q", format=".4g")])
        )
        layers.append(
            alt.Chart(reference)
            .mark_text(align="left", dx=4, dy=-6, color=COLORS["theory"])
            .encode(x=alt.value(0), y="y:Q", text="label:N")
        )
    marker = (
        alt.Chart(pd.DataFrame({"d": [current_d]}))
        .mark_rule(color=COLORS["accent"], strokeWidth=2)
        .encode(x="d:Q", tooltip=[alt.Tooltip("d:Q", title="d_k")])
    )
    layers.append(marker)
    return alt.layer(*layers).properties(title=title, description=description, height=300)


# --- which-d page ---------------------------------------------------------------------
# Encodings are channel objects with field= and type= (alt.X(field=..., type=...),
# alt.XValue, ...): Altair turns a shorthand string, alt.value() or alt.condition() into
# one through a schema lookup, and parses shorthands against the data frame in to_dict —
# milliseconds per channel on every rerun.


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
    order = list(dict.fromkeys(df["series"]))
    colors = [df.loc[df["series"] == s, "color"].iloc[0] for s in order]
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
