"""Saturation: what large logits do to softmax, and where the popular story exaggerates."""

import streamlit as st

from ui.common import controls, fragments, workshop
from ui.common.i18n import t
from ui.saturation import panels, sections

st.title(t("saturation.title"))
st.markdown(t("saturation.lead"))
workshop.terms()


def body() -> None:
    with workshop.controls_box():
        c1, c2, c3 = workshop.control_columns([3, 2, 5])
        with c1:
            d_k = controls.d_k_input()
        with c2:
            n_keys = controls.int_input(
                "n_keys", t("saturation.n_keys"), help=t("saturation.n_keys_help")
            )
        with c3:
            alpha = controls.alpha_input()
        controls.break_button()
    seed = st.session_state.get("seed", 0)
    step = workshop.steps([t(f"saturation_workshop.step_{i}") for i in range(1, 6)])

    # the short path: against d_k, α = 0, ½, 1 and yours (predict the far end first)
    if workshop.shown(4, step):
        sections.saturation_against_d_k(d_k, n_keys, alpha, seed)
    more = workshop.deeper(step)
    if more is not None:
        with more:
            if workshop.shown(2, step):  # one query row: unscaled beside scaled, same q and K
                sections.one_row(d_k, n_keys, alpha, seed)
            if workshop.shown(1, step):  # two scores (a panel with its own controls)
                panels.playground()
            if workshop.shown(3, step):  # the classic experiment (its own panel and prediction)
                panels.classic_experiment()
            if workshop.shown(5, step):  # precision: a softmax that skips the max subtraction
                sections.precision(d_k, n_keys, alpha, seed)
    st.caption(t("saturation.source"))


fragments.page_body(body)
