"""Scaled dot-product attention, forward and backward, for one head.

Shapes (leading batch dimensions ``...`` broadcast as in ``np.matmul``)::

    q        (..., n_q, d_k)    queries
    k        (..., n_k, d_k)    keys
    v        (..., n_k, d_v)    values
    scores   (..., n_q, n_k)    q kᵀ (raw dot products)
    logits   (..., n_q, n_k)    d_k**-alpha * scores
    weights  (..., n_q, n_k)    softmax(logits) along n_k
    out      (..., n_q, d_v)    weights v

alpha is the scaling exponent: 0 no scaling, 0.5 the Transformer's 1/√d_k,
1 μP's 1/d_k.

References
----------
Vaswani et al. 2017, *Attention Is All You Need*, eq. (1), §3.2.1.
Yang et al. 2022, *Tensor Programs V* (μP, 1/d_k attention).
"""

from __future__ import annotations

import numpy as np

from core.softmax import softmax
from core.validation import check_finite, check_real

__all__ = [
    "ALPHA_MAX",
    "attention_backward",
    "attention_logits",
    "attention_weights",
    "check_alpha",
    "scaled_dot_product_attention",
]

#: Largest scaling exponent accepted anywhere in core (0 ≤ alpha ≤ ALPHA_MAX).
ALPHA_MAX = 4.0


def check_alpha(alpha: object) -> float:
    """Validate the scaling exponent: a finite number in [0, ALPHA_MAX].

    Parameters
    ----------
    alpha : object
        The exponent of the logit scale d_k**-alpha.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``alpha`` is not a finite real number in [0, 4] (the message names it).
    """
    return check_real("alpha", alpha, 0.0, ALPHA_MAX)


def _as_matrix_stack(name: str, a: object) -> np.ndarray:
    arr = check_finite(name, a)
    if arr.ndim < 2:
        raise ValueError(
            f"{name} must have shape (..., n, d) with at least 2 dimensions, got {arr.shape}"
        )
    return arr


def _check_qk(q: np.ndarray, k: np.ndarray) -> tuple[int, ...]:
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must share d_k (last dimension): q has shape {q.shape}, k has shape {k.shape}"
        )
    if q.shape[-1] == 0:
        raise ValueError(f"d_k must be >= 1: q has shape {q.shape}, k has shape {k.shape}")
    try:
        batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    except ValueError as exc:
        raise ValueError(
            f"batch dimensions of q and k do not broadcast: q has shape {q.shape}, "
            f"k has shape {k.shape}"
        ) from exc
    return (*batch, q.shape[-2], k.shape[-2])


def _check_v(k: np.ndarray, v: np.ndarray) -> None:
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"k and v must have the same number of keys n_k: k has shape {k.shape}, "
            f"v has shape {v.shape}"
        )


def _check_mask(mask: object, logits_shape: tuple[int, ...]) -> np.ndarray:
    arr = np.asarray(mask)
    if arr.dtype != np.bool_:
        raise ValueError(f"mask must be a boolean array (True = keep), got dtype {arr.dtype}")
    try:
        np.broadcast_shapes(arr.shape, logits_shape)
    except ValueError as exc:
        raise ValueError(
            f"mask of shape {arr.shape} does not broadcast to the logits' shape {logits_shape}"
        ) from exc
    return arr


def attention_logits(q, k, *, alpha: float = 0.5) -> np.ndarray:
    """Logits d_k**-alpha · q kᵀ.

    Parameters
    ----------
    q : array_like, shape (..., n_q, d_k)
    k : array_like, shape (..., n_k, d_k)
    alpha : float
        Scaling exponent in [0, 4]: 0 none, 0.5 the Transformer's 1/√d_k,
        1 μP's 1/d_k.

    Returns
    -------
    ndarray, shape (..., n_q, n_k)

    Raises
    ------
    ValueError
        If q or k has fewer than 2 dimensions or contains NaN/inf, if their
        last dimensions (d_k) differ or their batch dimensions do not
        broadcast (the message gives both shapes), or if alpha is out of range.

    References
    ----------
    Vaswani et al. 2017, eq. (1); Yang et al. 2022 (alpha = 1).
    """
    q_arr = _as_matrix_stack("q", q)
    k_arr = _as_matrix_stack("k", k)
    _check_qk(q_arr, k_arr)
    a = check_alpha(alpha)
    d_k = q_arr.shape[-1]
    return (q_arr @ np.swapaxes(k_arr, -1, -2)) * float(d_k) ** -a


def attention_weights(q, k, *, alpha: float = 0.5) -> np.ndarray:
    """Attention weights softmax(q kᵀ · d_k**-alpha).

    Parameters
    ----------
    q : array_like, shape (..., n_q, d_k)
    k : array_like, shape (..., n_k, d_k)
    alpha : float
        Scaling exponent in [0, 4]: 0 none, 0.5 the Transformer's 1/√d_k,
        1 μP's 1/d_k.

    Returns
    -------
    ndarray, shape (..., n_q, n_k); each row sums to 1.

    Raises
    ------
    ValueError
        If the last dimensions of q and k differ (the message gives both
        shapes), or as :func:`attention_logits`.

    References
    ----------
    Vaswani et al. 2017, eq. (1).
    """
    return softmax(attention_logits(q, k, alpha=alpha), axis=-1)


def scaled_dot_product_attention(
    q, k, v, *, alpha: float = 0.5, mask=None
) -> tuple[np.ndarray, np.ndarray]:
    """Attention(Q, K, V) = softmax(Q Kᵀ · d_k**-alpha) V.

    Parameters
    ----------
    q : array_like, shape (..., n_q, d_k)
    k : array_like, shape (..., n_k, d_k)
    v : array_like, shape (..., n_k, d_v)
    alpha : float
        Scaling exponent in [0, 4] (0.5: divide by √d_k).
    mask : array_like of bool, broadcastable to (..., n_q, n_k), optional
        True = the query may attend to that key; False entries get logit
        ``-inf`` and weight 0. A query whose keys are all masked gets all-zero
        weights and a zero output vector.

    Returns
    -------
    out : ndarray, shape (..., n_q, d_v)
    weights : ndarray, shape (..., n_q, n_k)

    Raises
    ------
    ValueError
        On shape mismatches (the message gives the shapes involved), a
        non-boolean or non-broadcastable mask, NaN/inf input or alpha out of
        range.

    References
    ----------
    Vaswani et al. 2017, eq. (1).
    """
    v_arr = _as_matrix_stack("v", v)
    weights = _masked_weights(q, k, v_arr, alpha, mask)
    return weights @ v_arr, weights


def _masked_weights(q, k, v_arr: np.ndarray, alpha: float, mask) -> np.ndarray:
    logits = attention_logits(q, k, alpha=alpha)
    _check_v(np.asarray(k), v_arr)
    if mask is not None:
        keep = _check_mask(mask, logits.shape)
        logits = np.where(keep, logits, -np.inf)
    return softmax(logits, axis=-1)


def _sum_to_shape(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Undo broadcasting: sum ``grad`` over the axes that were broadcast to reach it."""
    extra = grad.ndim - len(shape)
    if extra:
        grad = grad.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, size in enumerate(shape) if size == 1 and grad.shape[i] != 1)
    if axes:
        grad = grad.sum(axis=axes, keepdims=True)
    return grad


def attention_backward(
    q, k, v, grad_out, *, alpha: float = 0.5, mask=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Analytic gradients of a scalar loss through out = softmax(q kᵀ · c) v, c = d_k**-alpha.

    With P the attention weights and G = ∂L/∂out::

        ∂L/∂v = Pᵀ G
        ∂L/∂P = G vᵀ
        ∂L/∂z = P ∘ (∂L/∂P − rowsum(P ∘ ∂L/∂P))     # softmax Jacobian, row by row
        ∂L/∂q = c (∂L/∂z) k
        ∂L/∂k = c (∂L/∂z)ᵀ q

    Parameters
    ----------
    q : array_like, shape (..., n_q, d_k)
    k : array_like, shape (..., n_k, d_k)
    v : array_like, shape (..., n_k, d_v)
    grad_out : array_like, shape (..., n_q, d_v)
        ∂L/∂out, broadcastable to the output's shape.
    alpha : float
        Scaling exponent in [0, 4].
    mask : array_like of bool, optional
        As in :func:`scaled_dot_product_attention`; masked entries get no
        gradient.

    Returns
    -------
    grad_q : ndarray, shape of q
    grad_k : ndarray, shape of k
    grad_v : ndarray, shape of v
        Gradients summed over any batch dimension that was broadcast.

    Raises
    ------
    ValueError
        As :func:`scaled_dot_product_attention`, or if grad_out does not
        broadcast to the output's shape.

    References
    ----------
    Vaswani et al. 2017, eq. (1); the factor c is why a saturated softmax
    (§3.2.1 footnote 4) passes almost no gradient to q and k.
    """
    q_arr = _as_matrix_stack("q", q)
    k_arr = _as_matrix_stack("k", k)
    v_arr = _as_matrix_stack("v", v)
    weights = _masked_weights(q_arr, k_arr, v_arr, alpha, mask)  # (..., n_q, n_k)
    batch = np.broadcast_shapes(weights.shape[:-2], v_arr.shape[:-2])
    out_shape = (*batch, weights.shape[-2], v_arr.shape[-1])
    g = check_finite("grad_out", grad_out)
    try:
        g = np.broadcast_to(g, out_shape)
    except ValueError as exc:
        raise ValueError(
            f"grad_out of shape {g.shape} does not broadcast to the output's shape {out_shape}"
        ) from exc
    c = float(q_arr.shape[-1]) ** -check_alpha(alpha)

    grad_v = np.swapaxes(weights, -1, -2) @ g  # (..., n_k, d_v)
    grad_p = g @ np.swapaxes(v_arr, -1, -2)  # (..., n_q, n_k)
    grad_z = weights * (grad_p - np.sum(weights * grad_p, axis=-1, keepdims=True))
    grad_s = c * grad_z  # (..., n_q, n_k), gradient w.r.t. raw scores q kᵀ
    grad_q = grad_s @ k_arr  # (..., n_q, d_k)
    grad_k = np.swapaxes(grad_s, -1, -2) @ q_arr  # (..., n_k, d_k)
    return (
        _sum_to_shape(grad_q, q_arr.shape),
        _sum_to_shape(grad_k, k_arr.shape),
        _sum_to_shape(grad_v, v_arr.shape),
    )
