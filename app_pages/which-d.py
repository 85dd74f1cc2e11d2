"""Which d? Per-head d_k in multi-head and cross-attention, initialisation, QK LayerNorm."""

import math

import streamlit as st

from core import heads as heads_core
from core import which_d as which_d_core
from core.which_d import DIVISORS_CROSS, DIVISORS_SELF, INITS, init_stds, score_variance
from ui import cache, charts, controls, which_d, workshop
from ui.i18n import t

N = cache.WHICH_D_TOKENS
OFF = {"delta_color": "off", "delta_arrow": "off"}
STATS = [which_d_core.head_statistics]

st.title(t("which_d.title"))
st.markdown(t("which_d.lead"))
seed = st.session_state.get("seed", 0)
step = workshop.steps([t(f"which_d_workshop.step_{i}") for i in range(1, 6)])

# --- 1. multi-head self-attention --------------------------------------------------------
if workshop.shown(1, step):
    st.header(t("which_d.mh_header"))
with workshop.controls_box():
    c1, c2, c3, c4 = workshop.control_columns([3, 2, 3, 3])
    with c1:
        d_model = which_d.d_model_input()
    with c2:
        n_heads = which_d.n_heads_select(d_model)
    d_k = d_model // n_heads
    with c3:
        divisor = controls.choice(
            "head_divisor",
            t("which_d.divisor"),
            DIVISORS_SELF,
            default="d_k",
            captions=[
                t(f"which_d.div_{d}_caption", d_k=d_k, d_model=d_model) for d in DIVISORS_SELF
            ],
        )
    with c4:
        w_init = controls.choice(
            "w_init",
            t("which_d.w_init"),
            INITS,
            default="fan_in",
            captions=[t(f"which_d.init_{i}") for i in INITS],
            help=t("which_d.w_init_help"),
        )
heads, extras = cache.which_d_heads(d_model, n_heads, seed)
shown = extras["heads_shown"]
if workshop.shown(1, step) and which_d.predict_head_std(heads, d_model, n_heads, shown, w_init):
    var = score_variance(d_k, d_model, d_model, *init_stds(w_init, d_model, d_model))
    st.latex(which_d.multi_head_latex(d_model, n_heads, var))
    fmt = {"d_model": d_model, "n_heads": n_heads, "d_k": d_k, "n": N}
    labels = which_d.divisor_labels("div", DIVISORS_SELF, d_k=d_k, d_q=d_model, d_kv=d_model)
    mh_src = [which_d_core.projected_multi_head_logits, heads_core.multi_head_logits, *STATS]
    mh = which_d.divisor_charts(
        heads, w_init, divisor, labels, "mh", fmt, {"std": mh_src, "entropy": STATS}
    )
    which_d.multi_head_metrics(mh, divisor, labels[divisor], n_heads)
    st.caption(t("which_d.mh_caption", n=N, shown=shown, n_heads=n_heads))
    which_d.myth_card(heads, d_model, n_heads)

# --- 2. cross-attention ------------------------------------------------------------------
if workshop.shown(2, step):
    st.header(t("which_d.cross_header"))
    st.markdown(t("which_d.cross_lead"))
with workshop.controls_box():
    d_q, d_kv, d_proj = which_d.cross_inputs()
if workshop.shown(2, step):
    cross = cache.which_d_cross(d_q, d_kv, d_proj, seed)
    var_x = score_variance(d_proj, d_q, d_kv, *init_stds(w_init, d_q, d_kv))
    st.latex(which_d.cross_latex(d_proj, d_q, d_kv, var_x))
    labels_x = which_d.divisor_labels("cdiv", DIVISORS_CROSS, d_k=d_proj, d_q=d_q, d_kv=d_kv)
    fmt_x = {"d_q": d_q, "d_kv": d_kv, "d_k": d_proj, "n": N}
    x_src = [which_d_core.projected_cross_attention_logits, heads_core.cross_attention_logits]
    which_d.divisor_charts(
        cross, w_init, "d_k", labels_x, "cross", fmt_x, {"std": x_src + STATS, "entropy": STATS}
    )
    st.caption(t("which_d.cross_caption", n=N, heads=cache.WHICH_D_CROSS_HEADS))

# --- 3. initialisation -------------------------------------------------------------------
if workshop.shown(3, step):
    st.header(t("which_d.init_header"))
    st.markdown(t("which_d.init_lead", d_model=d_model, d_k=d_k))
    which_d.init_cards(heads, d_model, w_init)
    st.caption(t("which_d.init_caption", d_model=d_model))

# --- 4. where the scale goes -------------------------------------------------------------
if workshop.shown(4, step):
    st.header(t("which_d.where_header"))
    st.latex(which_d.where_latex(d_k))
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
if workshop.shown(5, step):
    st.header(t("which_d.qk_header"))
    st.markdown(t("which_d.qk_lead"))
with workshop.controls_box():
    x_scale = float(
        controls.choice(
            "x_scale",
            t("which_d.x_scale"),
            cache.WHICH_D_X_SCALES,
            default="1",
            widget="select_slider",
            help=t("which_d.x_scale_help"),
        )
    )
if workshop.shown(5, step):
    sweep = cache.which_d_qk_sweep(d_model, n_heads, seed)
    st.latex(which_d.qk_latex(x_scale, d_k))
    # LayerNorm over one dimension maps everything to 0: no normalised line, no theory
    ln_std = f"{which_d_core.layernorm_logit_std(d_k):.4g}" if d_k >= 2 else ""
    suffix = "" if d_k >= 2 else "_one_dim"
    # at d_k = 1 LayerNorm maps every q and k to 0: no normalised line (a log axis has no 0)
    shown_ln = (False, True) if d_k >= 2 else (False,)
    if d_k == 1:
        st.info(t("which_d.qk_one_dim"), icon=":material/info:")
        sweep = sweep[~sweep.layernorm]
    left, right = st.columns([3, 2])  # room for the metrics' labels
    lines, series = which_d.qk_lines(sweep)
    with left:
        workshop.chart(
            charts.scale_lines(
                lines,
                current=x_scale,
                title=t("which_d.qk_title", r=f"{math.sqrt(d_k):.3g}"),
                x_title=t("which_d.axis_scale"),
                y_title=t("which_d.axis_std_log"),
                description=t(f"which_d.qk_alt{suffix}", ln_std=ln_std),
                theory_title=t("which_d.theory"),
            ),
            key="which_d_qk",
            data=lines.drop(columns="color"),
            source=[which_d_core.input_scale_sweep, heads_core.layer_norm],
        )
    now = sweep[sweep.scale == x_scale].set_index("layernorm")
    for ln in shown_ln:
        right.metric(
            t("which_d.m_qk", series=series[ln], s=f"{x_scale:g}"),
            f"{now.loc[ln, 'std']:.4g}",
            t("which_d.m_qk_delta", h=f"{now.loc[ln, 'entropy']:.3f}"),
            **OFF,
        )
    heads = min(n_heads, cache.WHICH_D_QK_HEADS)  # as many as the sweep computes
    st.caption(
        t(f"which_d.qk_caption{suffix}", heads=heads, n_heads=n_heads, d_model=d_model, d_k=d_k,
          ln_std=ln_std)
    )  # fmt: skip
st.caption(t("which_d.source"))
