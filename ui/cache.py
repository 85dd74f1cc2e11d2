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
#: Uniform components have no exact O(1) sampler: their q·k is summed over d_k
#: products. These caps bound one rerun's work (2²⁵ products ≈ 0.3 s on one core).
MAX_UNIFORM_PRODUCTS = 2**25
MAX_UNIFORM_SWEEP_PRODUCTS = 2**24


def samples_for(dist: str, d_k: int, n_samples: int, budget: int = MAX_UNIFORM_PRODUCTS) -> int:
    """How many q·k samples a picture draws: all of them, except uniform beyond the budget."""
    if dist != "uniform":
        return n_samples
    return max(1_000, min(n_samples, budget // d_k))


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
        samples_for(dist, d_k, n_samples),
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
    sw = var_core.variance_sweep(
        SWEEP_D,
        SWEEP_SAMPLES,
        rng=rng_for(seed, STREAM_SWEEP),
        dist=dist,
        max_products=MAX_UNIFORM_SWEEP_PRODUCTS,
    )
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


# --- sqrt_vs_d page ---
STREAM_SQRT_VS_D_HEATMAP, STREAM_SQRT_VS_D_AT_D = 40, 41
#: α grid of the (d_k, α) heatmap: 0, 0.05, …, 1.5 (31 values).
HEATMAP_ALPHAS = tuple(round(0.05 * i, 2) for i in range(31))


def sqrt_vs_d_rows(n_keys: int) -> int:
    """Rows per cell of the lines against d_k: 20,000, fewer for long rows (≤ 400k scores)."""
    return min(20_000, 400_000 // int(n_keys))


def sqrt_vs_d_heatmap_rows(n_keys: int) -> int:
    """Rows per heatmap cell: 2,000 at n_keys ≤ 10, fewer for longer rows (≤ 20k scores)."""
    return min(2_000, max(40, 20_000 // int(n_keys)))


@st.cache_data(max_entries=16, show_spinner=False)
def sqrt_vs_d_heatmap(n_keys: int, rho: float, seed: int) -> pd.DataFrame:
    """Mean entropy / ln n_keys over d_k = 1…4096 × α = 0, 0.05, …, 1.5.

    Independent of the page's α and d_k controls, so moving them never recomputes it.
    About 0.09 s of CPU at any n_keys (2,000 rows per cell at n_keys = 10).

    Returns
    -------
    DataFrame, 13 × 31 = 403 rows: ``d``, ``alpha``, ``share`` (mean H / ln n_keys),
    ``share_se``.
    """
    from core.experiments import saturation_sweep as sweep

    out = sweep(
        [int(d) for d in SWEEP_D],
        n_keys,
        list(HEATMAP_ALPHAS),
        rng=rng_for(seed, STREAM_SQRT_VS_D_HEATMAP),
        n_rows=sqrt_vs_d_heatmap_rows(n_keys),
        rho=rho,
    )
    ln_n = math.log(n_keys)
    return pd.DataFrame(
        {
            "d": out["d"].ravel(),
            "alpha": out["alpha"].ravel(),
            "share": out["entropy_mean"].ravel() / ln_n,
            "share_se": out["entropy_se"].ravel() / ln_n,
        }
    )


@st.cache_data(max_entries=64, show_spinner=False)
def sqrt_vs_d_at_d(
    d_k: int, n_keys: int, alphas: tuple[float, ...], rho: float, seed: int
) -> pd.DataFrame:
    """Saturation statistics at one d_k for a few α (the page's summary table).

    Returns
    -------
    DataFrame, one row per alpha: ``alpha`` and every statistic of
    :class:`core.experiments.SaturationStats`.
    """
    from core.experiments import saturation_sweep as sweep

    out = sweep(
        [int(d_k)],
        n_keys,
        list(alphas),
        rng=rng_for(seed, STREAM_SQRT_VS_D_AT_D),
        n_rows=sqrt_vs_d_rows(n_keys),
        rho=rho,
    )
    return pd.DataFrame({name: np.asarray(values).ravel() for name, values in out.items()})
