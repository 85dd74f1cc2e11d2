"""Saturation: what large logits do to softmax, and where the popular story exaggerates."""

import math

import numpy as np
import streamlit as st

from core.softmax import overflow_threshold
from ui import cache, charts, controls
from ui import saturation_frames as frames
from ui import saturation_sections as sections
from ui.i18n import t

st.title(t("saturation.title"))
st.markdown(t("saturation.lead"))

with st.container(border=True):
    c1, c2, c3 = st.columns([3, 2, 5])
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


sections.playground()

# --- one query row: unscaled beside scaled, same q and K ------------------------------
st.subheader(t("saturation.row_header"))
row, rs = cache.one_row(d_k, n_keys, alpha, seed)
st.markdown(t("saturation.row_lead", d_k=d_k, n=n_keys, std=f"{math.sqrt(d_k):.3g}"))
for col, scaled, a in zip(st.columns(2), (False, True), (0.0, alpha), strict=True):
    name = "scaled" if scaled else "unscaled"
    stats = {"max": f"{rs[f'max_{name}']:.3f}", "h": f"{rs[f'entropy_{name}']:.3f}"}
    col.altair_chart(
        charts.weight_bars(
            row[row.scaled == scaled].drop(columns="scaled"),
            color=charts.alpha_color(a),
            title=t("saturation.row_title", label=controls.alpha_label(a), **stats),
            x_title=t("saturation.axis_key_j"),
            y_title=t("saturation.axis_weight"),
            description=t("saturation.row_alt", label=controls.alpha_label(a), n=n_keys, **stats),
        ),
        width="stretch",
        key=f"saturation_row_{name}",
    )
st.caption(t("saturation.row_caption", ln_n=f"{math.log(n_keys):.3f}", n=n_keys))


sections.classic_experiment()

# --- saturation against d_k: α = 0, ½, 1 and yours -------------------------------------
st.subheader(t("saturation.sweep_header"))
ln_n = math.log(n_keys)
st.latex(
    rf"\mathrm{{std}}(\text{{logit}}) = d_k^{{\,1/2-\alpha}} = {d_k}^{{\,{0.5 - alpha:.3g}}}"
    rf" = {d_k ** (0.5 - alpha):.4g}, \qquad \ln n_{{\mathrm{{keys}}}} = \ln {n_keys} = {ln_n:.4f}"
)
labels = frames.series_labels((*controls.ALPHA_PRESETS, alpha))
refs = {
    "max_weight": (1 / n_keys, t("saturation.ref_uniform_max", n=n_keys)),
    "entropy": (ln_n, t("saturation.ref_ln_n", n=n_keys)),
}
for stat, ref in refs.items():  # full width: four legend entries need the room
    st.altair_chart(
        sections.sweep_chart(
            stat,
            n_keys,
            alpha,
            seed,
            d_k,
            labels=labels,
            reference=(ref,),
            title=t(f"saturation.sweep_{stat}_title", n=n_keys),
            x_title=t("saturation.axis_d_k"),
            y_title=t(f"saturation.axis_{stat}"),
            description=t(f"saturation.sweep_{stat}_alt", n=n_keys),
        ),
        width="stretch",
        key=f"saturation_sweep_{stat}",
    )
st.caption(t("saturation.sweep_caption", rows=f"{cache.sat_sweep_rows(n_keys):,}", n=n_keys))

# --- precision: a softmax that does not subtract the row maximum ------------------------
st.subheader(t("saturation.precision_header"))
ovf = cache.overflow_sweep(n_keys, (0.0, 0.5), seed)
ovf_mine = (
    None if frames.is_preset(alpha, (0.0, 0.5)) else cache.overflow_sweep(n_keys, (alpha,), seed)
)
half = frames.half_crossing(ovf, 0.0, "float16")
thr16, thr32 = overflow_threshold(np.float16), overflow_threshold(np.float32)
left, right = st.columns([5, 4])
left.altair_chart(
    charts.overflow_lines(
        frames.overflow_frame(ovf, ovf_mine),
        current_d=d_k,
        title=t("saturation.ovf_title", n=n_keys),
        x_title=t("saturation.axis_d_k"),
        y_title=t("saturation.axis_overflow"),
        description=t("saturation.ovf_alt", n=n_keys, half=f"{half:.0f}" if half else "—"),
    ),
    width="stretch",
    key="saturation_overflow",
)
with right:
    st.latex(rf"\text{{float16}}:\ e^{{x}} = \infty \iff x \ge {thr16:.4f}")
    st.latex(rf"\text{{float32}}:\ e^{{x}} = \infty \iff x \ge {thr32:.4f}")
    st.latex(r"z_j - \max_i z_i \le 0 \;\Rightarrow\; e^{z_j - \max_i z_i} \le e^0 = 1")
    st.markdown(t("saturation.ovf_text", half=f"{half:.0f}" if half else "—", n=n_keys))
st.caption(t("saturation.ovf_caption", rows=f"{cache.overflow_rows(n_keys):,}"))
st.caption(t("saturation.source"))
