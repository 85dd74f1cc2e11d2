"""Training lab: does a model without √d_k really stop learning? One attention layer
trained on associative recall, α = 0, ½, 1 side by side: the LR sweep first, then one
run in detail."""

import streamlit as st

from ui.common import controls, fragments, workshop
from ui.common.i18n import t
from ui.training import sections, sweep

st.title(t("training.title"))
st.markdown(t("training.lead"))
workshop.terms()


def body() -> None:
    with workshop.controls_box():
        c1, c2 = workshop.control_columns([1, 1])
        with c1:
            m = sections.m_select()
        with c2:
            d_k = sections.d_k_input()
        row = st.container(horizontal=True, gap="small")
        with row:
            controls.break_button()
        with row.popover(t("training.more_settings"), icon=":material/tune:"):
            optimizer, lr, steps, folded, qk_norm = sections.more_settings()
    seed = st.session_state.get("seed", 0)
    step = workshop.steps([t(f"training_workshop.step_{i}") for i in range(1, 6)])
    settings = sections.settings(d_k, optimizer, lr, steps, folded, qk_norm, seed, m)

    # 3. the short path: at how many rates does it learn without the scale (predict first)
    numbers = sweep.lr_sweep(settings) if workshop.shown(3, step) else None
    more = workshop.deeper(step)
    if more is not None:
        with more:
            view = None
            if workshop.shown(1, step):  # one run, side by side (trains unless cached or shipped)
                view = sections.view(settings)
                sections.one_run(view)
            if workshop.shown(2, step):  # the probe rows' attention weights
                sections.inside_run(view)
            if workshop.shown(5, step):  # does the best rate move with d_k?
                sweep.small_multiples(settings)
            if workshop.shown(4, step):  # the popular claim, measured
                sweep.myth(view, numbers)
            st.caption(t("training.source"))
    if more is None:
        st.caption(t("training.source_short"))


fragments.page_body(body)
