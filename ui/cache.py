"""``st.cache_data`` wrappers around the core experiments.

Every wrapper takes only hashable primitives (the cache key is the whole input) and
returns small, chart-ready numeric frames — never raw samples — so that a bounded
``max_entries`` keeps memory small on a 690 MB host. Labels are added by the page,
so one cached result serves both languages.

Each chart draws from its own stream, ``np.random.default_rng([seed, stream])``:
moving one chart's control never changes another chart's random picture.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from core import variance as var_core
from core.sampling import dot_products, sample_qk

SWEEP_D = 2 ** np.arange(13)  # d_k = 1, 2, 4, …, 4096
SWEEP_SAMPLES = 20_000
N_PATHS = 20
MAX_TERMS_SHOWN = 256

# one stream per random picture
STREAM_HISTOGRAM, STREAM_SWEEP, STREAM_PATHS, STREAM_TERMS = 1, 2, 3, 4


def rng_for(seed: int, stream: int) -> np.random.Generator:
    """The generator of one random picture: independent streams from one seed."""
    return np.random.default_rng([int(seed), int(stream)])


@st.cache_data(max_entries=64, show_spinner=False)
def score_histograms(
    d_k: int, n_samples: int, dist: str, sigma_q: float, sigma_k: float, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, float]]:
    """Binned q·k and q·k/√d_k with exact and Gaussian laws, and the sample moments.

    Returns
    -------
    raw, scaled : DataFrame (≤ 61 rows each)
        Columns x0, x1, x, density, exact, gauss.
    moments : dict
        :func:`core.variance.sample_moments` of the unscaled samples.
    """
    s = dot_products(
        d_k,
        n_samples,
        rng=rng_for(seed, STREAM_HISTOGRAM),
        dist=dist,
        sigma_q=sigma_q,
        sigma_k=sigma_k,
    )
    edges = var_core.histogram_edges(d_k, dist, sigma_q, sigma_k)
    density = var_core.histogram_density(s, edges)
    exact = var_core.expected_density(edges, d_k, dist, sigma_q, sigma_k)
    sd = math.sqrt(d_k) * sigma_q * sigma_k
    centre = 0.5 * (edges[1:] + edges[:-1])
    gauss = np.exp(-0.5 * (centre / sd) ** 2) / (sd * math.sqrt(2 * math.pi))
    raw = pd.DataFrame(
        {
            "x0": edges[:-1],
            "x1": edges[1:],
            "x": centre,
            "density": density,
            "exact": exact,
            "gauss": gauss,
        }
    )
    root = math.sqrt(d_k)
    # dividing s by √d_k divides every x by √d_k and multiplies every density by √d_k
    scaled = raw.assign(
        x0=raw.x0 / root,
        x1=raw.x1 / root,
        x=raw.x / root,
        density=raw.density * root,
        exact=raw.exact * root,
        gauss=raw.gauss * root,
    )
    return raw, scaled, var_core.sample_moments(s)


@st.cache_data(max_entries=8, show_spinner=False)
def variance_sweep(dist: str, seed: int) -> pd.DataFrame:
    """Var(q·k) at unit σ over d_k = 1…4096, unscaled and divided by √d_k.

    Returns
    -------
    DataFrame, 26 rows: d, scaled (bool), var, lo, hi, theory — for σ_q = σ_k = 1;
    multiply var, lo, hi, theory by σ_q²σ_k² for other scales.
    """
    sw = var_core.variance_sweep(SWEEP_D, SWEEP_SAMPLES, rng=rng_for(seed, STREAM_SWEEP), dist=dist)
    raw = pd.DataFrame({k: sw[k] for k in ("d", "var", "lo", "hi", "theory")}).assign(scaled=False)
    scaled = raw.assign(
        var=raw["var"] / raw.d, lo=raw.lo / raw.d, hi=raw.hi / raw.d, theory=1.0, scaled=True
    )
    return pd.concat([raw, scaled], ignore_index=True)


@st.cache_data(max_entries=32, show_spinner=False)
def running_sums(
    d_k: int, dist: str, sigma_q: float, sigma_k: float, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Partial sums of q_i k_i for ``N_PATHS`` pairs (≤ 200 points each) and envelopes.

    Returns
    -------
    paths : DataFrame with i, path, sum.
    envelope : DataFrame with i, k (1 or 2 standard deviations), lo, hi = ±k √i σ_qσ_k.
    """
    i, sums = var_core.running_sums(
        d_k, N_PATHS, rng=rng_for(seed, STREAM_PATHS), dist=dist, sigma_q=sigma_q, sigma_k=sigma_k
    )
    paths = pd.DataFrame(
        {
            "i": np.tile(i, N_PATHS),
            "path": np.repeat(np.arange(1, N_PATHS + 1), i.size),
            "sum": sums.ravel(),
        }
    )
    grid = np.unique(np.concatenate([[0], i]))
    sd = np.sqrt(grid) * sigma_q * sigma_k
    envelope = pd.concat(
        [pd.DataFrame({"i": grid, "k": k, "lo": -k * sd, "hi": k * sd}) for k in (1, 2)],
        ignore_index=True,
    )
    return paths, envelope


@st.cache_data(max_entries=32, show_spinner=False)
def pair_terms(
    d_k: int, dist: str, sigma_q: float, sigma_k: float, seed: int
) -> tuple[pd.DataFrame, float]:
    """The products q_i k_i of one sampled pair (first ``MAX_TERMS_SHOWN``) and their full sum."""
    q, k = sample_qk(
        1, d_k, rng=rng_for(seed, STREAM_TERMS), dist=dist, sigma_q=sigma_q, sigma_k=sigma_k
    )
    terms = q[0] * k[0]
    shown = terms[:MAX_TERMS_SHOWN]
    df = pd.DataFrame({"i": np.arange(1, shown.size + 1), "term": shown, "positive": shown >= 0})
    return df, float(terms.sum())


# --- saturation experiments (saturation, gradients and √d_k-vs-d_k pages) -------------
STREAM_SATURATION_SWEEP = 10


@st.cache_data(max_entries=16, show_spinner=False)
def saturation_sweep(
    n_keys: int,
    alphas: tuple[float, ...],
    rho: float,
    seed: int,
    n_rows: int = 20_000,
    d_values: tuple[int, ...] = tuple(int(d) for d in SWEEP_D),
) -> pd.DataFrame:
    """:func:`core.experiments.saturation_sweep` as a tidy frame.

    Returns
    -------
    DataFrame, one row per (alpha, d_k): columns ``alpha``, ``d`` and every statistic
    of :class:`core.experiments.SaturationStats` (e.g. ``entropy_mean``, ``entropy_se``,
    ``jacobian_fro_median``, ``dead_fraction``, ``relevant_weight_mean``).
    """
    from core.experiments import saturation_sweep as sweep

    out = sweep(
        list(d_values),
        n_keys,
        list(alphas),
        rng=rng_for(seed, STREAM_SATURATION_SWEEP),
        n_rows=n_rows,
        rho=rho,
    )
    return pd.DataFrame({name: np.asarray(values).ravel() for name, values in out.items()})


# --- which-d page ---------------------------------------------------------------------
STREAM_WHICH_D_HEADS, STREAM_WHICH_D_CROSS, STREAM_WHICH_D_QK = 50, 51, 52
#: Tokens per sequence (queries = keys) in the which-d experiments.
WHICH_D_TOKENS = 64
#: Heads computed at most (heads are exchangeable: the first 8 show the spread).
WHICH_D_MAX_HEADS = 8
#: Heads of the cross-attention experiment and of the QK-LayerNorm sweep.
WHICH_D_CROSS_HEADS, WHICH_D_QK_HEADS = 4, 4
#: Input scales of the QK-LayerNorm sweep (also the options of its slider).
WHICH_D_X_SCALES = ("0.125", "0.25", "0.5", "1", "2", "4", "8", "16", "32", "64")


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
        ``max_weight``, ``theory_std`` (√Var(q·k) / divisor, REFERENCE-style theory).
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
    (s² without LayerNorm, 1 with it).
    """
    from core.which_d import input_scale_sweep

    d_k = d_model // n_heads
    rng = rng_for(seed, STREAM_WHICH_D_QK)
    x = rng.standard_normal((WHICH_D_TOKENS, d_model))
    scales = np.array([float(s) for s in WHICH_D_X_SCALES])
    sw = input_scale_sweep(
        x, min(n_heads, WHICH_D_QK_HEADS), d_k, scales, rng=rng, divisor=math.sqrt(d_k)
    )
    return pd.concat(
        [
            pd.DataFrame(
                {
                    "scale": scales,
                    "layernorm": ln,
                    "std": sw[f"std_{tag}"],
                    "entropy": sw[f"entropy_{tag}"],
                    "theory_std": np.ones_like(scales) if ln else scales**2,
                }
            )
            for ln, tag in ((False, "raw"), (True, "ln"))
        ],
        ignore_index=True,
    )
