"""Sections of the home page: where the formula sits, and a worked example run end to end."""

from __future__ import annotations

from functools import partial

import numpy as np
import streamlit as st

from core.attention import scaled_dot_product_attention
from ui.common import controls, workshop
from ui.common.i18n import t
from ui.home import charts, data
from ui.home.diagram import BOXES, layer_svg


def orientation() -> None:
    """The picture of one Transformer layer beside what Q, K and V are."""
    st.header(t("home.where_title"))
    workshop.takeaway(t("home.where_takeaway"))
    picture, words = st.columns([2, 3], gap="large")
    labels = {key: t(f"home.diagram_{key}") for key, *_ in BOXES}
    for key in ("title", "description", "attention"):
        labels[key] = t(f"home.diagram_{key}")
    # st.html's sanitiser drops SVG; Markdown keeps it (every label in it is escaped)
    picture.markdown(layer_svg(labels), unsafe_allow_html=True)
    words.markdown(t("home.qkv_text"))
    words.info(t("home.summary_plain"), icon=":material/lightbulb:")
    words.info(t("home.summary_technical"), icon=":material/functions:")


def worked_example(seed: int) -> None:
    """Three queries, four keys: the scores, the same ÷√d_k, the softmax row by row and the
    weighted sum of V, for the example's own d_k."""
    st.header(t("home.example_title"))
    workshop.takeaway(t("home.example_takeaway"))
    d_k = int(
        controls.choice("example_d_k", t("home.example_d_k"), help=t("home.example_d_k_help"))
    )
    st.markdown(t("home.example_setup", n_q=data.N_QUERIES, n_k=data.N_KEYS, d_k=d_k, d_v=data.D_V))
    shown = min(d_k, data.SHOWN_ENTRIES)
    tables = st.columns(3)
    for column, which in zip(tables, ("q", "k", "v"), strict=True):
        column.markdown(t(f"home.example_{which}_table", shown=shown, d_k=d_k))
        column.dataframe(data.vector_table(d_k, seed, which), width="stretch")

    summary = data.example_summary(d_k, seed)
    reach = summary["reach"]
    score_charts = (
        ("score", "scores", (-reach, reach), True, ".1f"),
        ("logit", "logits", (-reach, reach), True, ".2f"),
        ("weight_unscaled", "weights_unscaled", (0.0, 1.0), False, ".2f"),
        ("weight_scaled", "weights_scaled", (0.0, 1.0), False, ".2f"),
    )
    root = f"{np.sqrt(d_k):.3g}"
    for row in (score_charts[:2], score_charts[2:]):
        left, right = st.columns(2)
        for column, (value, name, domain, diverging, fmt) in zip((left, right), row, strict=True):
            options = {
                "value": value, "domain": domain, "diverging": diverging, "number_format": fmt,
            }  # fmt: skip
            with column:
                workshop.chart(
                    f"home.example_{name}", charts.matrix_cells,
                    partial(data.example_cells, d_k, seed), options=options,
                    source=scaled_dot_product_attention if value == "weight_scaled" else None,
                    root=root, d_k=d_k,
                )  # fmt: skip

    st.markdown(t("home.example_outputs"))
    _, outputs = data.worked_example(d_k, seed)
    table = outputs.pivot(index="i", columns="c")
    table.index = [f"q{data.SUBSCRIPTS[i]}" for i in table.index]
    table.columns = [
        t(f"home.example_out_{kind.removeprefix('out_')}", c=c) for kind, c in table.columns
    ]
    st.dataframe(table.map(lambda x: f"{x:.2f}"), width="stretch")

    st.markdown(
        t(
            "home.example_reading",
            d_k=d_k,
            spread=f"{summary['spread']:.2g}",
            root=root,
            top_u=", ".join(f"{x:.2f}" for x in summary["top_unscaled"]),
            top_s=", ".join(f"{x:.2f}" for x in summary["top_scaled"]),
        )
    )
