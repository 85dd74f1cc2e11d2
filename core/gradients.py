"""Where the gradient goes when softmax saturates: J u, gap rows, ∂L/∂q per query row.

Terms: logits z, weights p = softmax(z), Jacobian J = ∂p/∂z = diag(p) − p pᵀ,
raw scores s = q·k with logits z = c s, c = d_k**-alpha (so ∂p/∂s = c J),
gap g_j = max z − z_j ≥ 0 and ε_j = exp(−g_j) for the keys that are not the top.

Everything here is written around the top key k of a row: with r = Σ_{i≠k} p_i
(computed from the small weights, never as 1 − p_k) no formula subtracts two
numbers close to 1, so values stay accurate in rows that are saturated to
rounding (p_k = 1.0 in float64).

References
----------
Vaswani et al. 2017, *Attention Is All You Need*, §3.2.1 and footnote 4
(large logits push softmax into regions with extremely small gradients).
https://arxiv.org/abs/1706.03762
"""

from __future__ import annotations

import numpy as np

from core.attention import check_alpha
from core.softmax import softmax
from core.validation import check_finite, check_int, check_real, check_rng

__all__ = [
    "GAP_MAX",
    "gap_curve",
    "gap_logits",
    "jacobian_from_logits",
    "jacobian_vector_product",
    "query_grad_norms",
]

#: Largest logit gap accepted by the gap explorer (e^-200 ≈ 1e-87, far from underflow).
GAP_MAX = 200.0


def _top_split(p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Index of the top weight, the top weight and r = Σ of the others (last axis)."""
    top = np.argmax(p, axis=-1)[..., None]
    p_top = np.take_along_axis(p, top, axis=-1)[..., 0]
    others = p.copy()
    np.put_along_axis(others, top, 0.0, axis=-1)
    return top, p_top, others.sum(axis=-1)


def jacobian_from_logits(z) -> tuple[np.ndarray, np.ndarray]:
    """Weights p = softmax(z) and J = diag(p) − p pᵀ, accurate in saturated rows.

    The plain J_kk = p_k − p_k² of the top key k cancels to roundoff (exactly 0
    once p_k rounds to 1); here J_kk = p_k r with r = Σ_{i≠k} p_i, which equals
    p_k(1 − p_k) in exact arithmetic. Every other entry is the plain formula.

    Parameters
    ----------
    z : array_like, shape (..., n)
        Logits (finite).

    Returns
    -------
    p : ndarray, shape (..., n)
    jac : ndarray, shape (..., n, n)
        Symmetric, J·1 = 0, every |J_ij| ≤ 1 − p_k ≤ ½ (k the top key): the
        winner's diagonal p_k(1 − p_k), a loser's diagonal p_i(1 − p_i) ≤ p_i,
        and an off-diagonal −p_i p_j where at least one of i, j is a loser.

    Raises
    ------
    ValueError
        If ``z`` is a scalar, empty, or contains NaN or an infinity.

    References
    ----------
    Vaswani et al. 2017, §3.2.1 footnote 4.
    """
    arr = check_finite("z", z)
    if arr.ndim == 0 or arr.shape[-1] == 0:
        raise ValueError(f"z must have shape (..., n) with n >= 1, got {arr.shape}")
    p = softmax(arr, axis=-1)
    n = p.shape[-1]
    jac = -p[..., :, None] * p[..., None, :]  # (..., n, n)
    idx = np.arange(n)
    jac[..., idx, idx] += p
    top, p_top, r = _top_split(p)
    flat = jac.reshape(-1, n, n)  # (rows, n, n), a view
    k = top.ravel()
    flat[np.arange(flat.shape[0]), k, k] = (p_top * r).ravel()
    return p, jac


def jacobian_vector_product(p, u) -> np.ndarray:
    """w = J u = p ∘ (u − p·u) for rows of weights p, without cancellation.

    With k the top key and δ_i = u_k − u_i (δ_k = 0), u − p·u = m − δ with
    m = Σ_{i≠k} p_i δ_i, so w_i = p_i (m − δ_i): m is built from the small
    weights only and is exact even when p_k rounds to 1.

    Parameters
    ----------
    p : array_like, shape (..., n)
        Attention weights, rows summing to 1.
    u : array_like, shape (..., n)
        Upstream gradient ∂L/∂p (broadcast against ``p``).

    Returns
    -------
    ndarray, shape (..., n)
        ∂L/∂z = J u (J is symmetric). Its entries sum to 0.

    Raises
    ------
    ValueError
        If p or u contain NaN or an infinity, p is negative, or the shapes do
        not broadcast.

    References
    ----------
    docs/mathematics.md §4.1 (J = diag(p) − p pᵀ); the chain rule of
    :func:`core.attention.attention_backward`.
    """
    p_arr = check_finite("p", p)
    u_arr = check_finite("u", u)
    if (p_arr < 0).any():
        raise ValueError("p must be non-negative (attention weights)")
    if p_arr.ndim == 0:
        raise ValueError("p must have at least one dimension, got a scalar")
    try:
        p_arr, u_arr = np.broadcast_arrays(p_arr, u_arr)
    except ValueError as exc:
        raise ValueError(
            f"p of shape {p_arr.shape} and u of shape {u_arr.shape} do not broadcast"
        ) from exc
    top = np.argmax(p_arr, axis=-1)[..., None]
    delta = np.take_along_axis(u_arr, top, axis=-1) - u_arr  # (..., n), 0 at the top key
    m = np.sum(p_arr * delta, axis=-1, keepdims=True)
    return p_arr * (m - delta)


def gap_logits(g: float, n_keys: int, gap2: float | None = None) -> np.ndarray:
    """Logits of the gap explorer: [g, max(g − gap2, 0), 0, …, 0] (or [g, 0, …, 0]).

    Parameters
    ----------
    g : float
        Lead of the top key over the bulk of the keys, in [0, 200].
    n_keys : int
        Number of keys, in [2, 65536].
    gap2 : float or None
        None: every other key at 0. Otherwise the runner-up (key 1) trails the
        top by ``gap2`` (in [0, 200]) as long as that keeps it above the bulk:
        its logit is max(g − gap2, 0).

    Returns
    -------
    ndarray, shape (n_keys,)
        Logits (dimensionless); key 0 is the top key.

    Raises
    ------
    ValueError
        If an argument is out of range (the message names it).

    References
    ----------
    docs/mathematics.md §4.2 (the rows whose ‖J‖_F the gap laws describe).
    """
    g = check_real("g", g, 0.0, GAP_MAX)
    n_keys = check_int("n_keys", n_keys, 2, 1 << 16)
    z = np.zeros(n_keys)
    z[0] = g
    if gap2 is not None:
        z[1] = max(g - check_real("gap2", gap2, 0.0, GAP_MAX), 0.0)
    return z


def gap_curve(g_values, n_keys: int, gap2: float | None = None) -> dict[str, np.ndarray]:
    """‖J‖_F and the largest off-diagonal |J_ij| of :func:`gap_logits` rows, with their laws.

    Parameters
    ----------
    g_values : array_like, shape (m,)
        Gaps g, each in [0, 200].
    n_keys : int
    gap2 : float or None
        As in :func:`gap_logits`.

    Returns
    -------
    dict of ndarray, each shape (m,)
        ``g``; ``p_top`` (largest weight); ``fro`` (exact ‖J‖_F, closed form free
        of cancellation); ``fro_law`` = √((Σε)² + 3Σε²) with ε_j = e^(−g_j) over
        the non-top keys; ``offdiag`` (exact max_{i≠j} p_i p_j = product of the
        two largest weights); ``offdiag_law`` = max ε_j (= e^(−g) when every
        other key is at 0).

    Notes
    -----
    With S = 1 + Σε: p_top = 1/S, p_j = ε_j/S, and ‖J‖_F² = (Σε)²/S⁴ +
    Σε²(1 + 2/S² + Σε²/S²)/S² − 2Σε³/S³ → (Σε)² + 3Σε² as ε → 0. One
    runner-up dominating: ‖J‖_F ≈ 2ε₂. Both laws are asymptotic: the relative
    error is O(Σε), so they hold once the top key leads by a few units.

    Raises
    ------
    ValueError
        If an argument is out of range (the message names it).

    References
    ----------
    docs/mathematics.md §4.2; Vaswani et al. 2017, §3.2.1 footnote 4.
    """
    g_arr = check_finite("g_values", g_values).astype(float).ravel()
    if g_arr.size == 0:
        raise ValueError("g_values must be non-empty")
    z = np.stack([gap_logits(float(g), n_keys, gap2) for g in g_arr])  # (m, n_keys)
    p = softmax(z)
    gaps = z.max(axis=1, keepdims=True) - z  # (m, n_keys)
    top = np.argmax(z, axis=1)
    eps = np.exp(-gaps)
    eps[np.arange(z.shape[0]), top] = 0.0
    s1 = eps.sum(axis=1)
    s2 = (eps * eps).sum(axis=1)
    s3 = (eps**3).sum(axis=1)
    total = 1.0 + s1
    fro_sq = s1**2 / total**4 + s2 * (1.0 + 2.0 / total**2 + s2 / total**2) / total**2
    fro_sq -= 2.0 * s3 / total**3
    two = np.sort(p, axis=1)[:, -2:]
    return {
        "g": g_arr,
        "p_top": 1.0 / total,
        "fro": np.sqrt(np.maximum(fro_sq, 0.0)),
        "fro_law": np.sqrt(s1**2 + 3.0 * s2),
        "offdiag": two[:, 0] * two[:, 1],
        "offdiag_law": eps.max(axis=1),
    }


def query_grad_norms(
    d: int, n_keys: int, alpha: float, *, rng: np.random.Generator, n_rows: int = 20_000
) -> np.ndarray:
    """‖∂L/∂q‖ of random query rows for a random upstream gradient, exact in distribution.

    Model of one row: q ~ N(0, I_{d_k}), keys k_j ~ N(0, I_{d_k}), values
    V ~ N(0, 1) of shape (n_keys, d_v), out = softmax(c q Kᵀ) V with
    c = d_k**-alpha, and L = ⟨G, out⟩ for an upstream gradient G of unit norm.
    Then u = ∂L/∂p = V G has iid N(0, 1) entries, ∂L/∂z = J u = w and
    ∂L/∂q = c Σ_j w_j k_j.

    Splitting each key along q, k_j = (s_j/‖q‖²) q + k_j⊥ with k_j⊥ ~
    N(0, I − q̂q̂ᵀ) independent of the score s_j = ‖q‖ Z_j, gives

        ‖∂L/∂q‖² = c² [ (w·Z)² + ‖w‖² X ],   X ~ χ²_{d_k − 1},

    so a row costs one χ²_{d_k}, one χ²_{d_k−1} and 2 n_keys normals whatever
    d_k is (X = 0 for d_k = 1).

    Parameters
    ----------
    d : int
        d_k, in [1, 2**20].
    n_keys : int
        Keys per row, in [1, 65536].
    alpha : float
        Scaling exponent in [0, 4]; the factor c = d_k**-alpha is included.
    rng : numpy.random.Generator
    n_rows : int
        Number of independent rows, in [1, 5_000_000]; n_rows * n_keys must be
        at most 2**24.

    Returns
    -------
    ndarray, shape (n_rows,)
        ‖∂L/∂q‖ ≥ 0 per row, in units of the upstream gradient.

    Raises
    ------
    ValueError
        On an out-of-range argument (the message names it).

    References
    ----------
    Vaswani et al. 2017, eq. (1) and §3.2.1; the backward pass is that of
    :func:`core.attention.attention_backward`.
    """
    check_rng("rng", rng)
    d = check_int("d", d, 1, 1 << 20)
    n_keys = check_int("n_keys", n_keys, 1, 1 << 16)
    n_rows = check_int("n_rows", n_rows, 1, 5_000_000)
    if n_rows * n_keys > 1 << 24:
        raise ValueError(f"n_rows * n_keys must be <= {1 << 24}, got {n_rows} * {n_keys}")
    c = float(d) ** -check_alpha(alpha)
    r = np.sqrt(rng.chisquare(d, n_rows))  # ‖q‖
    z_std = rng.standard_normal((n_rows, n_keys))  # scores / ‖q‖
    u = rng.standard_normal((n_rows, n_keys))  # ∂L/∂p = V G
    x = rng.chisquare(d - 1, n_rows) if d > 1 else np.zeros(n_rows)
    p = softmax(c * r[:, None] * z_std)  # (n_rows, n_keys)
    w = jacobian_vector_product(p, u)  # ∂L/∂z
    along = np.einsum("ij,ij->i", w, z_std)
    across = np.einsum("ij,ij->i", w, w) * x
    return c * np.sqrt(along * along + across)
