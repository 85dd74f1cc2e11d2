"""Gradients: why a saturated softmax stops learning, over many rows and row by row."""

import streamlit as st

from ui.common import controls, fragments, workshop
from ui.common.charts import COLORS, alpha_color
from ui.common.i18n import t
from ui.gradients import sections

st.title(t("gradients.title"))
st.markdown(t("gradients.lead"))
workshop.terms()


def body() -> None:
    with workshop.controls_box():
        c1, c2, c3 = workshop.control_columns([4, 3, 4])
        with c1:
            d_k = controls.d_k_input()
        with c2:
            n_keys = controls.int_input(
                "n_keys", t("gradients.n_keys"), help=t("gradients.n_keys_help")
            )
        with c3:
            alpha = controls.alpha_input()
        controls.break_button()
    seed = st.session_state.get("seed", 0)
    step = workshop.steps([t(f"gradients_workshop.step_{i}") for i in range(1, 6)])
    labels = {"unscaled": controls.alpha_label(0.0), "scaled": controls.alpha_label(alpha)}
    colors = {"unscaled": COLORS["unscaled"], "scaled": alpha_color(alpha)}

    # 3. the short path: predict the share of dead rows, then the sweeps against d_k
    swept = workshop.shown(3, step) and sections.sweeps(d_k, n_keys, alpha, seed, labels)

    more = workshop.deeper(step)
    if more is not None:
        with more:
            # 1. the derivative of softmax and one sampled row, unscaled beside scaled
            if workshop.shown(1, step):
                sections.formula_and_heatmaps(d_k, n_keys, alpha, seed, labels)
            # 2. the gap explorer (a fragment with its own controls)
            if workshop.shown(2, step):
                sections.gap_explorer(n_keys)
            # 4. the myth "the mean gradient is smaller without scaling", with live numbers;
            #    it quotes the share of dead rows, so it waits for the answer to that question
            if workshop.shown(4, step) and swept:
                sections.myth(d_k, n_keys, seed)
            # 5. the gradient that reaches q: predict the medians, then the histograms
            if workshop.shown(5, step):
                sections.query_gradient(d_k, n_keys, alpha, seed, labels, colors)

    st.caption(t("gradients.source"))


fragments.page_body(body)
