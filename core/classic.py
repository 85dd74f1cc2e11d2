"""The often-quoted toy experiment softmax(Q Kᵀ) vs softmax(Q Kᵀ/√d_k), sampled exactly and fast.

Model: Q, K ~ N(0, 1) entrywise, shape (batch, seq_len, d_k); scores S = Q Kᵀ
(seq_len × seq_len per batch element); logits d_k**-alpha · S; one softmax per
query row.

Exact shortcut. Given K, the rows of S are independent N(0, K Kᵀ) vectors, so
the joint law of S depends on K only through W = K Kᵀ ~ Wishart_{seq_len}(d_k, I).
When d_k ≥ seq_len the Bartlett decomposition gives W = A Aᵀ with A lower
triangular, A_ii = √χ²_{d_k − i + 1} (i = 1 … seq_len), A_ij ~ N(0, 1) (i > j),
and S has the law of Z Aᵀ with Z an independent (seq_len × seq_len) standard
normal matrix. A batch element then costs O(seq_len³) whatever d_k is; when
d_k < seq_len, Q and K are drawn directly (also ≤ O(seq_len³)).

What the popular code prints. ``print(np.max(attn, axis=-1)[0])`` shows the row
maxima of batch element 0: seq_len typical rows, not the tensor's largest entries.
:func:`printout_rowmax` samples the first printed values exactly (through the Gram
matrix of the printed queries), :func:`printout_chance` gives the chance that they all
reach a threshold, e.g. the quoted [0.9999 0.9998 0.9999 0.9997 …].

References
----------
Bartlett, M. S. (1933); see Anderson, *An Introduction to Multivariate
Statistical Analysis*, 3rd ed., Thm 7.2.1 (the Bartlett decomposition).
Vaswani et al. 2017, §3.2.1 footnote 4 (the variance argument behind √d_k).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from core.attention import check_alpha
from core.validation import check_int, check_rng

__all__ = [
    "BATCH_MAX",
    "D_K_MAX",
    "ROWMAX_HIGH",
    "SEQ_MAX",
    "classic_rowmax",
    "classic_scores",
    "printout_chance",
    "printout_rowmax",
    "rowmax_summary",
]

#: Largest batch, seq_len and d_k accepted.
BATCH_MAX = 4096
SEQ_MAX = 1024
D_K_MAX = 1 << 20
#: Most entries of Z drawn at once (8 MB of float64).
_CHUNK_ELEMENTS = 1 << 20
#: A row counts as "one-hot-looking" when its largest weight is at least this.
ROWMAX_HIGH = 0.99


def _check_shape(batch: object, seq_len: object, d_k: object, n_replicates: object):
    return (
        check_int("batch", batch, 1, BATCH_MAX),
        check_int("seq_len", seq_len, 1, SEQ_MAX),
        check_int("d_k", d_k, 1, D_K_MAX),
        check_int("n_replicates", n_replicates, 1, 1_000_000),
    )


def _bartlett_factor(m: int, seq_len: int, d_k: int, rng: np.random.Generator) -> np.ndarray:
    """A with A Aᵀ ~ Wishart_{seq_len}(d_k, I) for m independent draws; shape (m, n, n)."""
    a = np.tril(rng.standard_normal((m, seq_len, seq_len)), k=-1)
    df = d_k - np.arange(seq_len)  # d_k, d_k − 1, …, d_k − seq_len + 1 (all ≥ 1)
    idx = np.arange(seq_len)
    a[:, idx, idx] = np.sqrt(rng.chisquare(df, size=(m, seq_len)))
    return a


def classic_scores(
    batch: int = 4,
    seq_len: int = 10,
    d_k: int = 64,
    n_replicates: int = 1,
    *,
    rng: np.random.Generator,
) -> np.ndarray:
    """Raw scores S = Q Kᵀ of the toy experiment, exact in distribution.

    Parameters
    ----------
    batch, seq_len, d_k : int
        Shape of Q and K, (batch, seq_len, d_k); batch ≤ 4096, seq_len ≤ 1024,
        d_k ≤ 2**20.
    n_replicates : int
        Independent replicates of the whole tensor (≤ 1e6).
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (n_replicates, batch, seq_len, seq_len)
        S[..., i, j] = q_i · k_j: mean 0, variance d_k; rows of one batch element
        share K and are dependent exactly as in the direct computation.

    Raises
    ------
    ValueError
        On an out-of-range argument (the message names it), or if the result
        would exceed 2**24 entries (128 MB).

    References
    ----------
    Bartlett 1933; Anderson 2003, Thm 7.2.1 (the decomposition used when d_k ≥ seq_len).
    """
    check_rng("rng", rng)
    batch, seq_len, d_k, n_replicates = _check_shape(batch, seq_len, d_k, n_replicates)
    m = n_replicates * batch
    if m * seq_len * seq_len > 16 * _CHUNK_ELEMENTS:
        raise ValueError(
            "n_replicates * batch * seq_len**2 must be <= "
            f"{16 * _CHUNK_ELEMENTS}, got {n_replicates} * {batch} * {seq_len}**2"
        )
    if d_k < seq_len:
        q = rng.standard_normal((m, seq_len, d_k))
        k = rng.standard_normal((m, seq_len, d_k))
        s = q @ np.swapaxes(k, -1, -2)  # (m, seq_len, seq_len)
    else:
        a = _bartlett_factor(m, seq_len, d_k, rng)  # (m, n, n)
        z = rng.standard_normal((m, seq_len, seq_len))
        s = z @ np.swapaxes(a, -1, -2)  # row i: z_i Aᵀ ~ N(0, A Aᵀ)
    return s.reshape(n_replicates, batch, seq_len, seq_len)


def classic_rowmax(
    batch: int = 4,
    seq_len: int = 10,
    d_k: int = 64,
    n_replicates: int = 2000,
    *,
    rng: np.random.Generator,
    alphas: Sequence[float] = (0.0, 0.5),
) -> np.ndarray:
    """Largest attention weight of every query row, for several scalings of the same scores.

    Same law as :func:`core.experiments.classic_experiment_rowmax` (which
    draws Q and K directly), at O(seq_len³) per batch element instead of
    O(seq_len² d_k).

    Parameters
    ----------
    batch, seq_len, d_k, n_replicates : int
        As :func:`classic_scores`.
    rng : numpy.random.Generator
    alphas : sequence of float, length n_alpha
        Scaling exponents in [0, 4] (0 unscaled, 0.5 divided by √d_k); every
        alpha uses the same sampled scores.

    Returns
    -------
    ndarray, shape (n_alpha, n_replicates, batch, seq_len)
        max_j softmax(d_k**-alpha · S)[i, j] = 1 / Σ_j exp(d_k**-alpha (S_ij − max_j S_ij)).

    Raises
    ------
    ValueError
        On an out-of-range argument (the message names it).

    References
    ----------
    docs/mathematics.md §3.6.
    """
    alpha_list = [check_alpha(a) for a in alphas]
    if not alpha_list:
        raise ValueError("alphas must be a non-empty sequence")
    s = classic_scores(batch, seq_len, d_k, n_replicates, rng=rng)
    gaps = s.max(axis=-1, keepdims=True) - s  # (rep, batch, n, n), ≥ 0
    out = np.empty((len(alpha_list), *s.shape[:-1]))
    for i, alpha in enumerate(alpha_list):
        out[i] = 1.0 / np.exp(-(float(d_k) ** -alpha) * gaps).sum(axis=-1)
    return out


def rowmax_summary(rowmax: np.ndarray) -> dict[str, float]:
    """What a typical row looks like versus the largest entry of a whole tensor.

    Parameters
    ----------
    rowmax : ndarray, shape (n_replicates, batch, seq_len)
        Row maxima of independent replicates (one alpha).

    Returns
    -------
    dict of str -> float
        ``mean`` and ``se`` of the row max (s.e. over replicates: rows of one
        replicate are dependent), ``median``, ``q10``, ``q25``, ``q75``,
        ``q90``, ``high_share`` (share of rows ≥ ``ROWMAX_HIGH``),
        ``tensor_max_median`` and ``tensor_max_q10`` (the per-replicate
        maximum over all rows: the tensor's largest entry, which no printout of
        row maxima singles out),
        ``tensor_high_share`` (share of replicates whose maximum is
        ≥ ``ROWMAX_HIGH``), and ``n_replicates``, ``n_rows``.

    Raises
    ------
    ValueError
        If ``rowmax`` is not three-dimensional or is empty.

    References
    ----------
    docs/mathematics.md §3.6 (the tensor maximum against a typical row).
    """
    arr = np.asarray(rowmax, dtype=float)
    if arr.ndim != 3 or arr.size == 0:
        raise ValueError(f"rowmax must have shape (n_replicates, batch, seq_len), got {arr.shape}")
    n_rep = arr.shape[0]
    per_rep = arr.reshape(n_rep, -1)
    rep_means = per_rep.mean(axis=1)
    se = float(rep_means.std(ddof=1) / np.sqrt(n_rep)) if n_rep > 1 else float("nan")
    q10, q25, median, q75, q90 = np.quantile(arr, [0.1, 0.25, 0.5, 0.75, 0.9])
    tensor_max = per_rep.max(axis=1)
    return {
        "mean": float(arr.mean()),
        "se": se,
        "median": float(median),
        "q10": float(q10),
        "q25": float(q25),
        "q75": float(q75),
        "q90": float(q90),
        "high_share": float(np.mean(arr >= ROWMAX_HIGH)),
        "tensor_max_median": float(np.median(tensor_max)),
        "tensor_max_q10": float(np.quantile(tensor_max, 0.1)),
        "tensor_high_share": float(np.mean(tensor_max >= ROWMAX_HIGH)),
        "n_replicates": float(n_rep),
        "n_rows": float(arr.size),
    }


def printout_rowmax(
    n_printed: int = 4,
    seq_len: int = 10,
    d_k: int = 64,
    n_printouts: int = 100_000,
    *,
    rng: np.random.Generator,
    alpha: float = 0.0,
) -> np.ndarray:
    """The first values a printout of ``np.max(attn, axis=-1)[0]`` shows, exact in distribution.

    The popular code prints the row maxima of batch element 0: the largest weight of
    each of its ``seq_len`` query rows. Its first ``n_printed`` values are the rows of
    the queries q_1 … q_m (m = n_printed) against the same keys k_1 … k_n (n = seq_len).

    Exact shortcut. Given the m queries, the n columns (q_1·k_j, …, q_m·k_j) are
    independent N(0, G) vectors, G = Q_m Q_mᵀ ~ Wishart_m(d_k, I). So the scores
    S (m × n) have the law of B Z with B the Bartlett factor of G and Z an m × n standard
    normal matrix: O(m² n) per printout whatever d_k is (used when d_k ≥ m; otherwise Q_m
    and K are drawn directly). Rows of one printout share the keys and stay dependent.

    Parameters
    ----------
    n_printed : int
        Printed rows m, 1 ≤ m ≤ seq_len.
    seq_len : int
        Queries = keys n, ≤ 1024.
    d_k : int
        Width of q and k, ≤ 2**20.
    n_printouts : int
        Independent printouts (≤ 1e7); drawn in chunks of at most 2**20 scores.
    rng : numpy.random.Generator
    alpha : float
        Scaling exponent in [0, 4]: 0 for the unscaled printout, 0.5 for ÷√d_k.

    Returns
    -------
    ndarray, shape (n_printouts, n_printed)
        max_j softmax(d_k**-alpha · S)[i, j] for the first m rows of each printout.

    Raises
    ------
    ValueError
        On an out-of-range argument (the message names it).

    References
    ----------
    Bartlett 1933; Anderson 2003, Thm 7.2.1. docs/mathematics.md §3.6.
    """
    check_rng("rng", rng)
    seq_len = check_int("seq_len", seq_len, 1, SEQ_MAX)
    m = check_int("n_printed", n_printed, 1, seq_len)
    d_k = check_int("d_k", d_k, 1, D_K_MAX)
    n_printouts = check_int("n_printouts", n_printouts, 1, 10_000_000)
    scale = float(d_k) ** -check_alpha(alpha)
    per_printout = m * seq_len * (1 if d_k >= m else d_k)
    size_max = max(1, _CHUNK_ELEMENTS // per_printout)
    out = np.empty((n_printouts, m))
    for start in range(0, n_printouts, size_max):
        size = min(size_max, n_printouts - start)
        if d_k >= m:
            b = _bartlett_factor(size, m, d_k, rng)  # (size, m, m)
            s = b @ rng.standard_normal((size, m, seq_len))  # (size, m, seq_len)
        else:
            q = rng.standard_normal((size, m, d_k))
            k = rng.standard_normal((size, seq_len, d_k))
            s = q @ np.swapaxes(k, -1, -2)
        gaps = s.max(axis=-1, keepdims=True) - s  # ≥ 0
        out[start : start + size] = 1.0 / np.exp(-scale * gaps).sum(axis=-1)
    return out


def printout_chance(rowmax: np.ndarray, threshold: float) -> dict[str, float]:
    """Chance that every printed value reaches ``threshold``, with its standard error.

    Parameters
    ----------
    rowmax : ndarray, shape (n_printouts, n_printed)
        From :func:`printout_rowmax` (or the first rows of a direct simulation).
    threshold : float
        In (0, 1]; the seed's quoted printout has its first four values ≥ 0.9997.

    Returns
    -------
    dict of str -> float
        ``chance`` (share of printouts whose values are all ≥ threshold) and ``se``
        (binomial, √(p(1 − p)/N)); ``hits`` and ``n_printouts``; ``row_share`` (share of
        single rows ≥ threshold), ``independent`` (row_share ** n_printed: the chance if
        the rows did not share their keys).

    Raises
    ------
    ValueError
        If ``rowmax`` is not two-dimensional or is empty, or ``threshold`` is outside (0, 1].

    References
    ----------
    docs/mathematics.md §3.6.
    """
    arr = np.asarray(rowmax, dtype=float)
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(f"rowmax must have shape (n_printouts, n_printed), got {arr.shape}")
    t = float(threshold)
    if not 0.0 < t <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    n = arr.shape[0]
    high = arr >= t
    hits = int(high.all(axis=1).sum())
    p = hits / n
    row_share = float(high.mean())
    return {
        "chance": p,
        "se": math.sqrt(p * (1.0 - p) / n),
        "hits": float(hits),
        "n_printouts": float(n),
        "row_share": row_share,
        "independent": row_share ** arr.shape[1],
    }
