"""Variance: why q·k grows with d_k, and how dividing by √d_k undoes it."""

import streamlit as st

from core.theory import DISTRIBUTIONS
from ui.common import controls, workshop
from ui.common.i18n import t
from ui.variance import sections

st.title(t("variance.title"))
st.markdown(t("variance.lead"))

with workshop.controls_box():
    c1, c2, c3 = workshop.control_columns([4, 3, 3])
    with c1:
        d_k = controls.d_k_input()
    with c2:
        n_samples = int(
            controls.choice("n_samples", t("variance.n_samples"), widget="select_slider")
        )
    with c3:
        dist = controls.choice(
            "dist",
            t("variance.dist"),
            labels=[t(f"variance.dist_name_{d}") for d in DISTRIBUTIONS],
            captions=[t(f"variance.dist_{d}") for d in DISTRIBUTIONS],
            help=t("variance.dist_help"),
        )
    c4, c5 = workshop.control_columns(2)
    with c4:
        sigma_q = controls.float_slider("sigma_q", t("variance.sigma_q"))
    with c5:
        sigma_k = controls.float_slider("sigma_k", t("variance.sigma_k"))
seed = st.session_state.get("seed", 0)
step = workshop.steps([t(f"variance.step_{i}") for i in range(1, 5)])
view = sections.View(d_k, n_samples, dist, sigma_q, sigma_k, seed)

# 1. predict the spread, then the measured moments and the derivation
revealed = sections.spread(view) if workshop.shown(1, step) else True
# 2. histograms, unscaled beside scaled (after the guess)
if workshop.shown(2, step):
    sections.histograms(view, revealed)
more = workshop.deeper(step)
if more is not None:
    with more:
        if workshop.shown(3, step):
            sections.variance_against_d_k(view)
        if workshop.shown(4, step):
            sections.dimension_by_dimension(view)
st.caption(t("variance.source"))
