"""Training lab: does a model without √d_k really stop learning? One attention layer
trained live on associative recall, α = 0, ½, 1 side by side, and an LR sweep."""

import streamlit as st

from core.training import OPTIMIZERS
from ui.common import controls, workshop
from ui.common.i18n import t
from ui.training import data, sections, sweep

st.title(t("training.title"))
st.markdown(t("training.lead"))
workshop.terms()
st.info(t("training.model", n=data.N_KEYS), icon=":material/info:")

with workshop.controls_box():
    m = sections.m_select()
    st.caption(sections.m_sentence(int(m)))
    c1, c2, c3 = workshop.control_columns([3, 2, 5])
    with c1:
        d_k = sections.d_k_input()
    with c2:
        optimizer = controls.choice(
            "optimizer", t("training.optimizer"),
            labels=[sections.opt_name(o) for o in OPTIMIZERS],
            captions=[t(f"training.opt_{o}_caption") for o in OPTIMIZERS],
        )  # fmt: skip
    with c3:
        lr = sections.lr_select(optimizer)
        steps = controls.choice(
            "steps", t("training.steps"), widget="select_slider", help=t("training.steps_help")
        )
    c4, c5 = workshop.control_columns(2)
    with c4:
        folded = controls.toggle("folded", t("training.folded"), t("training.folded_help"))
    with c5:
        qk_norm = controls.toggle("qk_norm", t("training.qk_norm"), t("training.qk_norm_help"))
seed = st.session_state.get("seed", 0)
workshop.takeaway(sections.headline(int(m)))
step = workshop.steps([t(f"training_workshop.step_{i}") for i in range(1, 5)])
view = sections.view(d_k, optimizer, lr, steps, folded, qk_norm, seed, m)

if workshop.shown(1, step):  # one run, side by side
    sections.one_run(view)
if workshop.shown(2, step):  # the probe rows' attention weights
    sections.inside_run(view)
numbers = None
if workshop.shown(3, step):  # LR sensitivity (predict first)
    numbers = sweep.lr_sweep(view)
if workshop.shown(4, step):  # the popular claim, measured
    sweep.myth(view, numbers)
st.caption(t("training.source"))
