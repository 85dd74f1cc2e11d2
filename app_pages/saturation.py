"""Saturation: what large logits do to softmax, and where the popular story exaggerates."""

import math

import numpy as np
import streamlit as st

from core.attention import attention_logits
from core.experiments import naive_overflow_sweep
from core.softmax import (
    gaussian_overflow_chance,
    overflow_threshold,
    row_overflows,
    softmax,
    softmax_entropy,
)
from ui import cache, charts, controls, workshop
from ui import saturation_frames as frames
from ui import saturation_sections as sections
from ui.i18n import t

st.title(t("saturation.title"))
st.markdown(t("saturation.lead"))

with workshop.controls_box():
    c1, c2, c3 = workshop.control_columns([3, 2, 5])
    with c1:
        d_k = controls.d_k_input()
    with c2:
        n_keys = controls.int_input(
            "n_keys",
            t("saturation.n_keys"),
            min_value=2,
            max_value=512,
            default=10,
            help=t("saturation.n_keys_help"),
        )
    with c3:
        alpha = controls.alpha_input()
seed = st.session_state.get("seed", 0)
step = workshop.steps([t(f"saturation_workshop.step_{i}") for i in range(1, 6)])

# --- 1. two scores -----------------------------------------------------------------------
if workshop.shown(1, step):
    sections.playground()

# --- 2. one query row: unscaled beside scaled, same q and K ------------------------------
if workshop.shown(2, step):
    st.subheader(t("saturation.row_header"))
    row, rs = cache.one_row(d_k, n_keys, alpha, seed)
    st.markdown(t("saturation.row_lead", d_k=d_k, n=n_keys, std=f"{math.sqrt(d_k):.3g}"))
    for col, scaled, a in zip(st.columns(2), (False, True), (0.0, alpha), strict=True):
        name = "scaled" if scaled else "unscaled"
        stats = {"max": f"{rs[f'max_{name}']:.3f}", "h": f"{rs[f'entropy_{name}']:.3f}"}
        side = row[row.scaled == scaled].drop(columns="scaled")
        label = controls.alpha_label(a)
        with col:
            workshop.chart(
                charts.weight_bars(
                    side,
                    color=charts.alpha_color(a),
                    title=t("saturation.row_title", label=label, **stats),
                    x_title=t("saturation.axis_key_j"),
                    y_title=t("saturation.axis_weight"),
                    description=t("saturation.row_alt", label=label, n=n_keys, **stats),
                ),
                key=f"saturation_row_{name}",
                data=side,
                source=None if scaled else [attention_logits, softmax, softmax_entropy],
            )
    st.caption(t("saturation.row_caption", ln_n=f"{math.log(n_keys):.3f}", n=n_keys))

# --- 3. the classic experiment (its own panel and prediction) ------------------------------
if workshop.shown(3, step):
    sections.classic_experiment()

# --- 4. saturation against d_k: α = 0, ½, 1 and yours (predict the far end first) --------
if workshop.shown(4, step):
    st.subheader(t("saturation.sweep_header"))
    n_rows = cache.sat_sweep_rows(n_keys)
    fixed = cache.saturation_sweep(n_keys, controls.ALPHA_PRESETS, 0.0, seed, n_rows)
    d_top = int(fixed["d"].max())
    top = {a: frames.sweep_at(fixed, a, d_top, "max_weight_mean") for a in (0.0, 0.5)}
    if workshop.predict(
        "saturation_mean_max",
        t(
            "saturation_workshop.predict_mean_q",
            rows=f"{n_rows:,}",
            n=n_keys,
            d=d_top,
            std=f"{math.sqrt(d_top):g}",
        ),
        frames.weight_options(n_keys),
        answer=frames.bin_index(top[0.0], frames.weight_bins(n_keys)),
        explain=t(
            "saturation_workshop.predict_mean_explain",
            mean=f"{top[0.0]:.4f}",
            se=f"{frames.sweep_at(fixed, 0.0, d_top, 'max_weight_se'):.4f}",
            mean_s=f"{top[0.5]:.3f}",
        ),
        about=(n_keys, seed),
    ):
        sections.sweeps(n_keys, alpha, seed, d_k)

# --- 5. precision: a softmax that does not subtract the row maximum ------------------------
if workshop.shown(5, step):
    st.subheader(t("saturation.precision_header"))
    ovf = cache.overflow_sweep(n_keys, (0.0, 0.5), seed)
    mine = frames.is_preset(alpha, (0.0, 0.5))
    ovf_mine = None if mine else cache.overflow_sweep(n_keys, (alpha,), seed)
    half = frames.half_crossing(ovf, 0.0, "float16")
    half_text = f"{half:.0f}" if half else "—"
    thr16, thr32 = overflow_threshold(np.float16), overflow_threshold(np.float32)
    left, right = st.columns([5, 4])
    with left:
        ovf_frame = frames.overflow_frame(ovf, ovf_mine)
        workshop.chart(
            charts.overflow_lines(
                ovf_frame,
                current_d=d_k,
                title=t("saturation.ovf_title", n=n_keys),
                x_title=t("saturation.axis_d_k"),
                y_title=t("saturation.axis_overflow"),
                description=t("saturation.ovf_alt", n=n_keys, half=half_text),
            ),
            key="saturation_overflow",
            data=ovf_frame,
            source=[naive_overflow_sweep, row_overflows],
        )
    with right:
        st.latex(rf"\text{{float16}}:\ e^{{x}} = \infty \iff x \ge {thr16:.4f}")
        st.latex(rf"\text{{float32}}:\ e^{{x}} = \infty \iff x \ge {thr32:.4f}")
        st.latex(r"z_j - \max_i z_i \le 0 \;\Rightarrow\; e^{z_j - \max_i z_i} \le e^0 = 1")
        chances = {
            "p_scaled": frames.fmt_chance(cache.scaled_overflow_chance(d_k, n_keys)),
            "p_gauss": frames.fmt_chance(gaussian_overflow_chance(n_keys)),
        }
        st.markdown(t("saturation.ovf_text", half=half_text, n=n_keys, d_k=d_k, **chances))
    st.caption(t("saturation.ovf_caption", rows=f"{cache.overflow_rows(n_keys):,}"))
st.caption(t("saturation.source"))
