"""Which d? Per-head d_k in multi-head and cross-attention, initialisation, QK LayerNorm."""

import streamlit as st

from core.which_d import DIVISORS_SELF
from ui.common import controls, fragments, workshop
from ui.common.i18n import t
from ui.which_d import sections

st.title(t("which_d.title"))
st.markdown(t("which_d.lead"))
workshop.terms()


def body() -> None:
    with workshop.controls_box():
        c1, c2 = workshop.control_columns(2)
        with c1:
            d_model = sections.d_model_input()
        with c2:
            n_heads = sections.n_heads_select(d_model)
            d_k = d_model // n_heads
            divisor = controls.choice(
                "head_divisor",
                t("which_d.divisor"),
                labels=[
                    t(f"which_d.div_{d}_caption", d_k=d_k, d_model=d_model) for d in DIVISORS_SELF
                ],
            )
        controls.break_button()
    w_init = sections.current_init()  # chosen in section 3, under Go deeper
    seed = st.session_state.get("seed", 0)
    step = workshop.steps([t(f"which_d_workshop.step_{i}") for i in range(1, 6)])

    # --- 1. multi-head self-attention: the short path ------------------------------------------
    if workshop.shown(1, step):
        sections.multi_head(d_model, n_heads, divisor, w_init, seed, sections.multi_head_intro())

    more = workshop.deeper(step)
    if more is not None:
        with more:
            # --- 2. cross-attention, with its own widths (a panel) ----------------------------
            if workshop.shown(2, step):
                sections.cross_section(w_init, seed)
            # --- 3. initialisation ----------------------------------------------------------
            if workshop.shown(3, step):
                sections.initialisation(d_model, n_heads, seed)
            # --- 4. where the scale goes ----------------------------------------------------
            if workshop.shown(4, step):
                sections.where_scale(d_model, n_heads, seed)
            # --- 5. QK normalisation, with its input scale (a panel) --------------------------
            if workshop.shown(5, step):
                sections.qk_section(d_model, n_heads, seed)
    st.caption(t("which_d.source"))


fragments.page_body(body)
