"""Softmax, its entropy and its Jacobian — one math step per function.

Terms: logits z (what softmax receives), attention weights p = softmax(z),
entropy H(p) in nats, Jacobian J = ∂p/∂z = diag(p) − p pᵀ.

References
----------
Vaswani et al. 2017, *Attention Is All You Need*, eq. (1) and §3.2.1
(footnote 4): large logits push softmax "into regions where it has extremely
small gradients". https://arxiv.org/abs/1706.03762
"""

from __future__ import annotations

import math

import numpy as np

from core.validation import check_finite, check_float_dtype, check_positive, check_positive_int

__all__ = [
    "entropy",
    "gaussian_overflow_chance",
    "jacobian_norm",
    "naive_softmax",
    "overflow_threshold",
    "row_overflows",
    "row_underflows",
    "scaled_overflow_chance",
    "softmax",
    "softmax_entropy",
    "softmax_jacobian",
    "underflow_threshold",
]


def _check_axis_length(arr: np.ndarray, axis: int, name: str) -> None:
    if arr.ndim == 0:
        raise ValueError(f"{name} must have at least one dimension, got a scalar")
    if arr.shape[axis] == 0:
        raise ValueError(
            f"{name} must have at least one entry along axis {axis}, got shape {arr.shape}"
        )


def softmax(z, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax, p_i = exp(z_i − max z) / Σ_j exp(z_j − max z).

    Parameters
    ----------
    z : array_like, shape (..., n, ...)
        Logits. ``-inf`` marks a masked entry (weight exactly 0). Integer input
        is converted to float64; floating input keeps its dtype.
    axis : int
        Axis along which the weights sum to 1.

    Returns
    -------
    ndarray, same shape as ``z``
        Attention weights p ≥ 0. Each slice along ``axis`` sums to 1, except a
        fully masked slice (every entry ``-inf``), which is returned as all
        zeros: no key receives weight, and the output of attention for that
        query is the zero vector.

    Raises
    ------
    ValueError
        If ``z`` contains NaN or ``+inf`` (an overflowed logit has no
        meaningful weight), or has no entries along ``axis``.

    Notes
    -----
    Subtracting the row maximum leaves p unchanged (softmax is invariant to a
    shift shared by a row) and makes every exponent ≤ 0, so ``exp`` cannot
    overflow; compare :func:`naive_softmax`.

    References
    ----------
    Vaswani et al. 2017, eq. (1).
    """
    arr = check_finite("z", z, allow_neg_inf=True)
    _check_axis_length(arr, axis, "z")
    z_max = np.max(arr, axis=axis, keepdims=True)
    z_max = np.where(np.isneginf(z_max), 0.0, z_max).astype(arr.dtype)  # fully masked rows
    e = np.exp(arr - z_max)
    total = np.sum(e, axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def overflow_threshold(dtype=np.float16) -> float:
    """Smallest x for which exp(x), rounded to ``dtype``, is ``inf``.

    Round-to-nearest maps every value ≥ max + ½ ulp to ``inf``, so the
    threshold is ln(finfo.max + ½ ulp) — one half ulp above ln(finfo.max):
    float16 11.0901 (ln 65504 = 11.0899), float32 88.7228, float64 709.7827.

    Parameters
    ----------
    dtype : numpy floating dtype

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``dtype`` is not a floating dtype.

    References
    ----------
    IEEE Std 754-2019, §4.3 (rounding) and §7.4 (overflow); docs/mathematics.md §5.1.
    """
    info = np.finfo(check_float_dtype("dtype", dtype))
    # finfo.max + ½ ulp = 2**maxexp * (1 − 2**-(nmant + 2)).
    return info.maxexp * math.log(2.0) + math.log1p(-(2.0 ** -(info.nmant + 2)))


def gaussian_overflow_chance(n_keys: int, dtype=np.float16, std: float = 1.0) -> float:
    """Chance that a row of ``n_keys`` independent N(0, std²) logits overflows a naive
    softmax in ``dtype``: some logit reaches :func:`overflow_threshold`.

    1 − (1 − Q(t/std))^n_keys with Q the standard normal upper tail, Q(x) = ½ erfc(x/√2),
    computed as −expm1(n · log1p(−Q)) so that tiny chances keep their digits. With unit
    variance (logits scaled by 1/√d_k, d_k large) and float16: 7.0·10⁻²⁸ for 10 keys.

    Parameters
    ----------
    n_keys : int
        Keys per row, ≥ 1.
    dtype : numpy floating dtype
    std : float
        Standard deviation of a logit, > 0.

    Returns
    -------
    float
        Probability in [0, 1].

    Raises
    ------
    ValueError
        If ``n_keys`` is not a positive integer, ``std`` not a positive finite number, or
        ``dtype`` not a floating dtype.

    References
    ----------
    docs/mathematics.md §5.2.
    """
    n = check_positive_int("n_keys", n_keys)
    sd = check_positive("std", std)
    return float(_any_of(n, 0.5 * math.erfc(overflow_threshold(dtype) / sd / math.sqrt(2.0))))


def scaled_overflow_chance(
    d_k: int, n_keys: int, dtype=np.float16, threshold: float | None = None
) -> float:
    """Chance that a row of logits q·k_j/√d_k (q, k_1 … k_n independent N(0, I_{d_k}))
    reaches ``threshold`` (default :func:`overflow_threshold` of ``dtype``).

    Given q the logits are independent N(0, ‖q‖²/d_k), so with χ = ‖q‖ ~ χ_{d_k}

        P = E_χ[1 − (1 − Q(t·√d_k/χ))^n],   Q(x) = ½ erfc(x/√2),

    evaluated by the trapezoid rule over χ (40,000 steps up to √d_k + 40, beyond which
    the χ density is below e⁻⁸⁰⁰). The rows whose ‖q‖ is large dominate: far in the
    tail the logits are a scale mixture of normals, not a normal, so the chance is much
    larger than :func:`gaussian_overflow_chance` (float16, 10 keys: 7.0·10⁻¹⁹ at
    d_k = 64, against 7.0·10⁻²⁸ for unit-variance normal logits, its d_k → ∞ limit).

    Parameters
    ----------
    d_k : int
        Dimension of q and k, ≥ 1.
    n_keys : int
        Keys per row, ≥ 1.
    dtype : numpy floating dtype
    threshold : float, optional
        A positive logit level to use instead of the overflow threshold.

    Returns
    -------
    float
        Probability in [0, 1].

    Raises
    ------
    ValueError
        If ``d_k`` or ``n_keys`` is not a positive integer, ``threshold`` not a positive
        finite number, or ``dtype`` not a floating dtype.

    References
    ----------
    docs/mathematics.md §5.2; Abramowitz & Stegun 1964, 7.1.13 (the erfc bounds that
    select the window below).
    """
    d = check_positive_int("d_k", d_k)
    n = check_positive_int("n_keys", n_keys)
    t = overflow_threshold(dtype) if threshold is None else check_positive("threshold", threshold)
    x = np.linspace(0.0, math.sqrt(d) + 40.0, 40_001)[1:]
    log_density = (
        (d - 1) * np.log(x) - 0.5 * x**2 - (0.5 * d - 1) * math.log(2) - math.lgamma(0.5 * d)
    )
    z = t * math.sqrt(d) / x / math.sqrt(2.0)
    # erfc (a Python call per point) only where the integrand can matter: erfc(z) ≤ e^(−z²)
    # and ≥ e^(−z²)/(√π (z + 1)) for z ≥ 0 (A&S 7.1.13), and 1 − (1 − p)^n ≤ n p, so a
    # point whose log bound log_density − z² lies 80 + ln n below the largest contributes
    # less than e^(−70) of the largest term; those stay 0 (the sum is the same to the bit)
    bound = log_density - z * z
    window = bound > bound.max() - (80.0 + math.log(n))
    tail = np.zeros_like(x)
    tail[window] = 0.5 * _ERFC(z[window]).astype(float)
    values = np.exp(log_density) * _any_of(n, tail)
    step = x[1] - x[0]
    # trapezoid from χ = 0, where the integrand is 0
    return float(min(1.0, step * (values.sum() - 0.5 * values[-1])))


_ERFC = np.frompyfunc(math.erfc, 1, 1)


def _any_of(n: int, p):
    """1 − (1 − p)^n, the chance that one of n independent events of chance p happens,
    as −expm1(n·log1p(−p)) so that tiny chances keep their digits."""
    return -np.expm1(n * np.log1p(-np.asarray(p, dtype=float)))


def underflow_threshold(dtype=np.float16) -> float:
    """Largest x below which exp(x), rounded to ``dtype``, is exactly 0.

    Values at or below half the smallest subnormal round to 0:
    float16 −17.33, float32 −103.97, float64 −745.13.

    Parameters
    ----------
    dtype : numpy floating dtype

    Returns
    -------
    float
        ln(smallest subnormal / 2).

    Raises
    ------
    ValueError
        If ``dtype`` is not a floating dtype.

    References
    ----------
    IEEE Std 754-2019, §4.3 (rounding); docs/mathematics.md §5.1.
    """
    info = np.finfo(check_float_dtype("dtype", dtype))
    return math.log(float(info.smallest_subnormal)) - math.log(2.0)


def _naive_exp_and_sum(z, axis: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    arr = check_finite("z", z, allow_neg_inf=True, allow_pos_inf=True)
    _check_axis_length(arr, axis, "z")
    dt = check_float_dtype("dtype", dtype)
    with np.errstate(over="ignore"):
        e = np.exp(arr.astype(dt))
        total = np.sum(e, axis=axis, keepdims=True, dtype=dt)
    return e, total


def naive_softmax(z, axis: int = -1, dtype=np.float16) -> np.ndarray:
    """Softmax computed the textbook way, exp(z) / Σ exp(z), entirely in ``dtype``.

    No maximum is subtracted, so it fails where real low-precision kernels
    would: this is the function the "float16 overflow" picture uses.

    Parameters
    ----------
    z : array_like, shape (..., n, ...)
        Logits (cast to ``dtype`` first; a logit beyond the dtype's range
        becomes ``inf``).
    axis : int
        Axis along which the weights are normalised.
    dtype : numpy floating dtype
        Precision of every step (default float16).

    Returns
    -------
    ndarray of ``dtype``, same shape as ``z``
        Equal to :func:`softmax` (up to rounding) when nothing overflows. Failure
        modes, with NumPy's warnings suppressed:

        - an entry with exp(z) = inf (z ≥ :func:`overflow_threshold`): the row
          sum is inf, that entry becomes inf/inf = NaN, the others 0;
        - every exp finite but the row sum overflows (e.g. six float16 logits
          of 11.0, each exp ≈ 59874): the row is all zeros — it silently sums
          to 0 instead of 1;
        - every exp underflows to 0 (all z < :func:`underflow_threshold`):
          0/0 = NaN for the whole row.

        Use :func:`row_overflows` / :func:`row_underflows` to detect them.

    Raises
    ------
    ValueError
        If ``z`` contains NaN, ``dtype`` is not a floating dtype, or ``z`` has
        no entries along ``axis``.

    References
    ----------
    docs/mathematics.md §5.1.
    """
    e, total = _naive_exp_and_sum(z, axis, dtype)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return e / total


def row_overflows(z, dtype=np.float16, axis: int = -1) -> np.ndarray:
    """Which rows overflow in :func:`naive_softmax` (an exp or the row sum is inf).

    Parameters
    ----------
    z : array_like, shape (..., n)
        Logits.
    dtype : numpy floating dtype
    axis : int
        Axis of the softmax.

    Returns
    -------
    ndarray of bool, shape of ``z`` without ``axis``
        True where the naive softmax of the row contains NaN or collapses to
        zeros because Σ exp(z) (or one of its terms) rounded to ``inf``.

    Raises
    ------
    ValueError
        As :func:`naive_softmax`.

    References
    ----------
    docs/mathematics.md §5.1.
    """
    _, total = _naive_exp_and_sum(z, axis, dtype)
    return np.squeeze(np.isinf(total), axis=axis)


def row_underflows(z, dtype=np.float16, axis: int = -1) -> np.ndarray:
    """Which rows underflow in :func:`naive_softmax` (every exp rounds to 0 → NaN row).

    Parameters
    ----------
    z : array_like, shape (..., n)
        Logits.
    dtype : numpy floating dtype
    axis : int
        Axis of the softmax.

    Returns
    -------
    ndarray of bool, shape of ``z`` without ``axis``

    Raises
    ------
    ValueError
        As :func:`naive_softmax`.

    References
    ----------
    docs/mathematics.md §5.1.
    """
    _, total = _naive_exp_and_sum(z, axis, dtype)
    return np.squeeze(total == 0, axis=axis)


def _check_weights(p, name: str = "p") -> np.ndarray:
    arr = check_finite(name, p)
    if (arr < 0).any():
        raise ValueError(f"{name} must be non-negative (attention weights)")
    return arr


def entropy(p, axis: int = -1) -> np.ndarray:
    """Shannon entropy H(p) = −Σ p_i ln p_i in nats, with 0 · ln 0 = 0.

    Parameters
    ----------
    p : array_like, shape (..., n, ...)
        Attention weights (non-negative; rows normally sum to 1).
    axis : int
        Axis holding one distribution.

    Returns
    -------
    ndarray, shape of ``p`` without ``axis``
        Entropy in nats: 0 for a one-hot row, ln n for the uniform row, 0 for a
        fully masked (all-zero) row.

    Raises
    ------
    ValueError
        If ``p`` contains NaN, an infinity or a negative entry.

    Notes
    -----
    Rounding of p_max to 1 loses the −p_max ln p_max ≈ 1 − p_max term, a
    relative error of about 1/gap for a saturated row; when the logits are at
    hand :func:`softmax_entropy` is exact to rounding.

    References
    ----------
    Shannon 1948, *A Mathematical Theory of Communication*, §6 (in nats here).
    """
    arr = _check_weights(p)
    log_p = np.log(arr, out=np.zeros_like(arr), where=arr > 0)
    return -np.sum(arr * log_p, axis=axis)


def softmax_entropy(z, axis: int = -1) -> np.ndarray:
    """Entropy of softmax(z) in nats, computed from the logits without cancellation.

    With gaps g_i = max z − z_i ≥ 0 and S = Σ exp(−g_i) (S ≥ 1),
    H = ln S + Σ p_i g_i: two non-negative terms, accurate even when the row
    is saturated and p_max rounds to 1.

    Parameters
    ----------
    z : array_like, shape (..., n, ...)
        Logits; ``-inf`` entries are masked. A fully masked row has entropy 0.
    axis : int

    Returns
    -------
    ndarray, shape of ``z`` without ``axis``
        Entropy in nats, in [0, ln n].

    Raises
    ------
    ValueError
        As :func:`softmax`.

    References
    ----------
    The identity follows from ln p_i = −g_i − ln S; docs/mathematics.md §3.4 uses it
    for two keys.
    """
    arr = check_finite("z", z, allow_neg_inf=True)
    _check_axis_length(arr, axis, "z")
    z_max = np.max(arr, axis=axis, keepdims=True)
    if not np.isneginf(arr).any():  # nothing masked: half the passes
        gaps = z_max - arr
        e = np.exp(-gaps)
        total = np.sum(e, axis=axis, keepdims=True)  # ≥ 1: the largest logit gives exp(0)
        h = np.log(total) + np.sum(e * gaps, axis=axis, keepdims=True) / total
        return np.squeeze(h, axis=axis)
    with np.errstate(invalid="ignore"):  # -inf - -inf in a fully masked row
        gaps = z_max - arr
    gaps = np.where(np.isfinite(gaps), gaps, np.inf)  # masked entries, masked rows
    e = np.exp(-gaps)
    total = np.sum(e, axis=axis, keepdims=True)
    weighted = np.multiply(e, gaps, out=np.zeros_like(e), where=e > 0)
    h = np.log(total, out=np.zeros_like(total), where=total > 0) + np.divide(
        np.sum(weighted, axis=axis, keepdims=True),
        total,
        out=np.zeros_like(total),
        where=total > 0,
    )
    return np.squeeze(h, axis=axis)


def softmax_jacobian(p) -> np.ndarray:
    """Jacobian of softmax, J = ∂p/∂z = diag(p) − p pᵀ.

    Parameters
    ----------
    p : array_like, shape (..., n)
        Attention weights along the last axis.

    Returns
    -------
    ndarray, shape (..., n, n)
        Symmetric positive semidefinite; J·1 = 0; tr J = 1 − ‖p‖² for a row
        summing to 1.

    Raises
    ------
    ValueError
        If ``p`` is a scalar or contains NaN, an infinity or a negative entry.

    References
    ----------
    Vaswani et al. 2017, §3.2.1 and footnote 4 (small softmax gradients).
    """
    arr = _check_weights(p)
    if arr.ndim == 0:
        raise ValueError("p must have at least one dimension, got a scalar")
    jac = -arr[..., :, None] * arr[..., None, :]  # (..., n, n)
    idx = np.arange(arr.shape[-1])
    jac[..., idx, idx] += arr
    return jac


def _fro_norm_last_axis(p: np.ndarray) -> np.ndarray:
    """‖diag(p) − p pᵀ‖_F for rows of p (last axis) summing to 1, without cancellation.

    The closed form ‖J‖_F² = Σp² − 2Σp³ + (Σp²)² cancels to roundoff when a
    row saturates. Writing the top weight as p_m = 1 − r, r = Σ_{i≠m} p_i, and
    T_k = Σ_{i≠m} p_i^k, the same quantity is

        ‖J‖_F² = p_m² r² + T₂ (1 + 2 p_m² + T₂) − 2 T₃,

    where T₂ − 2T₃ = Σ_{i≠m} p_i² (1 − 2p_i) cannot cancel badly because every
    non-maximal weight is ≤ ½. Accurate down to the smallest representable p_i.
    """
    top = np.argmax(p, axis=-1)[..., None]
    p_top = np.take_along_axis(p, top, axis=-1)[..., 0]
    others = p.copy()
    np.put_along_axis(others, top, 0.0, axis=-1)
    r = others.sum(axis=-1)
    sq = others * others
    t2 = sq.sum(axis=-1)
    t3 = np.einsum("...i,...i->...", sq, others)
    fro_sq = p_top**2 * r**2 + t2 * (1.0 + 2.0 * p_top**2 + t2) - 2.0 * t3
    return np.sqrt(np.maximum(fro_sq, 0.0))


def jacobian_norm(p, axis: int = -1, ord: str | int = "fro") -> np.ndarray:
    """Norm of the softmax Jacobian J = diag(p) − p pᵀ for each row of ``p``.

    Parameters
    ----------
    p : array_like, shape (..., n, ...)
        Attention weights; every slice along ``axis`` must sum to 1 (a fully
        masked, all-zero slice is also accepted and has ‖J‖ = 0).
    axis : int
        Axis holding one distribution.
    ord : {"fro", 2}
        ``"fro"``: Frobenius norm from the closed form
        ‖J‖_F² = Σp² − 2Σp³ + (Σp²)², evaluated in a cancellation-free
        arrangement (accurate for saturated rows, where the plain formula
        returns roundoff of order 1e-8). ``2``: spectral norm, the largest
        eigenvalue of J (J is positive semidefinite), via ``eigvalsh``; costs
        O(n³) per row.

    Returns
    -------
    ndarray, shape of ``p`` without ``axis``
        Two keys: ‖J‖_F = ‖J‖₂ = 2 p₁ p₂. Uniform row of n keys:
        ‖J‖_F = √(n − 1)/n, ‖J‖₂ = 1/n. Always 0 ≤ ‖J‖₂ ≤ min(½, max p).

    Raises
    ------
    ValueError
        If ``p`` contains NaN, an infinity or a negative entry, if a slice
        neither sums to 1 (within 1e-6 + 8 n eps of the dtype) nor is all
        zero, or if ``ord`` is not "fro" or 2.

    Notes
    -----
    The gradient with respect to the raw scores s = z · c (logits z = s / c,
    e.g. c = √d_k) carries the scale too: ∂p/∂s = (1/c) J(p).

    References
    ----------
    Vaswani et al. 2017, §3.2.1 footnote 4.
    """
    if ord not in ("fro", 2):
        raise ValueError(f"ord must be 'fro' or 2, got {ord!r}")
    arr = _check_weights(p)
    if arr.ndim == 0:
        raise ValueError("p must have at least one dimension, got a scalar")
    arr = np.moveaxis(arr, axis, -1)
    n = arr.shape[-1]
    if n == 0:
        raise ValueError(f"p must have at least one entry along axis {axis}")
    sums = arr.sum(axis=-1)
    tol = 1e-6 + 8 * n * float(np.finfo(arr.dtype).eps)
    if not np.all((np.abs(sums - 1.0) <= tol) | (sums == 0)):
        raise ValueError("p must hold probability vectors: each row must sum to 1 (or be all 0)")
    if ord == "fro":
        return _fro_norm_last_axis(arr)
    eig = np.linalg.eigvalsh(softmax_jacobian(arr))
    return np.maximum(eig[..., -1], 0.0)
