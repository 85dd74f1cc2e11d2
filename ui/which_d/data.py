"""Data of the "Which d?" page: cached multi-head, cross-attention and QK-LayerNorm
experiments, and the chart frames built from them.

Conventions of the cached wrappers: :mod:`ui.common.data`. The functions under "The
charts' frames" make each chart's data from plain values (the deferred ``frame`` of
:func:`ui.common.workshop.chart`): the words a frame holds (axis and legend labels) come
in as arguments, never from the current language, since the chart's cache key holds
them. The numbers the page's texts quote come from cached functions that return plain
values (a hit copies no frame).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from ui.common.charts import COLORS
from ui.common.data import rng_for
from ui.common.pages import page
from ui.story.data import (
    WHICH_D_TOKENS,
    divisor_frame,
    divisor_frames,
    which_d_heads,
)

# (stream 50 is the multi-head experiment's: ui.story.data)
STREAM_WHICH_D_CROSS, STREAM_WHICH_D_QK = 51, 52


#: Heads of the cross-attention experiment and of the QK-LayerNorm sweep.
WHICH_D_CROSS_HEADS, WHICH_D_QK_HEADS = 4, 4


#: Input scales of the QK-LayerNorm sweep (also the options of its slider).
WHICH_D_X_SCALES = page("which_d").param("x_scale").options


@st.cache_data(max_entries=32, show_spinner=False)
def which_d_cross(d_q_in: int, d_kv_in: int, d_proj: int, seed: int) -> pd.DataFrame:
    """Cross-attention (64 queries of width d_q_in, 64 keys of width d_kv_in, 4 heads of
    width d_proj), every init × divisor (√d_k, √d_q, √d_kv) from one draw.

    Returns
    -------
    DataFrame, one row per (init, divisor, head): as :func:`which_d_heads`.
    """
    from core.which_d import (
        DIVISORS_CROSS,
        INITS,
        divisor_value,
        init_stds,
        projected_cross_attention_logits,
        score_variance,
    )

    rng = rng_for(seed, STREAM_WHICH_D_CROSS)
    x_q = rng.standard_normal((WHICH_D_TOKENS, d_q_in))
    x_kv = rng.standard_normal((WHICH_D_TOKENS, d_kv_in))
    raw, _ = projected_cross_attention_logits(
        x_q, x_kv, WHICH_D_CROSS_HEADS, d_proj, rng=rng, divisor=1.0
    )
    fan = d_q_in**-0.5 * d_kv_in**-0.5
    stds = {init: init_stds(init, d_q_in, d_kv_in) for init in INITS}
    factors = {init: sq * sk / fan for init, (sq, sk) in stds.items()}
    values = {
        name: divisor_value(name, d_k=d_proj, d_q=d_q_in, d_kv=d_kv_in) for name in DIVISORS_CROSS
    }
    sd = {init: math.sqrt(score_variance(d_proj, d_q_in, d_kv_in, *s)) for init, s in stds.items()}
    return divisor_frame(raw, values, factors, sd)


@st.cache_data(max_entries=32, show_spinner=False)
def which_d_qk_sweep(d_model: int, n_heads: int, seed: int) -> pd.DataFrame:
    """Logit std and entropy (÷√d_k, fan-in) against the input scale, with and without QK
    LayerNorm: one row per (scale, layernorm) for the scales of ``WHICH_D_X_SCALES``.

    Returns
    -------
    DataFrame: ``scale``, ``layernorm`` (bool), ``std``, ``entropy``, ``theory_std``
    (s² without LayerNorm; √(d_k/(d_k − 1)) with it, 0 at d_k = 1 where LayerNorm maps
    every vector to 0).
    """
    from core.which_d import input_scale_sweep, layernorm_logit_std

    d_k = d_model // n_heads
    rng = rng_for(seed, STREAM_WHICH_D_QK)
    x = rng.standard_normal((WHICH_D_TOKENS, d_model))
    scales = np.array([float(s) for s in WHICH_D_X_SCALES])
    sw = input_scale_sweep(
        x, min(n_heads, WHICH_D_QK_HEADS), d_k, scales, rng=rng, divisor=math.sqrt(d_k)
    )
    ln_std = layernorm_logit_std(d_k) if d_k >= 2 else 0.0
    return pd.concat(
        [
            pd.DataFrame(
                {
                    "scale": scales,
                    "layernorm": ln,
                    "std": sw[f"std_{tag}"],
                    "entropy": sw[f"entropy_{tag}"],
                    "theory_std": np.full_like(scales, ln_std) if ln else scales**2,
                }
            )
            for ln, tag in ((False, "raw"), (True, "ln"))
        ],
        ignore_index=True,
    )


@st.cache_data(max_entries=32, show_spinner=False)
def head_extras(d_model: int, n_heads: int, seed: int) -> dict[str, float]:
    """The ``extras`` of :func:`which_d_heads` alone: ``d_k``, ``heads_shown``,
    ``quarter_gap``."""
    return which_d_heads(d_model, n_heads, seed)[1]


@st.cache_data(max_entries=32, show_spinner=False)
def init_values(
    d_model: int, n_heads: int, seed: int
) -> list[tuple[str, float, float, float, str]]:
    """Per initialisation of :func:`which_d_heads`: (name, Var(q_i), mean logit std and
    entropy under ÷√d_k, theory std as text)."""
    from core.which_d import INITS, init_stds

    frame, _ = which_d_heads(d_model, n_heads, seed)
    inits, under_d_k = frame["init"].to_numpy(), frame["divisor"].to_numpy() == "d_k"
    std, entropy = frame["std"].to_numpy(), frame["entropy"].to_numpy()
    theory = frame["theory_std"].to_numpy()
    out = []
    for init in INITS:
        rows = np.flatnonzero((inits == init) & under_d_k)
        var_q = d_model * init_stds(init, d_model, d_model)[0] ** 2
        out.append(
            (
                init,
                var_q,
                float(std[rows].mean()),
                float(entropy[rows].mean()),
                f"{theory[rows[0]]:.4g}",
            )
        )
    return out


def qk_lines(sweep: pd.DataFrame, series: tuple[str, str]) -> pd.DataFrame:
    """The QK-LayerNorm sweep as :func:`ui.which_d.charts.scale_lines` data; ``series``:
    the legend labels without and with LayerNorm."""
    labels = dict(zip((False, True), series, strict=True))
    colors = {False: COLORS["unscaled"], True: COLORS["sqrt"]}
    return pd.DataFrame(
        {
            "scale": sweep["scale"],
            "series": sweep["layernorm"].map(labels),
            "color": sweep["layernorm"].map(colors),
            "value": sweep["std"],
            "theory": sweep["theory_std"],
        }
    )


@st.cache_data(max_entries=32, show_spinner=False)
def qk_point(d_model: int, n_heads: int, seed: int, scale: float) -> dict[bool, dict[str, float]]:
    """Logit std and entropy of :func:`which_d_qk_sweep` at one input ``scale``, without
    (False) and with (True) QK LayerNorm."""
    sweep = which_d_qk_sweep(d_model, n_heads, seed)
    now = sweep[sweep["scale"] == scale]
    return {
        bool(ln): {"std": float(std), "entropy": float(h)}
        for ln, std, h in zip(now["layernorm"], now["std"], now["entropy"], strict=True)
    }


def cross_divisors(
    d_q_in: int,
    d_kv_in: int,
    d_proj: int,
    seed: int,
    init: str,
    labels: tuple[tuple[str, str], ...],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The cross-attention charts' (points, bars): :func:`divisor_frames` of
    :func:`which_d_cross`, √d_k highlighted."""
    bars, points = divisor_frames(
        which_d_cross(d_q_in, d_kv_in, d_proj, seed), init, "d_k", dict(labels)
    )
    return points, bars


def qk_frame(d_model: int, n_heads: int, seed: int, series: tuple[str, str]) -> pd.DataFrame:
    """:func:`qk_lines` of :func:`which_d_qk_sweep`. At d_k = 1 LayerNorm maps every q and
    k to 0: the unnormalised line alone (a log axis has no 0)."""
    sweep = which_d_qk_sweep(d_model, n_heads, seed)
    if d_model // n_heads == 1:
        sweep = sweep[~sweep["layernorm"]]
    return qk_lines(sweep, series)
