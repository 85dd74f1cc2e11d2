"""Baseline for the benchmarks: one number input and one small Altair chart, no
computation.

The input is a number input, like the main control of every page (d_k, d_model, head),
so the browser benchmark compares the same interaction: typed, then Enter. (A slider
moved with an arrow key redraws sooner, 40–50 ms against 90–100 ms for the number input
on this page, measured in Chromium on the 2-core development machine, so against a
slider the ratio would measure the widget, not the page.)

``rerun.py`` moves it in AppTest, ``browser_latency.py`` in Chromium. Runs standalone
too: ``streamlit run benchmarks/minimal_page.py``.
"""

import altair as alt
import pandas as pd
import streamlit as st

st.title("Minimal page")
n = st.number_input("Points", min_value=2, max_value=500, value=50, key="n")
data = pd.DataFrame({"x": range(n), "y": [(i * 37) % 11 for i in range(n)]})
st.altair_chart(
    alt.Chart(data)
    .mark_line(point=True)
    .encode(x=alt.X("x:Q"), y=alt.Y("y:Q"), tooltip=[alt.Tooltip("x:Q"), alt.Tooltip("y:Q")]),
    width="stretch",
    key="minimal_chart",
)
