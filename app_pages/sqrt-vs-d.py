"""√d_k vs d_k: why this divisor for independent q, k, and when 1/d_k is right instead."""

import streamlit as st

from ui.common import controls, fragments, workshop
from ui.common.i18n import t
from ui.sqrt_vs_d import sections

st.title(t("sqrt_vs_d.title"))
st.markdown(t("sqrt_vs_d.lead"))
workshop.terms()


def body() -> None:
    with workshop.controls_box():
        c1, c2 = workshop.control_columns(2)
        with c1:
            d_k = controls.d_k_input()
        with c2:
            alpha = controls.alpha_input()
        c3, c4 = workshop.control_columns(2)
        with c3:
            sections.rho_presets()
        with c4:
            controls.break_button()
        # a row of its own: its label lists four values, cut to "…" in a half-width column
        n_keys, rho, d_min, d_max = sections.chart_settings()
    seed = st.session_state.get("seed", 0)
    step = workshop.steps([t(f"sqrt_vs_d_workshop.step_{i}") for i in range(1, 7)])
    view = sections.view(d_k, d_min, d_max, n_keys, alpha, rho, seed)

    if workshop.shown(
        2, step
    ):  # the short path: what softmax does with each exponent (predict first)
        sections.softmax_response(view)
    more = workshop.deeper(step)
    if more is not None:
        with more:
            if workshop.shown(1, step):  # the model, at your d_k, and the logit scale
                sections.logit_scale(view)
            if workshop.shown(3, step):  # every exponent at once
                sections.heatmap(view)
            if workshop.shown(4, step):  # discrimination (predict first)
                sections.discrimination(view)
            if workshop.shown(5, step):  # gradient scale
                sections.gradient_scale(view)
            if workshop.shown(6, step):  # when each is right, and the misconception
                sections.when_each(view)
    st.caption(t("sqrt_vs_d.source"))


fragments.page_body(body)
