"""Controls and chart frames of the "Which d?" page.

``n_heads`` is a select box whose options are the divisors of d_model: a URL value
that does not divide d_model warns and falls back (like every bound control, through
:mod:`ui.controls`), and when d_model changes under a chosen n_heads that no longer
divides it, the nearest divisor is taken and the page says so.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from core.which_d import INITS, divisor_value, divisors, init_stds, layernorm_logit_std
from ui import charts, controls, workshop
from ui.i18n import t

D_MODEL_MIN, D_MODEL_MAX, D_MODEL_DEFAULT = 64, 4096, 512
#: Per-head width most models use; the default n_heads gives the d_k closest to it.
TYPICAL_D_K = 64

#: Colour of each divisor, by meaning: blue the right one (√d_k), the others distinct.
DIVISOR_COLORS = {
    "d_k": charts.COLORS["sqrt"],
    "d_model": charts.COLORS["sky"],
    "d_q": charts.COLORS["sky"],
    "d_kv": charts.COLORS["custom"],
    "none": charts.COLORS["unscaled"],
}


def d_model_input() -> int:
    """d_model (64–4096) as a number input with ÷2 and ×2 buttons, bound to ``?d_model=``."""
    return controls.halving_input(
        "d_model",
        t("which_d.d_model"),
        default=D_MODEL_DEFAULT,
        min_value=D_MODEL_MIN,
        max_value=D_MODEL_MAX,
        help=t("which_d.d_model_help"),
    )


def default_heads(d_model: int) -> int:
    """The divisor of d_model whose per-head width d_model / n_heads is closest to 64."""
    return min(divisors(d_model), key=lambda h: (abs(math.log(d_model / h / TYPICAL_D_K)), h))


def nearest_divisor(d_model: int, n_heads: int) -> int:
    """The divisor of d_model closest to n_heads on a log scale (ties: fewer heads)."""
    return min(divisors(d_model), key=lambda h: (abs(math.log(h / n_heads)), h))


def n_heads_select(d_model: int) -> int:
    """n_heads as a select box over the divisors of d_model, bound to ``?n_heads=``."""
    options = [str(h) for h in divisors(d_model)]
    default = str(default_heads(d_model))
    current = st.session_state.get("n_heads")
    if current is not None and current not in options:
        replacement = str(nearest_divisor(d_model, int(current)))
        st.session_state["n_heads"] = replacement
        st.info(
            t("which_d.n_heads_moved", old=current, new=replacement, d_model=d_model),
            icon=":material/info:",
        )
    allowed = t("which_d.n_heads_allowed", d_model=d_model, options=", ".join(options))

    return int(
        controls.choice(
            "n_heads",
            t("which_d.n_heads"),
            options,
            default=default,
            widget="selectbox",
            help=t("which_d.n_heads_help"),
            allowed=allowed,
            reset_to=str(default_heads(D_MODEL_DEFAULT)),
        )
    )


def cross_inputs() -> tuple[int, int, int]:
    """Cross-attention widths d_q, d_kv (1–4096) and d_k (1–1024), bound to the URL."""
    cols = workshop.control_columns(3)
    specs = (("d_q_in", 4096, 512), ("d_kv_in", 4096, 1024), ("d_proj", 1024, 64))
    values = []
    for col, (key, top, default) in zip(cols, specs, strict=True):
        with col:
            values.append(
                controls.int_input(
                    key, t(f"which_d.{key}"), min_value=1, max_value=top, default=default
                )
            )
    return tuple(values)


def multi_head_metrics(bars: pd.DataFrame, divisor: str, label: str, n_heads: int) -> None:
    """Logit std, entropy and largest weight under the chosen divisor, and the ratio of the
    ÷√d_k and ÷√d_model stds (= √n_heads); ``bars`` from :func:`divisor_charts`."""
    off = {"delta_color": "off", "delta_arrow": "off"}
    m = st.columns(4)
    m[0].metric(t("which_d.m_std", div=label), f"{bars.loc[divisor, 'std']:.4g}")
    m[1].metric(t("which_d.m_entropy", div=label), f"{bars.loc[divisor, 'entropy']:.3f}")
    m[2].metric(t("which_d.m_max", div=label), f"{bars.loc[divisor, 'max_weight']:.3f}")
    wrong_std = bars.loc["d_model", "std"]
    ratio = f"{bars.loc['d_k', 'std'] / wrong_std:.4g}" if wrong_std > 0 else "—"  # W_q = 0
    r = f"{math.sqrt(n_heads):.4g}"
    m[3].metric(t("which_d.m_ratio"), ratio, t("which_d.m_ratio_delta", n=n_heads, r=r), **off)


def divisor_labels(prefix: str, names, *, d_k: int, d_q: int, d_kv: int) -> dict[str, str]:
    """Axis label of each divisor with its value, e.g. ``÷√d_k = ÷8``."""
    return {
        name: t(
            f"which_d.{prefix}_{name}",
            r=f"{divisor_value(name, d_k=d_k, d_q=d_q, d_kv=d_kv):.3g}",
        )
        for name in names
    }


def divisor_frames(
    frame: pd.DataFrame, init: str, selected: str, labels: dict[str, str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Bars (mean over heads, theory, highlight) and per-head points for one init.

    Parameters
    ----------
    frame : DataFrame
        From :func:`ui.cache.which_d_heads` or :func:`ui.cache.which_d_cross`.
    init : str
        The initialisation shown.
    selected : str
        The divisor to highlight.
    labels : dict
        Divisor name -> axis label, in display order.

    Returns
    -------
    bars : DataFrame with ``label``, ``color``, ``selected``, ``std``, ``entropy``,
        ``max_weight``, ``theory_std``.
    points : DataFrame, one row per head and divisor: ``label``, ``head``, ``std``,
        ``entropy``, and the bar and tick the head belongs to: ``mean_std``,
        ``mean_entropy`` (mean over heads) and ``theory_std``. The charts' CSV download.
    """
    sub = frame[frame["init"].to_numpy() == init]
    names = sub["divisor"].to_numpy()
    columns = ("std", "entropy", "max_weight", "theory_std")
    values = {c: sub[c].to_numpy() for c in columns}
    masks = [names == name for name in labels]
    means = {c: np.array([values[c][m].mean() for m in masks]) for c in columns}
    bars = pd.DataFrame(
        {
            "divisor": list(labels),
            "label": list(labels.values()),
            "color": [DIVISOR_COLORS[name] for name in labels],
            "selected": [name == selected for name in labels],
            **means,
        }
    )
    bar = np.zeros(len(names), dtype=int)  # the bar of each point
    for i, mask in enumerate(masks):
        bar[mask] = i
    points = pd.DataFrame(
        {
            "label": [labels[name] for name in names],
            "head": sub["head"].to_numpy(),
            "std": values["std"],
            "entropy": values["entropy"],
            "mean_std": means["std"][bar],
            "mean_entropy": means["entropy"][bar],
            "theory_std": means["theory_std"][bar],
        }
    )
    return bars, points


def divisor_charts(
    frame: pd.DataFrame,
    init: str,
    selected: str,
    labels: dict[str, str],
    prefix: str,
    fmt: dict[str, object],
    sources: dict[str, list],
) -> pd.DataFrame:
    """Draw the logit-std and entropy bar charts of one experiment side by side.

    ``prefix`` selects the catalog strings (``which_d.<prefix>_std_title`` …) and the
    chart keys; ``fmt`` fills their placeholders; ``sources`` maps ``std``/``entropy``
    to the core functions shown under each chart. Each chart offers the per-head frame
    of :func:`divisor_frames` as CSV. Returns the bars indexed by divisor.
    """
    from ui.cache import WHICH_D_TOKENS as n

    bars, points = divisor_frames(frame, init, selected, labels)
    uniform = pd.DataFrame({"y": [math.log(n)], "label": [t("which_d.ref_uniform", n=n)]})
    for col, value in zip(st.columns(2), ("std", "entropy"), strict=True):
        with col:
            workshop.chart(
                charts.divisor_bars(
                    bars,
                    points,
                    value=value,
                    title=t(f"which_d.{prefix}_{value}_title", **fmt),
                    x_title=t("which_d.axis_divisor"),
                    y_title=t(f"which_d.axis_{value}"),
                    description=t(f"which_d.{prefix}_{value}_alt", **fmt),
                    head_title=t("which_d.head"),
                    theory=value == "std",
                    value_labels=value == "std",
                    reference=uniform if value == "entropy" else None,
                ),
                key=f"which_d_{prefix}_{value}",
                data=points,
                source=sources[value],
            )
    return bars.set_index("divisor")


# --- workshop: the prediction and the misconception card ------------------------------


def fan_in_means(frame: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Mean over heads of ``std`` and ``entropy`` per divisor, fan-in projections only:
    ``{divisor: {"std": …, "entropy": …}}``."""
    fan_in = frame["init"].to_numpy() == "fan_in"
    names = frame["divisor"].to_numpy()[fan_in]
    stats = {c: frame[c].to_numpy()[fan_in] for c in ("std", "entropy")}
    return {
        name: {c: float(v[names == name].mean()) for c, v in stats.items()}
        for name in dict.fromkeys(names)
    }


def std_options(n_heads: int) -> tuple[list[float], list[str]]:
    """Candidate per-head logit stds under ÷√d_model, ascending: 1/n, 1/√n, 1, √n.

    Distinct for every n_heads ≥ 2 (neighbours differ by at least √2).
    """
    r = math.sqrt(n_heads)
    values = [1 / n_heads, 1 / r, 1.0, r]
    labels = [
        f"{values[0]:.3g} (1/{n_heads})",
        f"{values[1]:.3g} (1/√{n_heads})",
        "1",
        f"{values[3]:.3g} (√{n_heads})",
    ]
    return values, labels


def closest_option(values: list[float], measured: float) -> int:
    """Index of the positive value closest to ``measured`` on a log scale."""
    if not measured > 0:
        return 0
    return min(range(len(values)), key=lambda i: abs(math.log(values[i] / measured)))


def predict_head_std(
    frame: pd.DataFrame, d_model: int, n_heads: int, shown: int, w_init: str = "fan_in"
) -> bool:
    """Ask for the per-head logit std under ÷√d_model (fan-in) before the section-1 charts.

    The answer is the option nearest to the measurement in ``frame``
    (:func:`ui.cache.which_d_heads`). With one head d_k = d_model: nothing to ask. With
    another ``w_init`` the answer says the charts below use it.
    """
    d_k = d_model // n_heads
    if n_heads == 1:
        st.caption(t("which_d_workshop.one_head", d_model=d_model))
        return True
    means = fan_in_means(frame)
    measured = means["d_model"]["std"]
    values, labels = std_options(n_heads)
    return workshop.predict(
        "which_d_std",
        t("which_d_workshop.predict_q", d_model=d_model, n_heads=n_heads, d_k=d_k),
        labels,
        answer=closest_option(values, measured),
        explain=t(
            "which_d_workshop.predict_explain",
            std=f"{measured:.3g}",
            std_k=f"{means['d_k']['std']:.3g}",
            shown=shown,
            d_k=d_k,
            n_heads=n_heads,
            r=f"{math.sqrt(n_heads):.3g}",
        )
        + (
            ""
            if w_init == "fan_in"
            else " "
            + t("which_d_workshop.predict_other_init", init=t(f"which_d.init_{w_init}"))
            + (" " + t("which_d_workshop.predict_zero_q") if w_init == "zero_q" else "")
        ),
        about=(d_model, n_heads, round(measured, 6)),
    )


def myth_card(frame: pd.DataFrame, d_model: int, n_heads: int) -> None:
    """“The d in √d is d_model”, against the live fan-in numbers of ÷√d_k and ÷√d_model."""
    from ui.cache import WHICH_D_TOKENS as n

    d_k = d_model // n_heads
    means = fan_in_means(frame)
    live = {
        "d_model": d_model,
        "n_heads": n_heads,
        "d_k": d_k,
        "std_k": f"{means['d_k']['std']:.3g}",
        "h_k": f"{means['d_k']['entropy']:.3f}",
        "std_m": f"{means['d_model']['std']:.3g}",
        "h_m": f"{means['d_model']['entropy']:.3f}",
        "n": n,
        "h_u": f"{math.log(n):.3f}",
    }
    reality = "which_d_workshop.myth_reality" + ("_one" if n_heads == 1 else "")
    workshop.myth(t("which_d_workshop.myth_claim"), t(reality, **live))


def init_cards(frame: pd.DataFrame, d_model: int, current: str) -> None:
    """One card per initialisation: Var(q_i), and the logit std and entropy under ÷√d_k
    (measured and theory) from :func:`ui.cache.which_d_heads`; ◀ marks ``current``."""
    from ui.cache import WHICH_D_TOKENS as n

    off = {"delta_color": "off", "delta_arrow": "off"}
    uniform = t("which_d.m_uniform", n=n, h=f"{math.log(n):.3f}")
    for col, init in zip(st.columns(len(INITS)), INITS, strict=True):
        row = frame[(frame["init"] == init) & (frame["divisor"] == "d_k")]
        var_q = d_model * init_stds(init, d_model, d_model)[0] ** 2
        theory = t("which_d.m_theory", theory=f"{row['theory_std'].iloc[0]:.4g}")
        with col.container(border=True):
            st.markdown(f"**{t(f'which_d.init_{init}')}**" + (" ◀" if init == current else ""))
            st.latex(rf"\mathrm{{Var}}(q_i) = d_\text{{model}}\,\sigma_{{w_q}}^2 = {var_q:.4g}")
            st.metric(t("which_d.m_init_std"), f"{row['std'].mean():.4g}", theory, **off)
            st.metric(t("which_d.m_init_entropy"), f"{row['entropy'].mean():.3f}", uniform, **off)


def qk_lines(sweep: pd.DataFrame) -> tuple[pd.DataFrame, dict[bool, str]]:
    """The QK-LayerNorm sweep as :func:`ui.charts.scale_lines` data, and the series labels."""
    series = {False: t("which_d.series_raw"), True: t("which_d.series_ln")}
    colors = {False: charts.COLORS["unscaled"], True: charts.COLORS["sqrt"]}
    lines = pd.DataFrame(
        {
            "scale": sweep["scale"],
            "series": sweep["layernorm"].map(series),
            "color": sweep["layernorm"].map(colors),
            "value": sweep["std"],
            "theory": sweep["theory_std"],
        }
    )
    return lines, series


# --- LaTeX with the live numbers --------------------------------------------------------


def tex_number(value: float, digits: int = 4) -> str:
    """A number for LaTeX: plain in [1e-3, 1e5), otherwise m \\times 10^{e}."""
    if value == 0 or 1e-3 <= abs(value) < 1e5:
        return f"{value:.{digits}g}"
    exponent = math.floor(math.log10(abs(value)))
    mantissa = value / 10**exponent
    return rf"{mantissa:.{digits}g}\times 10^{{{exponent}}}"


def multi_head_latex(d_model: int, n_heads: int, var: float) -> str:
    """d_k = d_model / n_heads, Var(q·k), and the logit std under √d_k and √d_model."""
    d_k = d_model // n_heads
    right, wrong = math.sqrt(var / d_k), math.sqrt(var / d_model)
    return (
        r"\begin{gathered}"
        rf"d_k = \frac{{d_\text{{model}}}}{{n_\text{{heads}}}} = \frac{{{d_model}}}{{{n_heads}}}"
        rf" = {d_k},\qquad \mathrm{{Var}}(q\cdot k) = d_k\,(d_\text{{model}}\,\sigma_w^2"
        rf"\sigma_x^2)^2 = {tex_number(var)},\\"
        rf"\mathrm{{std}}\Big(\tfrac{{q\cdot k}}{{\sqrt{{d_k}}}}\Big) = {tex_number(right)},\quad"
        rf"\mathrm{{std}}\Big(\tfrac{{q\cdot k}}{{\sqrt{{d_\text{{model}}}}}}\Big) = {tex_number(wrong)}"
        rf" = \frac{{{tex_number(right)}}}{{\sqrt{{{n_heads}}}}}"
        r"\end{gathered}"
    )


def cross_latex(d_k: int, d_q: int, d_kv: int, var: float) -> str:
    """Var(q·k) of cross-attention and the logit std under the three divisors."""
    stds = r",\quad ".join(
        rf"\mathrm{{std}}\Big(\tfrac{{q\cdot k}}{{\sqrt{{{n}}}}}\Big) = {tex_number(math.sqrt(var / n), 3)}"
        for n in (d_k, d_q, d_kv)
    )
    return (
        r"\begin{gathered}"
        rf"\mathrm{{Var}}(q\cdot k) = d_k\,(d_q\,\sigma_{{w_q}}^2\sigma_x^2)\,"
        rf"(d_{{kv}}\,\sigma_{{w_k}}^2\sigma_x^2) = {tex_number(var)},\\ {stds}"
        r"\end{gathered}"
    )


def where_latex(d_k: int) -> str:
    """q d_k^-¼ · k d_k^-¼ = q·k / √d_k, and division by c as softmax temperature c."""
    return (
        rf"\left(q\,d_k^{{-1/4}}\right)\cdot\left(k\,d_k^{{-1/4}}\right)"
        rf" = \frac{{q\cdot k}}{{\sqrt{{{d_k}}}}} = \frac{{q\cdot k}}{{{math.sqrt(d_k):.4g}}},"
        r"\qquad \mathrm{softmax}\!\left(\frac{s}{c}\right)_i = \frac{e^{s_i/c}}{\sum_j e^{s_j/c}}"
        r" = \mathrm{softmax}_{T=c}(s)_i"
    )


def qk_latex(scale: float, d_k: int) -> str:
    """Logit std s² without normalisation; with QK LayerNorm √(d_k/(d_k − 1)) whatever s
    (:func:`core.which_d.layernorm_logit_std`; 0 at d_k = 1), bounded by √d_k."""
    ln = (
        rf"\approx \sqrt{{\tfrac{{d_k}}{{d_k - 1}}}} = {layernorm_logit_std(d_k):.4g}"
        if d_k >= 2
        else "= 0"
    )
    return (
        rf"\mathrm{{std}}\Big(\tfrac{{(s q)\cdot(s k)}}{{\sqrt{{d_k}}}}\Big) = s^2"
        rf" = {scale:g}^2 = {scale**2:g},\qquad"
        rf"\mathrm{{std}}\Big(\tfrac{{\mathrm{{LN}}(s q)\cdot\mathrm{{LN}}(s k)}}{{\sqrt{{d_k}}}}\Big)"
        rf" {ln},\quad \Big|\tfrac{{\mathrm{{LN}}(q)\cdot\mathrm{{LN}}(k)}}{{\sqrt{{d_k}}}}\Big|"
        rf" \le \sqrt{{d_k}} = {math.sqrt(d_k):.4g}"
    )
