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


# --- saturation page ----------------------------------------------------------------
STREAM_SAT_ROW, STREAM_SAT_HEATMAP, STREAM_SAT_ROWMAX, STREAM_SAT_OVERFLOW = 20, 21, 22, 23
#: Rows × keys per saturation-sweep cell (n_rows = min(20_000, budget // n_keys)).
SAT_SWEEP_BUDGET = 400_000
#: Rows × keys per overflow-sweep cell (n_rows = min(5_000, budget // n_keys)).
OVERFLOW_BUDGET = 50_000
#: d_k grid of the overflow chart: 2**(k/4) rounded, k = 0…48 (quarter octaves, 1…4096).
OVERFLOW_D = tuple(sorted({round(2 ** (k / 4)) for k in range(49)}))
#: Replicates of the toy experiment: entries of the score tensors ≤ budget, 50…2000 of them.
ROWMAX_BUDGET = 1 << 20
ROWMAX_BINS = np.linspace(0.0, 1.0, 51)


def sat_sweep_rows(n_keys: int) -> int:
    """Rows per cell of the saturation sweep: 20,000, fewer for many keys."""
    return int(min(20_000, SAT_SWEEP_BUDGET // n_keys))


def overflow_rows(n_keys: int) -> int:
    """Rows per cell of the overflow sweep: 5,000, fewer for many keys."""
    return int(min(5_000, OVERFLOW_BUDGET // n_keys))


def rowmax_replicates(batch: int, seq_len: int) -> int:
    """Replicates of the toy experiment drawn for its row-max distribution."""
    return int(min(2000, max(50, ROWMAX_BUDGET // (batch * seq_len * seq_len))))


@st.cache_data(max_entries=32, show_spinner=False)
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
