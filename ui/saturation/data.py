"""Cached data of the saturation page: one query row, the toy experiment, the overflow
sweep, the exact overflow chance (the sweep against d_k is :mod:`ui.common.data`'s) and
the shipped chance of the quoted printout (data/classic_printout.json).

Conventions (hashable inputs, small frames, one random stream per picture):
:mod:`ui.common.data`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from ui.common.data import rng_for

STREAM_SAT_ROW, STREAM_SAT_HEATMAP, STREAM_SAT_ROWMAX, STREAM_SAT_OVERFLOW = 20, 21, 22, 23


#: Rows × keys per overflow-sweep cell (n_rows = min(5_000, budget // n_keys)).
OVERFLOW_BUDGET = 25_000


#: d_k grid of the overflow chart: 2**(k/2) rounded, k = 0…24 (half octaves, 1…4096);
#: float16 exp runs in software, so every point costs.
OVERFLOW_D = tuple(sorted({round(2 ** (k / 2)) for k in range(25)}))


#: Replicates of the toy experiment: entries of the score tensors ≤ budget, 50…2000 of them.
ROWMAX_BUDGET = 1 << 20


ROWMAX_BINS = np.linspace(0.0, 1.0, 51)


#: The chance of the quoted printout, written by scripts/printout_chance.py.
PRINTOUT_PATH = Path(__file__).resolve().parents[2] / "data" / "classic_printout.json"


def overflow_rows(n_keys: int) -> int:
    """Rows per cell of the overflow sweep: 5,000, fewer for many keys."""
    return int(min(5_000, OVERFLOW_BUDGET // n_keys))


def rowmax_replicates(batch: int, seq_len: int) -> int:
    """Replicates of the toy experiment drawn for its row-max distribution."""
    return int(min(2000, max(50, ROWMAX_BUDGET // (batch * seq_len * seq_len))))


@st.cache_data(max_entries=32, show_spinner=False)
def one_row_sides(
    d_k: int, n_keys: int, alpha: float, seed: int
) -> tuple[dict[bool, pd.DataFrame], dict]:
    """:func:`one_row` split by ``scaled`` (False, True), without that column: the frame
    each of the two charts draws and offers as CSV; and the stats."""
    row, stats = one_row(d_k, n_keys, alpha, seed)
    return {s: row[row.scaled == s].drop(columns="scaled") for s in (False, True)}, stats


@st.cache_data(max_entries=32, show_spinner=False)
def one_row_stats(d_k: int, n_keys: int, alpha: float, seed: int) -> dict:
    """The stats of :func:`one_row_sides` alone (plain numbers: a hit copies no frame)."""
    return one_row_sides(d_k, n_keys, alpha, seed)[1]


@st.cache_data(max_entries=32, show_spinner=False)
def classic_heat_means(seq_len: int, d_k: int, seed: int) -> dict[bool, float]:
    """Mean row max of each heatmap of :func:`classic_heatmap` (False: unscaled)."""
    heat = classic_heatmap(seq_len, d_k, seed)
    return {s: float(heat[heat.scaled == s].row_max.mean()) for s in (False, True)}


def one_row(d_k: int, n_keys: int, alpha: float, seed: int) -> tuple[pd.DataFrame, dict]:
    """One query against ``n_keys`` keys (q, K ~ N(0, 1), explicit), unscaled and scaled.

    Returns
    -------
    frame : DataFrame, 2 × n_keys rows
        ``key`` (1-based), ``scaled`` (False: α = 0; True: the given α), ``score``
        (q·k), ``logit``, ``weight``.
    stats : dict
        ``max_unscaled``, ``entropy_unscaled``, ``max_scaled``, ``entropy_scaled``
        (entropy in nats), ``score_std`` (sample std of the scores).
    """
    from core.attention import attention_logits
    from core.softmax import softmax, softmax_entropy

    rng = rng_for(seed, STREAM_SAT_ROW)
    q = rng.standard_normal((1, d_k))  # (n_q = 1, d_k)
    k = rng.standard_normal((n_keys, d_k))  # (n_keys, d_k)
    scores = attention_logits(q, k, alpha=0.0)[0]  # (n_keys,)
    frames, stats = [], {"score_std": float(scores.std())}
    for scaled, a in ((False, 0.0), (True, alpha)):
        logits = scores * float(d_k) ** -a
        p = softmax(logits)
        name = "scaled" if scaled else "unscaled"
        stats[f"max_{name}"] = float(p.max())
        stats[f"entropy_{name}"] = float(softmax_entropy(logits))
        frames.append(
            pd.DataFrame(
                {
                    "key": np.arange(1, n_keys + 1),
                    "scaled": scaled,
                    "score": scores,
                    "logit": logits,
                    "weight": p,
                }
            )
        )
    return pd.concat(frames, ignore_index=True), stats


@st.cache_data(max_entries=32, show_spinner=False)
def classic_heatmap(seq_len: int, d_k: int, seed: int) -> pd.DataFrame:
    """softmax(Q Kᵀ) and softmax(Q Kᵀ/√d_k) of one batch element, Q, K ~ N(0, 1) (seq_len, d_k).

    Returns
    -------
    DataFrame, 2 · seq_len² rows: ``scaled`` (bool), ``i`` (query, 1-based), ``j``
    (key), ``score``, ``logit``, ``weight``, ``is_max`` (the row's largest weight),
    ``row_max`` (that weight, repeated along the row).
    """
    from core.attention import attention_logits
    from core.softmax import softmax

    rng = rng_for(seed, STREAM_SAT_HEATMAP)
    q = rng.standard_normal((seq_len, d_k))
    k = rng.standard_normal((seq_len, d_k))
    scores = attention_logits(q, k, alpha=0.0)  # (seq_len, seq_len)
    i, j = np.meshgrid(np.arange(1, seq_len + 1), np.arange(1, seq_len + 1), indexing="ij")
    frames = []
    for scaled, a in ((False, 0.0), (True, 0.5)):
        logits = scores * float(d_k) ** -a
        p = softmax(logits)
        is_max = j == (np.argmax(p, axis=1) + 1)[:, None]
        row_max = np.broadcast_to(p.max(axis=1)[:, None], p.shape)
        frames.append(
            pd.DataFrame(
                {
                    "scaled": scaled,
                    "i": i.ravel(),
                    "j": j.ravel(),
                    "score": scores.ravel(),
                    "logit": logits.ravel(),
                    "weight": p.ravel(),
                    "is_max": is_max.ravel(),
                    "row_max": row_max.ravel(),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


@st.cache_data(max_entries=32, show_spinner=False)
def classic_rowmax(
    batch: int, seq_len: int, d_k: int, seed: int
) -> tuple[pd.DataFrame, dict[bool, dict[str, float]]]:
    """Distribution of the row max of the toy experiment over many replicates.

    Returns
    -------
    hist : DataFrame, 100 rows
        ``scaled`` (bool), ``x0``, ``x1`` (bin edges on [0, 1], width 0.02), ``share``
        (fraction of all rows in the bin).
    summary : dict
        {False: unscaled, True: divided by √d_k} -> :func:`core.classic.rowmax_summary`.
    """
    from core.classic import classic_rowmax as rowmax
    from core.classic import rowmax_summary

    n_rep = rowmax_replicates(batch, seq_len)
    out = rowmax(
        batch, seq_len, d_k, n_rep, rng=rng_for(seed, STREAM_SAT_ROWMAX), alphas=(0.0, 0.5)
    )  # (2, n_rep, batch, seq_len)
    frames, summary = [], {}
    for scaled, values in zip((False, True), out, strict=True):
        counts, _ = np.histogram(values, bins=ROWMAX_BINS)
        frames.append(
            pd.DataFrame(
                {
                    "scaled": scaled,
                    "x0": ROWMAX_BINS[:-1],
                    "x1": ROWMAX_BINS[1:],
                    "share": counts / values.size,
                }
            )
        )
        summary[scaled] = rowmax_summary(values)
    return pd.concat(frames, ignore_index=True), summary


@st.cache_data(max_entries=32, show_spinner=False)
def classic_summary(batch: int, seq_len: int, d_k: int, seed: int) -> dict[bool, dict[str, float]]:
    """The summary of :func:`classic_rowmax` alone (plain numbers: a hit copies no frame)."""
    return classic_rowmax(batch, seq_len, d_k, seed)[1]


@st.cache_data(max_entries=32, show_spinner=False)
def overflow_sweep(n_keys: int, alphas: tuple[float, ...], seed: int) -> pd.DataFrame:
    """Share of rows whose naive softmax overflows, float16 and float32, over ``OVERFLOW_D``.

    Both dtypes and every α see the same rows (same stream, common random numbers).

    Returns
    -------
    DataFrame, one row per (dtype, alpha, d): ``dtype`` ("float16"/"float32"),
    ``alpha``, ``d``, ``rate``, ``se`` (√(f(1 − f)/n_rows)).
    """
    from core.experiments import naive_overflow_sweep

    n_rows = overflow_rows(n_keys)
    frames = []
    for dtype in ("float16", "float32"):
        rates = naive_overflow_sweep(
            OVERFLOW_D,
            n_keys,
            alphas,
            np.dtype(dtype),
            rng=rng_for(seed, STREAM_SAT_OVERFLOW),
            n_rows=n_rows,
        )  # (n_alpha, n_d)
        for a, rate in zip(alphas, rates, strict=True):
            frames.append(
                pd.DataFrame(
                    {
                        "dtype": dtype,
                        "alpha": float(a),
                        "d": OVERFLOW_D,
                        "rate": rate,
                        "se": np.sqrt(rate * (1 - rate) / n_rows),
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


@st.cache_data(max_entries=256, show_spinner=False)
def scaled_overflow_chance(d_k: int, n_keys: int) -> float:
    """:func:`core.softmax.scaled_overflow_chance` in float16 (a 40,000-step quadrature,
    ≈ 4 ms: cached per d_k and n_keys)."""
    from core.softmax import scaled_overflow_chance as chance

    return chance(d_k, n_keys)


@st.cache_data(max_entries=1, show_spinner=False)
def quoted_printout() -> dict[str, float]:
    """How often ``np.max(attn, axis=-1)[0]`` at (4, 10, 64), unscaled, starts with four
    values ≥ 0.9997, as the quoted output does (scripts/printout_chance.py).

    Returns
    -------
    dict: ``chance`` and ``se`` (binomial), ``n_printouts``, ``row_share`` (single rows
    ≥ 0.9997).
    """
    doc = json.loads(PRINTOUT_PATH.read_text(encoding="utf-8"))
    return {k: float(doc[k]) for k in ("chance", "se", "n_printouts", "row_share")}


def overflow_half(df: pd.DataFrame, alpha: float, dtype: str) -> float | None:
    """d_k at which the overflow share first reaches ½ (log-linear interpolation), or None."""
    sel = df[(df["alpha"] == alpha) & (df["dtype"] == dtype)].sort_values("d")
    d, rate = sel["d"].to_numpy(float), sel["rate"].to_numpy(float)
    above = np.flatnonzero(rate >= 0.5)
    if above.size == 0:
        return None
    i = int(above[0])
    if i == 0:
        return float(d[0])
    frac = (0.5 - rate[i - 1]) / (rate[i] - rate[i - 1])
    return float(2 ** (np.log2(d[i - 1]) + frac * (np.log2(d[i]) - np.log2(d[i - 1]))))


@st.cache_data(max_entries=32, show_spinner=False)
def half_crossing(n_keys: int, seed: int) -> float | None:
    """d_k at which half the unscaled rows overflow in float16 (:func:`overflow_half` of
    :func:`overflow_sweep`), or None if none does."""
    return overflow_half(overflow_sweep(n_keys, (0.0, 0.5), seed), 0.0, "float16")
