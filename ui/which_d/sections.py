"""Controls and sections of the "Which d?" page.

``n_heads`` is a select box whose options are the divisors of d_model: a URL value
that does not divide d_model warns and falls back (like every bound control, through
:mod:`ui.common.controls`), and when d_model changes under a chosen n_heads that no
longer divides it, the nearest divisor is taken and the page says so.

The page script reads the controls and decides which sections are shown (presenter
steps); the experiments come from the cached calls of :mod:`ui.which_d.data`.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pandas as pd
import streamlit as st

from core import heads as heads_core
from core import which_d as which_d_core
from core.which_d import (
    DIVISORS_CROSS,
    DIVISORS_SELF,
    INITS,
    divisor_value,
    divisors,
    init_stds,
    score_variance,
)
from ui.common import controls, workshop
from ui.common.i18n import t
from ui.which_d import charts, data, formulas
from ui.which_d.data import closest_option, divisor_frames, fan_in_means, std_options

#: Tokens per sequence in every experiment of the page.
N = data.WHICH_D_TOKENS
OFF = {"delta_color": "off", "delta_arrow": "off"}
#: The core function behind every chart's statistics.
STATS = [which_d_core.head_statistics]


def d_model_input() -> int:
    """d_model as a number input with ÷2 and ×2 buttons, bound to ``?d_model=``."""
    return controls.halving_input("d_model", t("which_d.d_model"), help=t("which_d.d_model_help"))


def nearest_divisor(d_model: int, n_heads: int) -> int:
    """The divisor of d_model closest to n_heads on a log scale (ties: fewer heads)."""
    return min(divisors(d_model), key=lambda h: (abs(math.log(h / n_heads)), h))


def n_heads_select(d_model: int) -> int:
    """n_heads as a select box over the divisors of d_model, bound to ``?n_heads=``."""
    options = controls.param("n_heads", d_model=d_model).options
    current = st.session_state.get("n_heads")
    if current is not None and current not in options:
        replacement = str(nearest_divisor(d_model, int(current)))
        st.session_state["n_heads"] = replacement
        st.info(
            t("which_d.n_heads_moved", old=current, new=replacement, d_model=d_model),
            icon=":material/info:",
        )
    return int(
        controls.choice(
            "n_heads",
            t("which_d.n_heads"),
            widget="selectbox",
            help=t("which_d.n_heads_help"),
            given={"d_model": d_model},
        )
    )


def cross_inputs() -> tuple[int, int, int]:
    """Cross-attention widths d_q, d_kv and d_k, bound to the URL; d_k moves as it does on
    every page (:func:`controls.d_k_input`)."""
    cols = workshop.control_columns(3)
    values = []
    for col, key in zip(cols[:2], ("d_q_in", "d_kv_in"), strict=True):
        with col:
            values.append(controls.int_input(key, t(f"which_d.{key}")))
    with cols[2]:
        values.append(controls.d_k_input("d_proj", label=t("which_d.d_proj")))
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


def divisor_templates(
    frame: pd.DataFrame,
    init: str,
    selected: str,
    labels: dict[str, str],
    prefix: str,
    fmt: dict[str, object],
) -> tuple[pd.DataFrame, list[tuple[str, partial, pd.DataFrame]]]:
    """The logit-std and entropy bar charts of one experiment, deferred.

    ``prefix`` selects the catalog strings (``which_d.<prefix>_std_title`` …); ``fmt``
    fills their placeholders. Returns the bars indexed by divisor and, per statistic,
    (name, deferred chart, the per-head frame of :func:`divisor_frames`: its CSV).
    """
    bars, points = divisor_frames(frame, init, selected, labels)
    uniform = pd.DataFrame({"y": [math.log(N)], "label": [t("which_d.ref_uniform", n=N)]})
    out = []
    for value in ("std", "entropy"):
        chart = partial(
            charts.divisor_bars,
            bars,
            points,
            value=value,
            title=t(f"which_d.{prefix}_{value}_title", **fmt),
            x_title=t("which_d.axis_divisor"),
            y_title=t(f"which_d.axis_{value}"),
            description=t(f"which_d.{prefix}_{value}_alt", **fmt),
            head_title=t("which_d.head"),
            tips={"theory": t("which_d.tip_theory"), "reference": t("common.tip_reference")},
            theory=value == "std",
            value_labels=value == "std",
            reference=uniform if value == "entropy" else None,
        )
        out.append((value, chart, points))
    return bars.set_index("divisor"), out


def divisor_charts(templates: list, prefix: str, sources: dict[str, list]) -> None:
    """Draw :func:`divisor_templates`' two charts side by side; ``sources`` maps
    ``std``/``entropy`` to the core functions shown under each chart."""
    for col, (value, chart, points) in zip(st.columns(2), templates, strict=True):
        with col:
            workshop.legacy_chart(
                chart, key=f"which_d_{prefix}_{value}", data=points, source=sources[value]
            )


def multi_head_parts(
    d_model: int, n_heads: int, divisor: str, w_init: str, seed: int
) -> tuple[pd.DataFrame, list, dict[str, str]]:
    """:func:`divisor_templates` of the multi-head experiment, and the axis labels."""
    heads, _ = data.which_d_heads(d_model, n_heads, seed)
    d_k = d_model // n_heads
    fmt = {"d_model": d_model, "n_heads": n_heads, "d_k": d_k, "n": N}
    labels = divisor_labels("div", DIVISORS_SELF, d_k=d_k, d_q=d_model, d_kv=d_model)
    bars, templates = divisor_templates(heads, w_init, divisor, labels, "mh", fmt)
    return bars, templates, labels


def cross_parts(d_q: int, d_kv: int, d_proj: int, w_init: str, seed: int) -> list:
    """:func:`divisor_templates` of the cross-attention experiment."""
    frame = data.which_d_cross(d_q, d_kv, d_proj, seed)
    labels = divisor_labels("cdiv", DIVISORS_CROSS, d_k=d_proj, d_q=d_q, d_kv=d_kv)
    fmt = {"d_q": d_q, "d_kv": d_kv, "d_k": d_proj, "n": N}
    return divisor_templates(frame, w_init, "d_k", labels, "cross", fmt)[1]


def heads_means(d_model: int, n_heads: int, seed: int) -> dict[str, dict[str, float]]:
    """:func:`fan_in_means` of the multi-head experiment."""
    return fan_in_means(data.which_d_heads(d_model, n_heads, seed)[0])


def predict_head_std(
    means: dict, d_model: int, n_heads: int, shown: int, w_init: str = "fan_in"
) -> bool:
    """Ask for the per-head logit std under ÷√d_model (fan-in) before the section-1 charts.

    The answer is the option nearest to the measurement in ``frame``
    (``means``: :func:`heads_means`). With one head d_k = d_model: nothing to ask. With
    another ``w_init`` the answer says the charts below use it.
    """
    d_k = d_model // n_heads
    if n_heads == 1:
        st.caption(t("which_d_workshop.one_head", d_model=d_model))
        return True
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


def myth_card(means: dict, d_model: int, n_heads: int) -> None:
    """“The d in √d is d_model”, against the live fan-in numbers of ÷√d_k and ÷√d_model
    (``means``: :func:`heads_means`)."""
    n = N
    d_k = d_model // n_heads
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


def init_cards(d_model: int, n_heads: int, seed: int, current: str) -> None:
    """One card per initialisation: Var(q_i), and the logit std and entropy under ÷√d_k
    (measured and theory) from :func:`ui.which_d.data.which_d_heads`; ◀ marks ``current``."""
    off = {"delta_color": "off", "delta_arrow": "off"}
    uniform = t("which_d.m_uniform", n=N, h=f"{math.log(N):.3f}")
    values = init_values(d_model, n_heads, seed)
    for col, (init, var_q, std, entropy, theory) in zip(
        st.columns(len(INITS)), values, strict=True
    ):
        with col.container(border=True):
            st.markdown(f"**{t(f'which_d.init_{init}')}**" + (" ◀" if init == current else ""))
            st.latex(rf"\mathrm{{Var}}(q_i) = d_\text{{model}}\,\sigma_{{w_q}}^2 = {var_q:.4g}")
            st.metric(
                t("which_d.m_init_std"), f"{std:.4g}", t("which_d.m_theory", theory=theory), **off
            )
            st.metric(t("which_d.m_init_entropy"), f"{entropy:.3f}", uniform, **off)


def init_values(d_model: int, n_heads: int, seed: int) -> list[tuple]:
    """Per initialisation (name, Var(q_i), mean logit std and entropy under ÷√d_k, theory
    std as text)."""
    frame, _ = data.which_d_heads(d_model, n_heads, seed)
    inits, under_d_k = frame["init"].to_numpy(), frame["divisor"].to_numpy() == "d_k"
    std, entropy = frame["std"].to_numpy(), frame["entropy"].to_numpy()
    theory = frame["theory_std"].to_numpy()
    out = []
    for init in INITS:
        rows = np.flatnonzero((inits == init) & under_d_k)
        var_q = d_model * init_stds(init, d_model, d_model)[0] ** 2
        out.append(
            (
                init,
                var_q,
                float(std[rows].mean()),
                float(entropy[rows].mean()),
                f"{theory[rows[0]]:.4g}",
            )
        )
    return out


# --- 1. multi-head self-attention --------------------------------------------------------
def multi_head_intro():
    """The section's heading; returns the place under it for the takeaway, which
    :func:`multi_head` fills once the question is answered."""
    st.header(t("which_d.mh_header"))
    return st.container()


def multi_head(d_model: int, n_heads: int, divisor: str, w_init: str, seed: int, top) -> None:
    """Predict the per-head logit std, then (its takeaway in ``top``, the place
    :func:`multi_head_intro` left under the heading) the formulas, the bar charts, the
    metrics and the misconception card."""
    shown = min(n_heads, data.WHICH_D_MAX_HEADS)  # as many as which_d_heads computes
    means = heads_means(d_model, n_heads, seed)
    if not predict_head_std(means, d_model, n_heads, shown, w_init):
        return
    with top:
        workshop.takeaway(t("which_d.mh_takeaway"))
    d_k = d_model // n_heads
    var = score_variance(d_k, d_model, d_model, *init_stds(w_init, d_model, d_model))
    st.latex(formulas.multi_head_latex(d_model, n_heads, var))
    bars, templates, labels = multi_head_parts(d_model, n_heads, divisor, w_init, seed)
    mh_src = [which_d_core.projected_multi_head_logits, heads_core.multi_head_logits, *STATS]
    divisor_charts(templates, "mh", {"std": mh_src, "entropy": STATS})
    multi_head_metrics(bars, divisor, labels[divisor], n_heads)
    st.caption(t("which_d.mh_caption", n=N, shown=shown, n_heads=n_heads))
    myth_card(means, d_model, n_heads)


# --- 2. cross-attention ------------------------------------------------------------------
def cross_intro() -> None:
    st.header(t("which_d.cross_header"))
    workshop.takeaway(t("which_d.cross_takeaway"))
    st.markdown(t("which_d.cross_lead"))


def cross(d_q: int, d_kv: int, d_proj: int, w_init: str, seed: int) -> None:
    """Cross-attention: the formulas and the bar charts under √d_k, √d_q and √d_kv."""
    var_x = score_variance(d_proj, d_q, d_kv, *init_stds(w_init, d_q, d_kv))
    st.latex(formulas.cross_latex(d_proj, d_q, d_kv, var_x))
    templates = cross_parts(d_q, d_kv, d_proj, w_init, seed)
    x_src = [which_d_core.projected_cross_attention_logits, heads_core.cross_attention_logits]
    divisor_charts(templates, "cross", {"std": x_src + STATS, "entropy": STATS})
    st.caption(t("which_d.cross_caption", n=N, heads=data.WHICH_D_CROSS_HEADS))


# --- 3. initialisation -------------------------------------------------------------------
def initialisation(d_model: int, n_heads: int, w_init: str, seed: int) -> None:
    """One card per initialisation."""
    st.header(t("which_d.init_header"))
    workshop.takeaway(t("which_d.init_takeaway"))
    st.markdown(t("which_d.init_lead", d_model=d_model, d_k=d_model // n_heads))
    init_cards(d_model, n_heads, seed, w_init)
    st.caption(t("which_d.init_caption", d_model=d_model))


# --- 4. where the scale goes -------------------------------------------------------------
def where_scale(d_model: int, n_heads: int, seed: int) -> None:
    """d_k^-¼ on q and k is 1/√d_k on q·k: the measured gap, and the temperature view."""
    _, extras = data.which_d_heads(d_model, n_heads, seed)
    d_k = d_model // n_heads
    st.header(t("which_d.where_header"))
    workshop.takeaway(t("which_d.where_takeaway"))
    st.latex(formulas.where_latex(d_k))
    c1, c2 = st.columns([2, 3])  # the metric's delta names both forms: room for it
    gap = f"{extras['quarter_gap']:.1e}"
    c1.metric(t("which_d.m_gap"), gap, t("which_d.m_gap_delta", d_k=d_k), **OFF)
    c2.markdown(
        t(
            "which_d.where_text",
            q4=f"{d_k**-0.25:.4g}",
            t_right=f"{math.sqrt(d_k):.4g}",
            t_wrong=f"{math.sqrt(d_model):.4g}",
        )
    )


# --- 5. QK normalisation -----------------------------------------------------------------
def qk_intro() -> None:
    st.header(t("which_d.qk_header"))
    workshop.takeaway(t("which_d.qk_takeaway"))
    st.markdown(t("which_d.qk_lead"))


def qk_norm(d_model: int, n_heads: int, x_scale: float, seed: int) -> None:
    """Logit std against the input scale, with and without QK LayerNorm, and metrics."""
    d_k = d_model // n_heads
    st.latex(formulas.qk_latex(x_scale, d_k))
    if d_k == 1:
        st.info(t("which_d.qk_one_dim"), icon=":material/info:")
    chart, frame, metrics, caption = qk_parts(d_model, n_heads, x_scale, seed)
    left, right = st.columns([3, 2])  # room for the metrics' labels
    with left:
        workshop.legacy_chart(
            chart,
            key="which_d_qk",
            data=frame,
            source=[which_d_core.input_scale_sweep, heads_core.layer_norm],
        )
    for label, value, delta in metrics:
        right.metric(label, value, delta, **OFF)
    st.caption(caption)


def qk_parts(
    d_model: int, n_heads: int, x_scale: float, seed: int
) -> tuple[partial, pd.DataFrame, list[tuple[str, str, str]], str]:
    """The deferred chart, its CSV frame, the metrics (label, value, delta) and the caption
    of the QK-normalisation section."""
    d_k = d_model // n_heads
    sweep = data.which_d_qk_sweep(d_model, n_heads, seed)
    # LayerNorm over one dimension maps everything to 0: no normalised line, no theory
    ln_std = f"{which_d_core.layernorm_logit_std(d_k):.4g}" if d_k >= 2 else ""
    suffix = "" if d_k >= 2 else "_one_dim"
    # at d_k = 1 LayerNorm maps every q and k to 0: no normalised line (a log axis has no 0)
    shown_ln = (False, True) if d_k >= 2 else (False,)
    if d_k == 1:
        sweep = sweep[~sweep.layernorm]
    lines, series = data.qk_lines(sweep)
    chart = partial(
        charts.scale_lines,
        lines,
        current=x_scale,
        title=t("which_d.qk_title", r=f"{math.sqrt(d_k):.3g}"),
        x_title=t("which_d.axis_scale"),
        y_title=t("which_d.axis_std_log"),
        description=t(f"which_d.qk_alt{suffix}", ln_std=ln_std),
        theory_title=t("which_d.theory"),
        tips={"series": t("which_d.tip_series")},
    )
    now = sweep[sweep.scale == x_scale].set_index("layernorm")
    metrics = [
        (
            t("which_d.m_qk", series=series[ln], s=f"{x_scale:g}"),
            f"{now.loc[ln, 'std']:.4g}",
            t("which_d.m_qk_delta", h=f"{now.loc[ln, 'entropy']:.3f}"),
        )
        for ln in shown_ln
    ]
    heads = min(n_heads, data.WHICH_D_QK_HEADS)  # as many as the sweep computes
    caption = t(
        f"which_d.qk_caption{suffix}", heads=heads, n_heads=n_heads, d_model=d_model, d_k=d_k,
        ln_std=ln_std,
    )  # fmt: skip
    return chart, lines.drop(columns="color"), metrics, caption
