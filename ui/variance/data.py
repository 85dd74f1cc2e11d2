"""Cached data of the variance page: binned q·k samples, running sums (the variance sweep,
the page's answer, is :mod:`ui.story.data`'s).

Conventions (hashable inputs, small frames, one random stream per picture):
:mod:`ui.common.data`. The functions under "The charts' frames" make each chart's data
from plain values (the deferred ``frame`` of :func:`ui.common.workshop.chart`): the
words a frame holds (legend labels) come in as arguments, never from the current
language, since the chart's cache key holds them.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from core import variance as var_core
from core.sampling import dot_products, sample_qk
from ui.common.data import rng_for

#: Uniform components have no exact O(1) sampler: their q·k is summed over d_k
#: products. These caps bound one rerun's work (2²⁵ products ≈ 0.3 s on one core).
MAX_UNIFORM_PRODUCTS = 2**25


def samples_for(dist: str, d_k: int, n_samples: int, budget: int = MAX_UNIFORM_PRODUCTS) -> int:
    """How many q·k samples a picture draws: all of them, except uniform beyond the budget."""
    if dist != "uniform":
        return n_samples
    return max(1_000, min(n_samples, budget // d_k))


N_PATHS = 20


MAX_TERMS_SHOWN = 256


# one stream per random picture
# (stream 2 is the variance sweep's: ui.story.data)
STREAM_HISTOGRAM, STREAM_PATHS, STREAM_TERMS = 1, 3, 4


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


@st.cache_data(max_entries=64, show_spinner=False)
def score_stats(
    d_k: int, n_samples: int, dist: str, sigma_q: float, sigma_k: float, seed: int
) -> dict[str, float]:
    """The sample moments of :func:`score_histograms` (:func:`core.variance.sample_moments`;
    plain numbers: a hit copies no frame)."""
    return score_histograms(d_k, n_samples, dist, sigma_q, sigma_k, seed)[2]


@st.cache_data(max_entries=32, show_spinner=False)
def running_sums(
    d_k: int, dist: str, sigma_q: float, sigma_k: float, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Partial sums of q_i k_i for ``N_PATHS`` pairs (≤ 200 points each) and envelopes.

    Returns
    -------
    paths : DataFrame with i, path, sum; i = 0 (sum 0) starts every path.
    envelope : DataFrame with i, k (1 or 2 standard deviations), lo, hi = ±k √i σ_qσ_k.
    """
    i, sums = var_core.running_sums(
        d_k, N_PATHS, rng=rng_for(seed, STREAM_PATHS), dist=dist, sigma_q=sigma_q, sigma_k=sigma_k
    )
    # every path starts at the origin (the empty sum), so even d_k = 1 draws a segment
    i = np.concatenate([[0], i])
    sums = np.hstack([np.zeros((N_PATHS, 1)), sums])
    paths = pd.DataFrame(
        {
            "i": np.tile(i, N_PATHS),
            "path": np.repeat(np.arange(1, N_PATHS + 1), i.size),
            "sum": sums.ravel(),
        }
    )
    grid = i
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


@st.cache_data(max_entries=32, show_spinner=False)
def pair_sum(d_k: int, dist: str, sigma_q: float, sigma_k: float, seed: int) -> float:
    """q·k of the pair of :func:`pair_terms`: the sum of all its d_k products."""
    return pair_terms(d_k, dist, sigma_q, sigma_k, seed)[1]


# --- the charts' frames, from plain values ---------------------------------------------
def histogram(
    d_k: int, n_samples: int, dist: str, sigma_q: float, sigma_k: float, seed: int, scaled: bool
) -> pd.DataFrame:
    """The binned q·k (``scaled``: q·k/√d_k) of :func:`score_histograms`, ≤ 61 rows: x0,
    x1, x, density, exact, gauss."""
    raw, divided, _ = score_histograms(d_k, n_samples, dist, sigma_q, sigma_k, seed)
    return divided if scaled else raw


def histogram_frames(
    d_k: int,
    n_samples: int,
    dist: str,
    sigma_q: float,
    sigma_k: float,
    seed: int,
    scaled: bool,
    laws: tuple[str, str],
    shared: bool,
) -> tuple[pd.DataFrame, ...]:
    """The frames of a histogram chart as :func:`ui.variance.charts.histogram_with_law`
    draws them: the bins (:func:`histogram`, the chart's CSV); the exact law and the
    Gaussian limit in long form (``x``, ``law``: its legend label from ``laws``, ``y``);
    and with ``shared`` the x-axis ends (``x``, two rows: the unscaled histogram's outer
    bin edges, one axis for both charts). Only frames the chart draws: the browser
    refuses a dataset its chart does not name."""
    hist = histogram(d_k, n_samples, dist, sigma_q, sigma_k, seed, scaled)
    names = dict(zip(("exact", "gauss"), laws, strict=True))
    long = hist.melt(id_vars=["x"], value_vars=list(names), var_name="law", value_name="y")
    long["law"] = long["law"].map(names)
    if not shared:
        return hist, long
    outer = histogram(d_k, n_samples, dist, sigma_q, sigma_k, seed, False) if scaled else hist
    return hist, long, pd.DataFrame({"x": [float(outer.x0.min()), float(outer.x1.max())]})


def walks(
    d_k: int, dist: str, sigma_q: float, sigma_k: float, seed: int, bands: tuple[str, str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`running_sums`: the paths (i, path, sum) and the envelopes (i, k, lo, hi,
    ``band``: the legend labels of ±1 and ±2 standard deviations)."""
    paths, envelope = running_sums(d_k, dist, sigma_q, sigma_k, seed)
    return paths, envelope.assign(band=envelope.k.map(dict(zip((1, 2), bands, strict=True))))


def signed_terms(
    d_k: int, dist: str, sigma_q: float, sigma_k: float, seed: int, signs: tuple[str, str]
) -> pd.DataFrame:
    """The products of :func:`pair_terms` (i, term) with ``sign``, the legend label of a
    positive or a negative term (``signs``, in that order)."""
    terms, _ = pair_terms(d_k, dist, sigma_q, sigma_k, seed)
    names = dict(zip((True, False), signs, strict=True))
    return terms.assign(sign=terms.positive.map(names)).drop(columns="positive")


@st.cache_data(max_entries=1, show_spinner=False)
def quoted_sizes() -> dict[str, float]:
    """The exact law's answers to two often-quoted sizes of q·k (unit-variance components):
    the share of |q·k| ≥ 100 and ≥ 200 at d_k = 1024 and its median there; the median at
    d_k = 512 and the shares in [20, 30) and [0, 20). Constants: computed once for the
    server (:func:`core.variance.score_abs_share`, :func:`core.variance.score_abs_median`)."""
    return {
        "share_100": var_core.score_abs_share(1024, 100.0),
        "share_200": var_core.score_abs_share(1024, 200.0),
        "median_1024": var_core.score_abs_median(1024),
        "median_512": var_core.score_abs_median(512),
        "share_20_30": var_core.score_abs_share(512, 20.0, 30.0),
        "share_0_20": var_core.score_abs_share(512, 0.0, 20.0),
    }
