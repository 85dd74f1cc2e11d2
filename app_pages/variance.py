"""Variance: why q·k grows with d_k, and how dividing by √d_k undoes it."""

import streamlit as st

from core.theory import DISTRIBUTIONS
from ui.common import controls, fragments, workshop
from ui.common.i18n import t
from ui.variance import sections

st.title(t("variance.title"))
st.markdown(t("variance.lead"))
workshop.terms()


def body() -> None:
    with workshop.controls_box():
        c1, c2 = workshop.control_columns([4, 6])
        with c1:
            d_k = controls.d_k_input()
        with c2:
            # the sampling settings: read by every section, changed rarely
            with st.expander(t("variance.sampling"), icon=":material/tune:"):
                n_samples = int(
                    controls.choice("n_samples", t("variance.n_samples"), widget="select_slider")
                )
                dist = controls.choice(
                    "dist",
                    t("variance.dist"),
                    labels=[t(f"variance.dist_name_{d}") for d in DISTRIBUTIONS],
                    captions=[t(f"variance.dist_{d}") for d in DISTRIBUTIONS],
                    help=t("variance.dist_help"),
                )
                sigma_q = controls.float_slider("sigma_q", t("variance.sigma_q"))
                sigma_k = controls.float_slider("sigma_k", t("variance.sigma_k"))
            controls.break_button()
    seed = st.session_state.get("seed", 0)
    step = workshop.steps([t(f"variance.step_{i}") for i in range(1, 5)])
    view = sections.View(d_k, n_samples, dist, sigma_q, sigma_k, seed)

    # the short path: predict the spread, then the moments and the histograms
    revealed = sections.spread(view) if workshop.shown(1, step) else True
    if workshop.shown(2, step):
        sections.histograms(view, revealed)
    more = workshop.deeper(step)
    if more is not None:
        with more:
            if workshop.shown(3, step):  # Var(q·k) against d_k, log–log
                sections.variance_against_d_k(view)
            if workshop.shown(4, step):  # the sum, dimension by dimension
                sections.dimension_by_dimension(view)
    st.caption(t("variance.source"))


fragments.page_body(body)
