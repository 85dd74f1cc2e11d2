"""A real language model: four copies of a small character-level GPT trained on Shakespeare
with ÷√d_h, ÷1, ÷d_h and QK-LayerNorm; does the training lab's verdict survive?"""

import streamlit as st

from ui.common import controls, fragments, workshop
from ui.common.i18n import t
from ui.language_model import meaning, prompt, sections

st.title(t("language_model.title"))
st.markdown(t("language_model.lead"))
workshop.terms()


def body() -> None:
    with workshop.controls_box():
        c1, c2 = workshop.control_columns([2, 3])
        with c1:
            d_h = sections.d_h_select()
        with c2:
            rate = sections.rate_select()
        controls.break_button()
    seed = st.session_state.get("seed", 0)
    step = workshop.steps([t(f"language_model_workshop.step_{i}") for i in range(1, 6)])

    if workshop.shown(2, step):  # the short path: final loss against rate (predict the best first)
        sections.loss_against_rate(d_h, rate)
    more = workshop.deeper(step)
    if more is not None:
        with more:
            if workshop.shown(1, step):  # the model, the one line that differs, logits at step 0
                sections.setup(d_h)
            if workshop.shown(3, step):  # over training at the learner's rate
                sections.over_training(d_h, rate)
            if workshop.shown(4, step):  # the learner's own prompt (a panel with its own controls)
                prompt.own_prompt(d_h, seed)
            if workshop.shown(5, step):  # what it means, against the training lab and the papers
                meaning.meaning()
            st.caption(t("language_model.source"))
    if more is None:
        st.caption(t("language_model.source_short"))


fragments.page_body(body)
