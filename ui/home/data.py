"""Data of the home page's worked example: three queries, four keys and their values.

Conventions of the cached wrappers: :mod:`ui.common.data`. :func:`example_cells` is the
charts' frame (the deferred ``frame`` of :func:`ui.common.workshop.chart`): plain
arguments only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.sampling import score_matrix_std
from ui.common.data import rng_for

STREAM_EXAMPLE, STREAM_SPREAD_BAND = 60, 61

#: Queries, keys and the width of each value vector: small enough to print every number.
N_QUERIES, N_KEYS, D_V = 3, 4, 2
#: Entries of each vector printed in the tables (the rest is summarised by its norm).
SHOWN_ENTRIES = 4
SUBSCRIPTS = "₀₁₂₃₄₅₆₇₈₉"


def example_vectors(d_k: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q (3, d_k), K (4, d_k) with iid N(0, 1) entries and V (4, 2), from the seed's stream."""
    rng = rng_for(seed, STREAM_EXAMPLE)
    # V first and Q, K after, each from its own child stream: a longer d_k keeps V fixed
    v_rng, q_rng, k_rng = rng.spawn(3)
    v = np.round(v_rng.standard_normal((N_KEYS, D_V)), 1) + 0.0  # short numbers; no −0.0
    return q_rng.standard_normal((N_QUERIES, d_k)), k_rng.standard_normal((N_KEYS, d_k)), v


@st.cache_data(max_entries=32, show_spinner=False)
def worked_example(d_k: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The example end to end, unscaled and scaled by 1/√d_k.

    Returns
    -------
    cells : DataFrame, one row per (query i, key j), 1-based: ``score`` = q_i·k_j,
        ``logit`` = score/√d_k, ``weight_unscaled`` = softmax(scores) and
        ``weight_scaled`` = softmax(logits) along the row.
    outputs : DataFrame, one row per (query i, component c): ``out_unscaled`` and
        ``out_scaled``, the rows of the two weight matrices times V.
    """
    from core.attention import attention_logits, scaled_dot_product_attention

    q, k, v = example_vectors(d_k, seed)
    scores = attention_logits(q, k, alpha=0.0)  # (3, 4)
    logits = attention_logits(q, k, alpha=0.5)
    out_u, w_u = scaled_dot_product_attention(q, k, v, alpha=0.0)  # (3, 2), (3, 4)
    out_s, w_s = scaled_dot_product_attention(q, k, v, alpha=0.5)
    i, j = np.meshgrid(np.arange(1, N_QUERIES + 1), np.arange(1, N_KEYS + 1), indexing="ij")
    cells = pd.DataFrame(
        {
            "i": i.ravel(),
            "j": j.ravel(),
            "score": scores.ravel(),
            "logit": logits.ravel(),
            "weight_unscaled": w_u.ravel(),
            "weight_scaled": w_s.ravel(),
        }
    )
    i, c = np.meshgrid(np.arange(1, N_QUERIES + 1), np.arange(1, D_V + 1), indexing="ij")
    outputs = pd.DataFrame(
        {"i": i.ravel(), "c": c.ravel(), "out_unscaled": out_u.ravel(), "out_scaled": out_s.ravel()}
    )
    return cells, outputs


#: Draws of the example's scores behind :func:`spread_band`.
BAND_DRAWS = 4_000


@st.cache_data(max_entries=8, show_spinner=False)
def spread_band(d_k: int) -> tuple[float, float]:
    """The 10th and 90th percentiles of the standard deviation of the example's twelve
    scores (:func:`core.sampling.score_matrix_std`, ``BAND_DRAWS`` draws of Q and K): how
    far one draw's value may lie from √d_k with so few scores. The same for every seed."""
    std = score_matrix_std(d_k, N_QUERIES, N_KEYS, BAND_DRAWS, rng=rng_for(0, STREAM_SPREAD_BAND))
    lo, hi = np.quantile(std, [0.1, 0.9])
    return float(lo), float(hi)


@st.cache_data(max_entries=32, show_spinner=False)
def example_summary(d_k: int, seed: int) -> dict[str, float | tuple[float, ...]]:
    """The numbers the example's texts and colour scales quote (plain values: a hit copies
    no frame).

    Returns
    -------
    dict
        ``reach``: the largest |score| (the scores' and logits' colour range);
        ``spread``: the standard deviation of the twelve scores (ddof = 0);
        ``top_unscaled``, ``top_scaled``: the largest weight of each query's row, (3,).
    """
    cells, _ = worked_example(d_k, seed)
    rows = cells.groupby("i")
    return {
        "reach": float(np.abs(cells["score"]).max()),
        "spread": float(cells["score"].std(ddof=0)),
        "top_unscaled": tuple(float(x) for x in rows["weight_unscaled"].max()),
        "top_scaled": tuple(float(x) for x in rows["weight_scaled"].max()),
    }


def example_cells(d_k: int, seed: int) -> pd.DataFrame:
    """The charts' frame: the example's cells (:func:`worked_example`), one row per
    (query i, key j) with its score, logit and both weights."""
    return worked_example(d_k, seed)[0]


@st.cache_data(max_entries=32, show_spinner=False)
def vector_table(d_k: int, seed: int, which: str) -> pd.DataFrame:
    """The first :data:`SHOWN_ENTRIES` entries of Q, K or V (``which``), two decimals, one
    row per vector; for Q and K a last column with the vector's norm ‖·‖."""
    q, k, v = example_vectors(d_k, seed)
    a = {"q": q, "k": k, "v": v}[which]
    shown = a[:, :SHOWN_ENTRIES]
    names = [f"{which}{SUBSCRIPTS[r + 1]}" for r in range(a.shape[0])]  # q₁, q₂, …
    columns = [str(c + 1) for c in range(shown.shape[1])]
    table = pd.DataFrame(shown, index=names, columns=columns)
    table = table.map(lambda x: f"{x:.1f}" if which == "v" else f"{x:.2f}")
    if a.shape[1] > SHOWN_ENTRIES:
        table["…"] = "…"
    if which != "v":
        table["‖·‖"] = [f"{x:.1f}" for x in np.linalg.norm(a, axis=1)]
    return table
