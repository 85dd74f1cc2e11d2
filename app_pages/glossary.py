"""Glossary: every term the story uses, defined in a sentence or two."""

import streamlit as st

from ui.common.glossary import TERMS, definition
from ui.common.i18n import t

st.title(t("glossary.title"))
st.markdown(t("glossary.lead"))
for term in sorted(TERMS, key=lambda name: t(f"glossary.{name}.name").casefold()):
    st.markdown(definition(term))
st.caption(t("glossary.source"))
