"""The one-chart page (:mod:`benchmarks.minimal_page`) with ``ELEMENT_COUNT`` more elements of
one kind (``ELEMENT_KIND``), all in one fragment with the number input, as the app's
pages are: what :mod:`benchmarks.element_cost` times per change.

Kinds: ``markdown`` (the same each run), ``changing`` (a Markdown naming the input's
value), ``button``, ``bordered`` (a bordered container holding one Markdown), ``expander``
(closed, drawn only when opened, as the app's panels are) and ``metric`` (naming the
value). Runs standalone too: ``ELEMENT_KIND=button ELEMENT_COUNT=40 streamlit run
benchmarks/element_page.py``.
"""

import os

import altair as alt
import pandas as pd
import streamlit as st

KIND = os.environ.get("ELEMENT_KIND", "markdown")
COUNT = int(os.environ.get("ELEMENT_COUNT", "0"))

st.title("Element cost")


@st.fragment
def body() -> None:
    n = st.number_input("Points", min_value=2, max_value=500, value=50, key="n")
    for i in range(COUNT):
        if KIND == "markdown":
            st.markdown(f"Paragraph {i}, with a few **bold** words and a little more text.")
        elif KIND == "changing":
            st.markdown(f"Paragraph {i}: n = {n}, with a few **bold** words.")
        elif KIND == "button":
            st.button(f"Button {i}", key=f"button_{i}")
        elif KIND == "bordered":
            with st.container(border=True):
                st.markdown(f"Card {i}")
        elif KIND == "expander":
            st.expander(f"Panel {i}", key=f"panel_{i}", on_change="rerun")
        elif KIND == "metric":
            st.metric(f"Metric {i}", f"{n * i}")
        else:
            raise ValueError(f"unknown ELEMENT_KIND {KIND!r}")
    data = pd.DataFrame({"x": range(n), "y": [(i * 37) % 11 for i in range(n)]})
    st.altair_chart(
        alt.Chart(data).mark_line(point=True).encode(x=alt.X("x:Q"), y=alt.Y("y:Q")),
        width="stretch",
        key="minimal_chart",
    )


body()
