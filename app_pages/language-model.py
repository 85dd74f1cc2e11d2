"""A real language model: four copies of a small character-level GPT trained on Shakespeare
with ÷√d_h, ÷1, ÷d_h and QK-LayerNorm; does the training lab's verdict survive?"""

import streamlit as st

from ui.common import workshop
from ui.common.i18n import t
from ui.language_model import data, meaning, prompt, sections

st.title(t("language_model.title"))
sweep = data.sweep()
st.markdown(
    t(
        "language_model.lead",
        runs=int(sweep.arrays["done"].sum()),
        n_rates=len(sweep.lrs),
        seeds=len(sweep.meta["seeds"]),
    )
)
workshop.terms()

with workshop.controls_box():
    c1, c2 = workshop.control_columns([2, 3])
    with c1:
        d_h = sections.d_h_select()
    with c2:
        rate = sections.rate_select()
seed = st.session_state.get("seed", 0)
step = workshop.steps([t(f"language_model_workshop.step_{i}") for i in range(1, 6)])

if workshop.shown(1, step):  # the model, the one line that differs, the logits at step 0
    sections.setup(d_h)
if workshop.shown(2, step):  # final loss against learning rate (predict the best rate first)
    sections.loss_against_rate(d_h)
if workshop.shown(3, step):  # over training at the learner's rate
    sections.over_training(d_h, rate)
if workshop.shown(4, step):  # the learner's own prompt (a panel with its own controls)
    prompt.own_prompt(d_h, seed)
if workshop.shown(5, step):  # what it means, against the training lab and the papers
    meaning.meaning()
st.caption(t("language_model.source"))
