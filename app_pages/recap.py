"""What to remember: each story page's answer in one sentence with its chart in small, then
a self-check asked from the story's prediction cards."""

import streamlit as st

from ui.common import workshop
from ui.common.i18n import t
from ui.recap import sections

st.title(t("recap.title"))
st.markdown(t("recap.lead"))
workshop.terms()
seed = st.session_state.get("seed", 0)
step = workshop.steps([t(f"recap_workshop.step_{i}") for i in range(1, 3)])

if workshop.shown(1, step):  # one sentence and one small chart per page
    sections.answers(seed)
if workshop.shown(2, step):  # the self-check (a tab per card)
    sections.self_check(seed)
