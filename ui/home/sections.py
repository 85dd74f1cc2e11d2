"""Sections of the home page: where the formula sits, and a worked example run end to end."""

from __future__ import annotations

from functools import partial

import numpy as np
import streamlit as st

from core.attention import scaled_dot_product_attention
from ui.common import controls, fragments, picture, workshop
from ui.common.i18n import t
from ui.common.pages import STORY, page
from ui.home import charts, data
from ui.home.diagram import BOXES, WIDTH, layer_svg

#: The worked example's stages (``?example_step=``), in the order the formula runs.
STAGES = page("home").param("example_step").options
#: Per stage drawn as matrices: (column, chart name, diverging, number format) of each.
MATRICES = {
    "scores": (("score", "scores", True, ".1f"), ("logit", "logits", True, ".2f")),
    "weights": (
        ("weight_unscaled", "weights_unscaled", False, ".2f"),
        ("weight_scaled", "weights_scaled", False, ".2f"),
    ),
}


def orientation() -> None:
    """The picture of one Transformer layer beside what Q, K and V are."""
    st.header(t("home.where_title"))
    workshop.takeaway(t("home.where_takeaway"))
    labels = {key: t(f"home.diagram_{key}") for key, *_ in BOXES}
    for key in ("title", "description", "attention"):
        labels[key] = t(f"home.diagram_{key}")
    words = picture.beside_words(layer_svg(labels), key="home_layer", width=WIDTH)
    words.markdown(t("home.qkv_text"))


@fragments.panel
def worked_example(seed: int) -> None:
    """Three queries, four keys, one stage at a time (the example's own ``example_step``,
    read by this panel only: a fragment, so its controls rerun the panel, not the page):
    Q, K and V; the scores and the same ÷√d_k; the softmax row by row; the weighted sum
    of V. The example has its own d_k; the sentence under it reads the whole example."""
    st.header(t("home.example_title"))
    workshop.takeaway(t("home.example_takeaway"))
    d_k = int(
        controls.choice("example_d_k", t("home.example_d_k"), help=t("home.example_d_k_help"))
    )
    shown = controls.choice(
        "example_step",
        t("home.example_step"),
        labels=[t(f"home.example_step_{s}") for s in STAGES],
        widget="segmented_control",
    )
    st.markdown(t("home.example_setup", n_q=data.N_QUERIES, n_k=data.N_KEYS, d_k=d_k, d_v=data.D_V))
    summary = data.example_summary(d_k, seed)
    root = f"{np.sqrt(d_k):.3g}"
    if shown == "inputs":
        _vectors(d_k, seed)
    elif shown == "output":
        _outputs(d_k, seed)
    else:
        _matrices(shown, d_k, seed, summary["reach"], root)
    lo, hi = data.spread_band(d_k)
    st.markdown(
        t(
            "home.example_reading",
            d_k=d_k,
            spread=f"{summary['spread']:.2g}",
            root=root,
            n=data.N_QUERIES * data.N_KEYS,
            lo=f"{lo:.2g}",
            hi=f"{hi:.2g}",
            top_u=", ".join(f"{x:.2f}" for x in summary["top_unscaled"]),
            top_s=", ".join(f"{x:.2f}" for x in summary["top_scaled"]),
        )
    )


def _vectors(d_k: int, seed: int) -> None:
    """Stage 1: the first entries of Q, K and V, with the lengths of q and k."""
    shown = min(d_k, data.SHOWN_ENTRIES)
    for column, which in zip(st.columns(3), ("q", "k", "v"), strict=True):
        column.markdown(t(f"home.example_{which}_table", shown=shown, d_k=d_k))
        column.dataframe(data.vector_table(d_k, seed, which), width="stretch")


def _matrices(stage: str, d_k: int, seed: int, reach: float, root: str) -> None:
    """Stages 2 and 3: two matrices side by side, unscaled and scaled (the scores and the
    logits share a colour range, the two weight matrices [0, 1])."""
    diverging_domain = (-reach, reach)
    for column, (value, name, diverging, fmt) in zip(st.columns(2), MATRICES[stage], strict=True):
        options = {
            "value": value, "number_format": fmt, "diverging": diverging,
            "domain": diverging_domain if diverging else (0.0, 1.0),
        }  # fmt: skip
        with column:
            workshop.chart(
                f"home.example_{name}", charts.matrix_cells,
                partial(data.example_cells, d_k, seed), options=options,
                source=scaled_dot_product_attention if value == "weight_scaled" else None,
                root=root, d_k=d_k,
            )  # fmt: skip


def _outputs(d_k: int, seed: int) -> None:
    """Stage 4: each query's output, the weights of stage 3 times V, unscaled beside
    scaled (one small table each: two of them fit a phone, one of four columns does not)."""
    st.markdown(t("home.example_outputs", d_v=data.D_V))
    _, outputs = data.worked_example(d_k, seed)
    for column, kind in zip(st.columns(2), ("unscaled", "scaled"), strict=True):
        table = outputs.pivot(index="i", columns="c", values=f"out_{kind}")
        table.index = [f"q{data.SUBSCRIPTS[i]}" for i in table.index]
        table.columns = [str(c) for c in table.columns]
        column.markdown(t(f"home.example_out_{kind}"))
        column.dataframe(table.map(lambda x: f"{x:.2f}"), width="stretch")


def story() -> None:
    """The story's answer: one sentence per story page, each a link to its page."""
    st.header(t("home.story_title"))
    workshop.takeaway(t("home.story_takeaway"))
    for number, name in enumerate(STORY, start=1):
        title, text = t(f"home.step_{name}_title"), t(f"home.step_{name}_text")
        label = t("home.story_item", number=number, title=title, text=text)
        st.page_link(page(name).script, label=label, icon=":material/arrow_forward:")
    with st.expander(t("home.technical_label"), icon=":material/functions:"):
        st.markdown(t("home.summary_technical"))
