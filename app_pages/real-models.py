"""In real models: what the trained heads of all-MiniLM-L6-v2 do with √d_k, and what
well-known models put in front of softmax(q·k)."""

import streamlit as st

from ui.common import controls, fragments, workshop
from ui.common.i18n import t
from ui.real_models import data, sections

st.title(t("real_models.title"))
corpus = data.corpus()
st.markdown(sections.tc(corpus, "real_models.lead"))
workshop.terms()


def body() -> None:
    with workshop.controls_box():
        divisor = sections.divisor_select(corpus)
        controls.break_button()
    fig = data.figures(corpus)
    step = workshop.steps([t(f"real_models_workshop.step_{i}") for i in range(1, 5)])

    # --- 1. the short path: the trained heads at a glance (predict first) ---------------------
    if workshop.shown(1, step):
        sections.glance(corpus, fig, divisor)
    more = workshop.deeper(step)
    if more is not None:
        with more:
            # --- 2. one head, with a counterfactual divisor ----------------------------------
            if workshop.shown(2, step):
                sections.one_head_section(corpus, divisor)
            # --- 3. the counterfactual over every head and sentence --------------------------
            if workshop.shown(3, step):
                sections.counterfactual(corpus, fig)
            # --- 4. the field guide ----------------------------------------------------------
            if workshop.shown(4, step):
                sections.field_guide()
            st.caption(t("real_models.source"))
    if more is None:
        st.caption(t("real_models.source_short"))


fragments.page_body(body)
