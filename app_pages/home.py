"""Home: the formula, where it sits in a Transformer, a worked example, and the story."""

import streamlit as st

from ui.common import workshop
from ui.common.i18n import t
from ui.common.pages import STORY, page
from ui.home import sections

st.title(t("home.title"))
st.markdown(t("home.lead"))
st.latex(
    r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V"
)
sections.orientation()
sections.worked_example(st.session_state.get("seed", 0))

st.header(t("home.story_title"))
workshop.takeaway(t("home.story_takeaway"))
for number, name in enumerate(STORY, start=1):
    with st.container(border=True):
        st.markdown(f"**{number}. {t(f'home.step_{name}_title')}**")
        st.markdown(t(f"home.step_{name}_text"))
        spec = page(name)
        if spec is not None:
            st.page_link(spec.script, label=t("home.open_page"), icon=":material/arrow_forward:")
        else:
            st.caption(t("home.page_planned"))

st.caption(t("home.source"))
