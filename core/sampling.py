"""Exact samplers for query/key vectors and their dot products.

All randomness comes from the ``rng`` argument (a ``np.random.Generator``).
Distributions are zero-mean with the requested standard deviation:
``"normal"`` N(0, σ²), ``"uniform"`` U(−√3σ, √3σ), ``"rademacher"`` ±σ.
"""

from __future__ import annotations

import math

import numpy as np

from core.theory import DISTRIBUTIONS
from core.validation import check_choice, check_positive, check_positive_int, check_rho, check_rng

#: Largest number of elements one (n, d) array may hold (1 GiB of float64).
MAX_ELEMENTS = 2**27
#: Elements per chunk on the direct O(d) path (8 MiB of float64 per operand).
CHUNK_ELEMENTS = 2**20


def _check_n(n: int, name: str) -> int:
    return check_positive_int(name, n)


def _check_rng(rng: np.random.Generator) -> np.random.Generator:
    return check_rng("rng", rng)


def _components(rng: np.random.Generator, shape: tuple[int, ...], dist: str) -> np.ndarray:
    """Zero-mean, unit-variance iid components of ``dist``."""
    if dist == "normal":
        return rng.standard_normal(shape)
    if dist == "uniform":
        return rng.uniform(-math.sqrt(3.0), math.sqrt(3.0), size=shape)
    return rng.integers(0, 2, size=shape, dtype=np.int8) * 2.0 - 1.0


def sample_qk(
    n: int,
    d: int,
    *,
    rng: np.random.Generator,
    dist: str = "normal",
    sigma_q: float = 1.0,
    sigma_k: float = 1.0,
    rho: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw n query/key pairs with iid components.

    For ``rho != 0`` (normal only) each pair of components is bivariate normal with
    corr(q_i, k_i) = rho: k = σ_k (rho z_q + √(1 − rho²) z), q = σ_q z_q.

    Parameters
    ----------
    n : int
        Number of pairs (>= 1).
    d : int
        Dimension d_k (>= 1); n·d must not exceed ``MAX_ELEMENTS``.
    rng : numpy.random.Generator
    dist : {"normal", "uniform", "rademacher"}
    sigma_q, sigma_k : float
        Component standard deviations (> 0).
    rho : float
        Component correlation, |rho| < 1; non-zero only for ``"normal"``.

    Returns
    -------
    q, k : ndarray, shape (n, d) each, float64.

    Raises
    ------
    ValueError
        On any invalid argument, naming it and the allowed range.

    References
    ----------
    docs/mathematics.md §1.3 (the correlated pair).
    """
    n = _check_n(n, "n")
    d = check_positive_int("d", d)
    dist = check_choice("dist", dist, DISTRIBUTIONS)
    sq, sk = check_positive("sigma_q", sigma_q), check_positive("sigma_k", sigma_k)
    rho = check_rho("rho", rho)
    _check_rng(rng)
    if rho != 0.0 and dist != "normal":
        raise ValueError(f"rho != 0 is only supported for dist='normal', got dist={dist!r}")
    if n * d > MAX_ELEMENTS:
        raise ValueError(f"n * d must be <= {MAX_ELEMENTS}, got {n} * {d} = {n * d}")
    zq = _components(rng, (n, d), dist)
    zk = _components(rng, (n, d), dist)
    if rho != 0.0:
        zk = rho * zq + math.sqrt(1.0 - rho * rho) * zk
    return sq * zq, sk * zk


def dot_products(
    d: int,
    n_samples: int,
    *,
    rng: np.random.Generator,
    dist: str = "normal",
    sigma_q: float = 1.0,
    sigma_k: float = 1.0,
    rho: float = 0.0,
) -> np.ndarray:
    """Sample the unscaled score s = q·k, exactly in distribution.

    - ``"normal"``: given q, s ~ N(ρσ_k/σ_q·‖q‖², σ_k²(1−ρ²)‖q‖²) and ‖q‖²/σ_q² ~ χ²_d, so
      s = σ_qσ_k (ρ R² + √(1−ρ²) R Z) with R² ~ χ²_d, Z ~ N(0, 1): O(1) per sample.
    - ``"rademacher"``: s = σ_qσ_k (2·Binomial(d, ½) − d): O(1) per sample.
    - ``"uniform"``: the direct sum over d products, chunked so memory stays below
      ``CHUNK_ELEMENTS`` floats per operand whatever n_samples and d are.

    Parameters
    ----------
    d : int
        Dimension d_k (>= 1).
    n_samples : int
        Number of samples (>= 1).
    rng, dist, sigma_q, sigma_k, rho
        As in :func:`sample_qk`.

    Returns
    -------
    ndarray, shape (n_samples,), float64.

    Raises
    ------
    ValueError
        On any invalid argument, naming it and the allowed range.

    References
    ----------
    docs/mathematics.md §1.3 (exact Gaussian and Rademacher forms; the χ² law, Johnson,
    Kotz & Balakrishnan 1994, ch. 18); Vaswani et al. 2017, §3.2.1 footnote 4.
    """
    d = check_positive_int("d", d)
    n = _check_n(n_samples, "n_samples")
    dist = check_choice("dist", dist, DISTRIBUTIONS)
    sq, sk = check_positive("sigma_q", sigma_q), check_positive("sigma_k", sigma_k)
    rho = check_rho("rho", rho)
    _check_rng(rng)
    if rho != 0.0 and dist != "normal":
        raise ValueError(f"rho != 0 is only supported for dist='normal', got dist={dist!r}")
    c = sq * sk
    if dist == "normal":
        r2 = rng.chisquare(d, size=n)
        z = rng.standard_normal(n)
        if rho == 0.0:
            return c * np.sqrt(r2) * z
        return c * (rho * r2 + math.sqrt(1.0 - rho * rho) * np.sqrt(r2) * z)
    if dist == "rademacher":
        return c * (2.0 * rng.binomial(d, 0.5, size=n) - d)
    out = np.empty(n)
    rows = max(1, CHUNK_ELEMENTS // d)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        # (rows, d) products of unit-variance uniforms, summed over d
        chunk_q = _components(rng, (stop - start, d), "uniform")
        chunk_k = _components(rng, (stop - start, d), "uniform")
        out[start:stop] = np.einsum("ij,ij->i", chunk_q, chunk_k)
    return c * out


def score_matrix_std(
    d: int, n_queries: int, n_keys: int, n_draws: int, *, rng: np.random.Generator
) -> np.ndarray:
    """The standard deviation (ddof = 0) of the n_queries × n_keys scores S = Q Kᵀ, for
    ``n_draws`` independent draws of Q and K with iid N(0, 1) entries, exactly in
    distribution and at a cost that does not grow with d.

    Given K, the rows of S are iid N(0, K Kᵀ), and K Kᵀ ~ Wishart(n_keys, d), drawn by
    Bartlett's decomposition: K Kᵀ = A Aᵀ with A lower triangular, A_ii² ~ χ²(d − i + 1)
    (i = 1 … n_keys) and A_ij ~ N(0, 1) below the diagonal. So S = Z Aᵀ with Z an
    n_queries × n_keys standard normal matrix: O(n_queries · n_keys²) per draw.

    Parameters
    ----------
    d : int
        Dimension d_k, at least ``n_keys`` (the Wishart matrix is then non-singular).
    n_queries, n_keys, n_draws : int
        The shape of S and the number of draws (each >= 1).
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (n_draws,), float64: the standard deviation of each draw's scores.

    Raises
    ------
    ValueError
        On any invalid argument, naming it and the allowed range.

    References
    ----------
    Bartlett 1933 (the decomposition); Anderson 2003, *An Introduction to Multivariate
    Statistical Analysis*, §7.2.
    """
    d = check_positive_int("d", d)
    n_q, n_k = check_positive_int("n_queries", n_queries), check_positive_int("n_keys", n_keys)
    n = _check_n(n_draws, "n_draws")
    _check_rng(rng)
    if d < n_k:
        raise ValueError(f"d must be at least n_keys = {n_k}, got {d}")
    a = np.zeros((n, n_k, n_k))
    rows, cols = np.tril_indices(n_k, -1)
    a[:, rows, cols] = rng.standard_normal((n, rows.size))
    diagonal = np.arange(n_k)
    a[:, diagonal, diagonal] = np.sqrt(rng.chisquare(d - diagonal, size=(n, n_k)))
    scores = rng.standard_normal((n, n_q, n_k)) @ a.transpose(0, 2, 1)
    return scores.reshape(n, -1).std(axis=1)
