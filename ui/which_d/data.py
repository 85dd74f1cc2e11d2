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

STREAM_WHICH_D_HEADS, STREAM_WHICH_D_CROSS, STREAM_WHICH_D_QK = 50, 51, 52


#: Tokens per sequence (queries = keys) in the which-d experiments.
WHICH_D_TOKENS = 64


#: Heads computed at most (heads are exchangeable: the first 8 show the spread).
WHICH_D_MAX_HEADS = 8


#: Heads of the cross-attention experiment and of the QK-LayerNorm sweep.
WHICH_D_CROSS_HEADS, WHICH_D_QK_HEADS = 4, 4


#: Input scales of the QK-LayerNorm sweep (also the options of its slider).
WHICH_D_X_SCALES = page("which_d").param("x_scale").options


def _divisor_frame(
    raw: np.ndarray,
    divisor_values: dict[str, float],
    factors: dict[str, float],
    theory_sd: dict[str, float],
) -> pd.DataFrame:
    """Per-head statistics of ``raw`` (n_heads, n_q, n_k; divisor 1, fan-in) rescaled per
    init (``factors``) and divided per divisor: one row per (init, divisor, head), with
    ``theory_std`` = theory_sd[init] / divisor."""
    from core.which_d import head_statistics

    combos = [(i, d) for i in factors for d in divisor_values]
    mult = np.array([factors[i] / divisor_values[d] for i, d in combos])
    n_heads = raw.shape[0]
    live = mult != 0  # W_q = 0: every logit is exactly 0, one zero head stands for all
    stats = head_statistics((mult[live, None, None, None] * raw).reshape(-1, *raw.shape[1:]))
    zero = head_statistics(np.zeros((1, *raw.shape[1:])))
    columns = {}
    for key, values in stats.items():
        full = np.empty((len(combos), n_heads))
        full[live] = values.reshape(-1, n_heads)
        full[~live] = zero[key][0]
        columns[key] = full.ravel()
    return pd.DataFrame(
        {
            "init": np.repeat([i for i, _ in combos], n_heads),
            "divisor": np.repeat([d for _, d in combos], n_heads),
            "head": np.tile(np.arange(1, n_heads + 1), len(combos)),
            **columns,
            "theory_std": np.repeat([theory_sd[i] / divisor_values[d] for i, d in combos], n_heads),
        }
    )


@st.cache_data(max_entries=32, show_spinner=False)
def which_d_heads(d_model: int, n_heads: int, seed: int) -> tuple[pd.DataFrame, dict[str, float]]:
    """Multi-head self-attention on random tokens, every init × divisor from one draw.

    x (64, d_model) iid N(0, 1); fan-in projections drawn once for the first
    ``min(n_heads, 8)`` heads of width d_k = d_model / n_heads; std-1 and W_q = 0
    inits are the same draw rescaled (the scores are bilinear in W_q, W_k).

    Returns
    -------
    frame : DataFrame, one row per (init, divisor, head)
        ``init``, ``divisor`` (d_k, d_model, none), ``head``, ``std``, ``entropy``,
        ``max_weight``, ``theory_std`` (√Var(q·k) / divisor: the theory of docs/mathematics.md §7).
    extras : dict
        ``d_k``, ``heads_shown``, ``quarter_gap`` (max |difference| of d_k^-¼ on q and k
        against 1/√d_k on q·kᵀ, head 1, fan-in).
    """
    from core.which_d import (
        DIVISORS_SELF,
        INITS,
        divisor_value,
        init_stds,
        projected_multi_head_logits,
        projected_qk,
        quarter_scaling_gap,
        score_variance,
    )

    d_k = d_model // n_heads
    shown = min(n_heads, WHICH_D_MAX_HEADS)
    rng = rng_for(seed, STREAM_WHICH_D_HEADS)
    x = rng.standard_normal((WHICH_D_TOKENS, d_model))
    raw, _ = projected_multi_head_logits(x, shown, d_k, rng=rng, divisor=1.0)
    fan = d_model**-0.5
    stds = {init: init_stds(init, d_model, d_model) for init in INITS}
    factors = {init: sq * sk / fan**2 for init, (sq, sk) in stds.items()}
    values = {
        name: divisor_value(name, d_k=d_k, d_q=d_model, d_kv=d_model) for name in DIVISORS_SELF
    }
    sd = {init: math.sqrt(score_variance(d_k, d_model, d_model, *s)) for init, s in stds.items()}
    frame = _divisor_frame(raw, values, factors, sd)
    q, k = projected_qk(x, d_k, rng=rng)
    extras = {"d_k": d_k, "heads_shown": shown, "quarter_gap": quarter_scaling_gap(q, k)}
    return frame, extras


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
    return _divisor_frame(raw, values, factors, sd)


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


#: Colour of each divisor, by meaning: blue the right one (√d_k), the others distinct.
DIVISOR_COLORS = {
    "d_k": COLORS["sqrt"],
    "d_model": COLORS["sky"],
    "d_q": COLORS["sky"],
    "d_kv": COLORS["custom"],
    "none": COLORS["unscaled"],
}


def divisor_frames(
    frame: pd.DataFrame, init: str, selected: str, labels: dict[str, str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Bars (mean over heads, theory, highlight) and per-head points for one init.

    Parameters
    ----------
    frame : DataFrame
        From :func:`which_d_heads` or :func:`which_d_cross`.
    init : str
        The initialisation shown.
    selected : str
        The divisor to highlight.
    labels : dict
        Divisor name -> axis label, in display order.

    Returns
    -------
    bars : DataFrame with ``label``, ``color``, ``selected``, ``std``, ``entropy``,
        ``max_weight``, ``theory_std``.
    points : DataFrame, one row per head and divisor: ``label``, ``head``, ``std``,
        ``entropy``, and the bar and tick the head belongs to: ``mean_std``,
        ``mean_entropy`` (mean over heads) and ``theory_std``. The charts' CSV download.
    """
    sub = frame[frame["init"].to_numpy() == init]
    names = sub["divisor"].to_numpy()
    columns = ("std", "entropy", "max_weight", "theory_std")
    values = {c: sub[c].to_numpy() for c in columns}
    masks = [names == name for name in labels]
    means = {c: np.array([values[c][m].mean() for m in masks]) for c in columns}
    bars = pd.DataFrame(
        {
            "divisor": list(labels),
            "label": list(labels.values()),
            "color": [DIVISOR_COLORS[name] for name in labels],
            "selected": [name == selected for name in labels],
            **means,
        }
    )
    bar = np.zeros(len(names), dtype=int)  # the bar of each point
    for i, mask in enumerate(masks):
        bar[mask] = i
    points = pd.DataFrame(
        {
            "label": [labels[name] for name in names],
            "head": sub["head"].to_numpy(),
            "std": values["std"],
            "entropy": values["entropy"],
            "mean_std": means["std"][bar],
            "mean_entropy": means["entropy"][bar],
            "theory_std": means["theory_std"][bar],
        }
    )
    return bars, points


def divisor_means(
    frame: pd.DataFrame, init: str, columns: tuple[str, ...] = ("std", "entropy")
) -> dict[str, dict[str, float]]:
    """Mean over heads of each of ``columns`` per divisor, for the projections of
    ``init``: ``{divisor: {column: …}}``, divisors in the frame's order."""
    rows = frame["init"].to_numpy() == init
    names = frame["divisor"].to_numpy()[rows]
    stats = {c: frame[c].to_numpy()[rows] for c in columns}
    return {
        name: {c: float(v[names == name].mean()) for c, v in stats.items()}
        for name in dict.fromkeys(names)
    }


@st.cache_data(max_entries=32, show_spinner=False)
def head_means(d_model: int, n_heads: int, seed: int, init: str) -> dict[str, dict[str, float]]:
    """:func:`divisor_means` of :func:`which_d_heads` (``std``, ``entropy``,
    ``max_weight``): the bars of the multi-head charts as numbers."""
    frame, _ = which_d_heads(d_model, n_heads, seed)
    return divisor_means(frame, init, ("std", "entropy", "max_weight"))


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


def std_options(n_heads: int) -> tuple[list[float], list[str]]:
    """Candidate per-head logit stds under ÷√d_model, ascending: 1/n, 1/√n, 1, √n.

    Distinct for every n_heads ≥ 2 (neighbours differ by at least √2).
    """
    r = math.sqrt(n_heads)
    values = [1 / n_heads, 1 / r, 1.0, r]
    labels = [
        f"{values[0]:.3g} (1/{n_heads})",
        f"{values[1]:.3g} (1/√{n_heads})",
        "1",
        f"{values[3]:.3g} (√{n_heads})",
    ]
    return values, labels


def closest_option(values: list[float], measured: float) -> int:
    """Index of the positive value closest to ``measured`` on a log scale."""
    if not measured > 0:
        return 0
    return min(range(len(values)), key=lambda i: abs(math.log(values[i] / measured)))


# --- the charts' frames, from plain values ---------------------------------------------
def head_divisors(
    d_model: int,
    n_heads: int,
    seed: int,
    init: str,
    selected: str,
    labels: tuple[tuple[str, str], ...],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The multi-head charts' (points, bars): :func:`divisor_frames` of
    :func:`which_d_heads`; ``labels``: (divisor, axis label) pairs in display order."""
    frame, _ = which_d_heads(d_model, n_heads, seed)
    bars, points = divisor_frames(frame, init, selected, dict(labels))
    return points, bars


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
