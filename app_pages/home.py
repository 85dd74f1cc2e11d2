"""Home: the formula, where it sits in a Transformer, a worked example, and the story."""

import streamlit as st

from ui.common import workshop
from ui.common.i18n import t
from ui.home import sections

st.title(t("home.title"))
st.markdown(t("home.lead"))
st.latex(
    r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V"
)
workshop.terms()
sections.orientation()
sections.worked_example(st.session_state.get("seed", 0))
sections.story()
st.caption(t("home.source"))
