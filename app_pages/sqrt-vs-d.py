"""√d_k vs d_k: why this divisor for independent q, k, and when 1/d_k is right instead."""

import streamlit as st

from ui.common import controls, workshop
from ui.common.data import sweep_row_limits
from ui.common.i18n import t
from ui.sqrt_vs_d import sections

st.title(t("sqrt_vs_d.title"))
st.markdown(t("sqrt_vs_d.lead"))
st.info(t("sqrt_vs_d.model"), icon=":material/info:")

with workshop.controls_box():
    c1, c2, c3 = workshop.control_columns([4, 3, 3])
    with c1:
        d_k = controls.d_k_input()
    with c2:
        d_min = controls.choice("d_min", t("sqrt_vs_d.d_min"), widget="select_slider")
    with c3:
        d_max = controls.choice("d_max", t("sqrt_vs_d.d_max"), widget="select_slider")
    c4, c5, c6 = workshop.control_columns([2, 5, 4])
    with c4:
        n_keys = controls.int_input(
            "n_keys", t("sqrt_vs_d.n_keys"), help=t("sqrt_vs_d.n_keys_help", **sweep_row_limits())
        )
    with c5:
        alpha = controls.alpha_input()
    with c6:
        rho = controls.float_slider("rho", t("sqrt_vs_d.rho"), help=t("sqrt_vs_d.rho_help"))
        sections.rho_presets(rho)
seed = st.session_state.get("seed", 0)
step = workshop.steps([t(f"sqrt_vs_d_workshop.step_{i}") for i in range(1, 7)])
view = sections.view(d_k, d_min, d_max, n_keys, alpha, rho, seed)

if workshop.shown(1, step):  # at your d_k, and the logit scale
    sections.logit_scale(view)
if workshop.shown(2, step):  # what softmax does with them (predict first)
    sections.softmax_response(view)
if workshop.shown(3, step):  # every exponent at once
    sections.heatmap(view)
if workshop.shown(4, step):  # discrimination (predict first)
    sections.discrimination(view)
if workshop.shown(5, step):  # gradient scale
    sections.gradient_scale(view)
if workshop.shown(6, step):  # when each is right, and the misconception
    sections.when_each(view)
st.caption(t("sqrt_vs_d.source"))
