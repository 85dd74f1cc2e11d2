"""Baseline for benchmarks/rerun.py: one small Altair chart, no computation.

Runs standalone too: ``streamlit run benchmarks/minimal_page.py``.
"""

import altair as alt
import pandas as pd
import streamlit as st

data = pd.DataFrame({"x": range(50), "y": [(i * 37) % 11 for i in range(50)]})

st.title("Minimal page")
st.altair_chart(
    alt.Chart(data).mark_line(point=True).encode(x="x:Q", y="y:Q", tooltip=["x", "y"]),
    width="stretch",
    key="minimal_chart",
)
