"""Home: the formula, the story step by step, and where each step lives."""

import streamlit as st

from ui.common import workshop
from ui.common.i18n import t
from ui.common.pages import STORY, page

st.title(t("home.title"))
st.markdown(t("home.lead"))
st.latex(
    r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V"
)

left, right = st.columns(2)
left.info(t("home.summary_plain"), icon=":material/lightbulb:")
right.info(t("home.summary_technical"), icon=":material/functions:")

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
