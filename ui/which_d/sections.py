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

import streamlit as st

from core import heads as heads_core
from core import which_d as which_d_core
from core.which_d import (
    DIVISORS_CROSS,
    DIVISORS_SELF,
    INITS,
    divisors,
    init_stds,
    score_variance,
)
from ui.common import controls, fragments, workshop
from ui.common.i18n import t
from ui.story import answers, cards
from ui.story import charts as story_charts
from ui.story import data as story_data
from ui.which_d import charts, data, formulas

#: Tokens per sequence in every experiment of the page.
N = story_data.WHICH_D_TOKENS
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


def current_init() -> str:
    """The initialisation of W_q and W_k as chosen in section 3 (:func:`w_init_input`),
    which sections 1 and 2, drawn above it, use too: its last value, or the link's while
    "Go deeper" is closed."""
    return st.session_state.get("w_init") or controls.link_value("w_init")


def w_init_input() -> str:
    """The initialisation of W_q and W_k, bound to ``?w_init=`` (section 3)."""
    return controls.choice(
        "w_init",
        t("which_d.w_init"),
        labels=[t(f"which_d.init_{i}") for i in INITS],
        help=t("which_d.w_init_help"),
    )


def x_scale_input() -> float:
    """The input scale s of the QK-normalisation section, bound to ``?x_scale=``."""
    return float(
        controls.choice(
            "x_scale", t("which_d.x_scale"), widget="select_slider", help=t("which_d.x_scale_help")
        )
    )


def multi_head_metrics(
    means: dict[str, dict[str, float]], divisor: str, label: str, n_heads: int
) -> None:
    """Logit std, entropy and largest weight under the chosen divisor, and the ratio of the
    ÷√d_k and ÷√d_model stds (= √n_heads); ``means``: :func:`ui.story.data.head_means`."""
    off = {"delta_color": "off", "delta_arrow": "off"}
    # one row that wraps where a value would not fit beside the others
    row = st.container(horizontal=True)
    row.metric(t("which_d.m_std", div=label), f"{means[divisor]['std']:.4g}")
    row.metric(t("which_d.m_entropy", div=label), f"{means[divisor]['entropy']:.3f}")
    row.metric(t("which_d.m_max", div=label), f"{means[divisor]['max_weight']:.3f}")
    wrong_std = means["d_model"]["std"]
    ratio = f"{means['d_k']['std'] / wrong_std:.4g}" if wrong_std > 0 else "—"  # W_q = 0
    r = f"{math.sqrt(n_heads):.4g}"
    row.metric(t("which_d.m_ratio"), ratio, t("which_d.m_ratio_delta", n=n_heads, r=r), **off)


def divisor_charts(
    prefix: str, frame: partial, sources: dict[str, list], w_init: str, **values: object
) -> None:
    """The logit-std and entropy bar charts of one experiment side by side
    (``which_d.<prefix>_std``, ``…_entropy``), both from ``frame``
    (:func:`ui.which_d.data.cross_divisors`) of projections initialised by ``w_init``;
    ``sources`` maps ``std``/``entropy`` to the core functions shown under each chart;
    ``values`` fill the charts' texts."""
    for col, value in zip(st.columns(2), answers.DIVISOR_CHARTS, strict=True):
        with col:
            workshop.chart(
                f"which_d.{prefix}_{value}", story_charts.divisor_bars, frame,
                options=answers.divisor_options(value, w_init),
                source=sources[value], **values,
            )  # fmt: skip


def predict_head_std(
    d_model: int, n_heads: int, seed: int, w_init: str = "fan_in", means: dict | None = None
) -> bool:
    """Ask for the per-head logit std under ÷√d_model (fan-in) before the section-1 charts
    (:func:`ui.story.cards.which_d_std`; ``means``: its fan-in head means, if already
    fetched). With one head d_k = d_model: nothing to ask."""
    card = cards.which_d_std(d_model, n_heads, seed, w_init, means=means)
    if card is None:
        st.caption(t("which_d_workshop.one_head", d_model=d_model))
        return True
    return workshop.predict(**card)


def myth_card(means: dict, d_model: int, n_heads: int) -> None:
    """“The d in √d is d_model”, against the live fan-in numbers of ÷√d_k and ÷√d_model
    (``means``: :func:`ui.story.data.head_means` of fan-in projections)."""
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


#: An initialisation card's width: its formula on one line, three cards to a row at 1400 px.
CARD_PX = 280


def init_cards(d_model: int, n_heads: int, seed: int, current: str) -> None:
    """One card per initialisation: Var(q_i), and the logit std and entropy under ÷√d_k
    (measured and theory) from :func:`ui.which_d.data.init_values`; ◀ marks ``current``."""
    off = {"delta_color": "off", "delta_arrow": "off"}
    uniform = t("which_d.m_uniform", n=N, h=f"{math.log(N):.3f}")
    values = data.init_values(d_model=d_model, n_heads=n_heads, seed=seed)
    # side by side where they fit, else one under another (three columns of 143 px each
    # at 800 px with the sidebar open broke every formula and label over lines)
    row = st.container(horizontal=True)
    for init, var_q, std, entropy, theory in values:
        with row.container(border=True, width=CARD_PX):
            # the name and the formula in one element: one message fewer per card
            st.markdown(
                f"**{t(f'which_d.init_{init}')}**"
                + (" ◀" if init == current else "")
                + "\n\n"
                + rf"$$\mathrm{{Var}}(q_i) = d_\text{{model}}\,\sigma_{{w_q}}^2 = {var_q:.4g}$$"
            )
            st.metric(
                t("which_d.m_init_std"), f"{std:.4g}", t("which_d.m_theory", theory=theory), **off
            )
            st.metric(t("which_d.m_init_entropy"), f"{entropy:.3f}", uniform, **off)


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
    shown = min(n_heads, story_data.WHICH_D_MAX_HEADS)  # as many as which_d_heads computes
    means = story_data.head_means(d_model=d_model, n_heads=n_heads, seed=seed, init="fan_in")
    if not predict_head_std(d_model, n_heads, seed, w_init, means):
        return
    with top:
        workshop.takeaway(t("which_d.mh_takeaway"))
    d_k = d_model // n_heads
    var = score_variance(d_k, d_model, d_model, *init_stds(w_init, d_model, d_model))
    st.latex(formulas.multi_head_latex(d_model, n_heads, var))
    labels = answers.divisor_labels("div", DIVISORS_SELF, d_k=d_k, d_q=d_model, d_kv=d_model)
    mh_src = [which_d_core.projected_multi_head_logits, heads_core.multi_head_logits, *STATS]
    for col, (value, source) in zip(
        st.columns(2), (("std", mh_src), ("entropy", STATS)), strict=True
    ):
        with col:
            answers.which_d_heads(value, d_model, n_heads, divisor, w_init, seed, source).draw()
    means_chosen = (
        means
        if w_init == "fan_in"
        else story_data.head_means(d_model=d_model, n_heads=n_heads, seed=seed, init=w_init)
    )
    multi_head_metrics(means_chosen, divisor, labels[divisor], n_heads)
    st.caption(t("which_d.mh_caption", n=N, shown=shown, n_heads=n_heads))
    myth_card(means, d_model, n_heads)


# --- 2. cross-attention ------------------------------------------------------------------
@fragments.panel
def cross_section(w_init: str, seed: int) -> None:
    """Section 2 with its own widths (``d_q_in``, ``d_kv_in``, ``d_proj``: read here only,
    so moving them reruns this panel, not the page)."""
    cross_intro()
    with workshop.controls_box():
        d_q, d_kv, d_proj = cross_inputs()
    cross(d_q, d_kv, d_proj, w_init, seed)


@fragments.panel
def qk_section(d_model: int, n_heads: int, seed: int) -> None:
    """Section 5 with its input scale (``x_scale``: read here only, so moving it reruns
    this panel, not the page)."""
    qk_intro()
    with workshop.controls_box():
        x_scale = x_scale_input()
    qk_norm(d_model, n_heads, x_scale, seed)


def cross_intro() -> None:
    st.header(t("which_d.cross_header"))
    workshop.takeaway(t("which_d.cross_takeaway"), t("which_d.cross_lead"))


def cross(d_q: int, d_kv: int, d_proj: int, w_init: str, seed: int) -> None:
    """Cross-attention: the formulas and the bar charts under √d_k, √d_q and √d_kv."""
    var_x = score_variance(d_proj, d_q, d_kv, *init_stds(w_init, d_q, d_kv))
    st.latex(formulas.cross_latex(d_proj, d_q, d_kv, var_x))
    labels = answers.divisor_labels("cdiv", DIVISORS_CROSS, d_k=d_proj, d_q=d_q, d_kv=d_kv)
    frame = partial(data.cross_divisors, d_q, d_kv, d_proj, seed, w_init, tuple(labels.items()))
    x_src = [which_d_core.projected_cross_attention_logits, heads_core.cross_attention_logits]
    divisor_charts(
        "cross", frame, {"std": x_src + STATS, "entropy": STATS}, w_init,
        d_q=d_q, d_kv=d_kv, d_k=d_proj, n=N,
    )  # fmt: skip
    st.caption(t("which_d.cross_caption", n=N, heads=data.WHICH_D_CROSS_HEADS))


# --- 3. initialisation -------------------------------------------------------------------
def initialisation(d_model: int, n_heads: int, seed: int) -> None:
    """The initialisation control, and one card per initialisation."""
    st.header(t("which_d.init_header"))
    workshop.takeaway(
        t("which_d.init_takeaway"),
        t("which_d.init_lead", d_model=d_model, d_k=d_model // n_heads),
    )
    with workshop.controls_box():
        w_init = w_init_input()
    init_cards(d_model, n_heads, seed, w_init)
    st.caption(t("which_d.init_caption", d_model=d_model))


# --- 4. where the scale goes -------------------------------------------------------------
def where_scale(d_model: int, n_heads: int, seed: int) -> None:
    """d_k^-¼ on q and k is 1/√d_k on q·k: the measured gap, and the temperature view."""
    extras = data.head_extras(d_model=d_model, n_heads=n_heads, seed=seed)
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
    workshop.takeaway(t("which_d.qk_takeaway"), t("which_d.qk_lead"))


def qk_norm(d_model: int, n_heads: int, x_scale: float, seed: int) -> None:
    """Logit std against the input scale, with and without QK LayerNorm, and metrics."""
    d_k = d_model // n_heads
    st.latex(formulas.qk_latex(x_scale, d_k))
    if d_k == 1:
        st.info(t("which_d.qk_one_dim"), icon=":material/info:")
    # LayerNorm over one dimension maps everything to 0: no normalised line, no theory
    ln_std = f"{which_d_core.layernorm_logit_std(d_k):.4g}" if d_k >= 2 else ""
    suffix = "" if d_k >= 2 else "_one_dim"
    series = (t("which_d.series_raw"), t("which_d.series_ln"))
    left, right = st.columns([3, 2])  # room for the metrics' labels
    with left:
        workshop.chart(
            "which_d.qk", charts.scale_lines, partial(data.qk_frame, d_model, n_heads, seed, series),
            options={"current": x_scale, "alt_entry": f"alt{suffix}"},
            source=[which_d_core.input_scale_sweep, heads_core.layer_norm],
            r=f"{math.sqrt(d_k):.3g}", ln_std=ln_std,
        )  # fmt: skip
    now = data.qk_point(d_model=d_model, n_heads=n_heads, seed=seed, scale=x_scale)
    for ln in (False, True) if d_k >= 2 else (False,):
        right.metric(
            t("which_d.m_qk", series=series[ln], s=f"{x_scale:g}"),
            f"{now[ln]['std']:.4g}",
            t("which_d.m_qk_delta", h=f"{now[ln]['entropy']:.3f}"),
            **OFF,
        )
    heads = min(n_heads, data.WHICH_D_QK_HEADS)  # as many as the sweep computes
    st.caption(
        t(
            f"which_d.qk_caption{suffix}", heads=heads, n_heads=n_heads, d_model=d_model,
            d_k=d_k, ln_std=ln_std,
        )
        + "\n\n"
        + t("which_d.qk_source")
    )  # fmt: skip
