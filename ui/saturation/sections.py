"""Sections of the saturation page, each drawn by one function.

The page script reads the controls and decides which sections are shown (presenter
steps); the two panels with controls of their own are in :mod:`ui.saturation.panels`.
Every main chart goes through :func:`ui.common.workshop.chart` (CSV of its frame,
source of the core functions behind it).
"""

from __future__ import annotations

import math
from functools import partial

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
from ui.common import controls, workshop
from ui.common.charts import alpha_color
from ui.common.data import sweep_row_limits, sweep_rows
from ui.common.i18n import t
from ui.saturation import charts, data, frames, panels
from ui.story import answers, cards


# --- 2. one query row: unscaled beside scaled, same q and K ------------------------------
def one_row(d_k: int, n_keys: int, alpha: float, seed: int) -> None:
    """One query's weights over its keys, unscaled beside scaled."""
    st.header(t("saturation.row_header"))
    workshop.takeaway(t("saturation.row_takeaway"))
    rs = data.one_row_stats(d_k, n_keys, alpha, seed)
    st.markdown(t("saturation.row_lead", d_k=d_k, n=n_keys, std=f"{math.sqrt(d_k):.3g}"))
    for col, scaled, a in zip(st.columns(2), (False, True), (0.0, alpha), strict=True):
        name = "scaled" if scaled else "unscaled"
        with col:
            workshop.chart(
                f"saturation.row_{name}", charts.weight_bars,
                partial(frames.row_side, d_k, n_keys, alpha, seed, scaled),
                options={"color": alpha_color(a)},
                source=None if scaled else [attention_logits, softmax, softmax_entropy],
                label=controls.alpha_label(a), n=n_keys,
                max=f"{rs[f'max_{name}']:.3f}", h=f"{rs[f'entropy_{name}']:.3f}",
            )  # fmt: skip
    st.caption(t("saturation.row_caption", ln_n=f"{math.log(n_keys):.3f}", n=n_keys))


# --- 4. saturation against d_k: α = 0, ½, 1 and yours (predict the far end first) --------
def saturation_against_d_k(d_k: int, n_keys: int, alpha: float, seed: int) -> None:
    """The question on the mean largest weight at the largest d_k, then :func:`sweeps`."""
    st.header(t("saturation.sweep_header"))
    top = st.container()  # the takeaway, once the question is answered
    if workshop.predict(**cards.saturation_mean_max(n_keys, seed)):
        with top:
            workshop.takeaway(t("saturation.sweep_takeaway"))
        sweeps(n_keys, alpha, seed, d_k)


# --- 5. precision: a softmax that does not subtract the row maximum ------------------------
def precision(d_k: int, n_keys: int, alpha: float, seed: int) -> None:
    """How often a naive softmax overflows in float16 and float32, with the thresholds."""
    st.header(t("saturation.precision_header"))
    workshop.takeaway(t("saturation.precision_takeaway"))
    half = data.half_crossing(n_keys, seed)
    half_text = f"{half:.0f}" if half else "—"
    thr16, thr32 = overflow_threshold(np.float16), overflow_threshold(np.float32)
    left, right = st.columns([5, 4])
    with left:
        labels = frames.series_labels((0.0, 0.5, alpha))
        workshop.chart(
            "saturation.overflow", charts.overflow_lines,
            partial(frames.overflow, n_keys, alpha, seed, labels),
            marker=d_k, source=[naive_overflow_sweep, row_overflows], n=n_keys, half=half_text,
        )  # fmt: skip
    with right:
        st.latex(rf"\text{{float16}}:\ e^{{x}} = \infty \iff x \ge {thr16:.4f}")
        st.latex(rf"\text{{float32}}:\ e^{{x}} = \infty \iff x \ge {thr32:.4f}")
        st.latex(r"z_j - \max_i z_i \le 0 \;\Rightarrow\; e^{z_j - \max_i z_i} \le e^0 = 1")
        chances = {
            "p_scaled": frames.fmt_chance(data.scaled_overflow_chance(d_k, n_keys)),
            "p_gauss": frames.fmt_chance(gaussian_overflow_chance(n_keys)),
        }
        st.markdown(t("saturation.ovf_text", half=half_text, n=n_keys, d_k=d_k, **chances))
        with st.expander(t("saturation.ovf_detail_label")):
            st.markdown(t("saturation.ovf_detail", **chances))
    st.caption(t("saturation.ovf_caption", rows=f"{data.overflow_rows(n_keys):,}"))
    panels.gaussian_limit(n_keys)


def sweeps(n_keys: int, alpha: float, seed: int, d_k: int) -> None:
    """Mean largest weight and mean entropy against d_k, for α = 0, ½, 1 and ``alpha``."""
    ln_n = math.log(n_keys)
    st.latex(  # two equations, two lines (side by side a phone showed the gap between them)
        r"\begin{gathered}"
        rf"\mathrm{{std}}(\text{{logit}}) = d_k^{{\,1/2-\alpha}} = {d_k}^{{\,{0.5 - alpha:.3g}}}"
        rf" = {d_k ** (0.5 - alpha):.4g},\\"
        rf" \ln n_{{\mathrm{{keys}}}} = \ln {n_keys} = {ln_n:.4f}"
        r"\end{gathered}"
    )
    for stat in ("max_weight", "entropy"):  # full width: 4 legend entries
        answers.saturation(stat, d_k, n_keys, alpha, seed).draw()
    st.caption(
        t(
            "saturation.sweep_caption",
            rows=f"{sweep_rows(n_keys):,}",
            n=n_keys,
            cap=sweep_row_limits()["cap"],
        )
    )
