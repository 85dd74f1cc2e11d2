"""Which d goes in √d? Projections, multi-head splits and QK LayerNorm.

Shapes::

    x            (n_tokens, d_model)         token representations
    w_q, w_k     (d_model, n_heads * d_k)    projections (all heads side by side)
    q_h, k_h     (n_heads, n_tokens, d_k)    per-head queries and keys
    logits       (n_heads, n_tokens, n_tokens) = q_h k_hᵀ / divisor

The score of one head sums d_k products, so its variance grows with d_k (the
per-head width), not with d_model: the Transformer divides by √d_k.

References
----------
Vaswani et al. 2017, *Attention Is All You Need*, §3.2.1–3.2.2 (d_k = d_model/h).
Dehghani et al. 2023, *Scaling Vision Transformers to 22 Billion Parameters*
(LayerNorm on q and k keeps attention logits bounded).
"""

from __future__ import annotations

import numpy as np

from core.softmax import softmax
from core.validation import check_finite, check_int, check_positive, check_rng

__all__ = [
    "cross_attention_logits",
    "init_projection",
    "layer_norm",
    "multi_head_logits",
    "projected_score_variance",
    "split_heads",
]


def _matrix(name: str, a: object) -> np.ndarray:
    arr = check_finite(name, a)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got shape {arr.shape}")
    return arr


#: LayerNorm's default eps (PyTorch's ``nn.LayerNorm``).
LAYER_NORM_EPS = 1e-5


def layer_norm(x, axis: int = -1, eps: float = LAYER_NORM_EPS) -> np.ndarray:
    """LayerNorm without affine parameters: (x − mean) / sqrt(var + eps) along ``axis``.

    Parameters
    ----------
    x : array_like, shape (..., d, ...)
    axis : int
        Axis normalised (the feature axis, e.g. d_k for QK LayerNorm).
    eps : float
        Positive constant added to the variance.

    Returns
    -------
    ndarray, same shape as ``x``
        Zero mean and (for var ≫ eps) unit variance along ``axis``, so
        ‖x‖² ≈ d and a dot product of two normalised vectors is at most d.

    Raises
    ------
    ValueError
        If ``x`` contains NaN/inf or ``eps`` is not positive.

    References
    ----------
    Dehghani et al. 2023 (QK LayerNorm).
    """
    arr = check_finite("x", x)
    eps = check_positive("eps", eps)
    centred = arr - arr.mean(axis=axis, keepdims=True)
    var = np.mean(centred * centred, axis=axis, keepdims=True)
    return centred / np.sqrt(var + eps)


def init_projection(
    d_model: int, d_out: int, *, rng: np.random.Generator, std: float | None = None
) -> np.ndarray:
    """Random projection matrix with iid N(0, std²) entries.

    Parameters
    ----------
    d_model : int
        Input width (rows), in [1, 65536].
    d_out : int
        Output width (columns), in [1, 65536].
    rng : numpy.random.Generator
    std : float, optional
        Entry standard deviation; default 1/√d_model (fan-in scaling, which
        keeps x W at the scale of x).

    Returns
    -------
    ndarray, shape (d_model, d_out)

    Raises
    ------
    ValueError
        On an out-of-range argument (the message names it).

    References
    ----------
    LeCun, Bottou, Orr & Müller 1998, *Efficient BackProp*, §4.6 (fan-in scaling).
    """
    check_rng("rng", rng)
    d_model = check_int("d_model", d_model, 1, 65536)
    d_out = check_int("d_out", d_out, 1, 65536)
    sigma = d_model**-0.5 if std is None else check_positive("std", std)
    return rng.normal(0.0, sigma, size=(d_model, d_out))


def split_heads(a, n_heads: int) -> np.ndarray:
    """Reshape (n_tokens, n_heads * d_k) -> (n_heads, n_tokens, d_k), heads as column blocks.

    Parameters
    ----------
    a : array_like, shape (n_tokens, n_heads * d_k)
        Projections of every head side by side (head h in columns h·d_k … (h+1)·d_k − 1).
    n_heads : int
        Number of heads (>= 1).

    Returns
    -------
    ndarray, shape (n_heads, n_tokens, d_k)
        A view of ``a`` when possible.

    Raises
    ------
    ValueError
        If ``a`` is not a finite 2-D array or n_heads does not divide its width.

    References
    ----------
    Vaswani et al. 2017, §3.2.2 (multi-head attention).
    """
    a = _matrix("a", a)
    n_heads = check_int("n_heads", n_heads, 1)
    n_tokens, width = a.shape
    if width % n_heads:
        raise ValueError(f"n_heads must divide the width: a has shape {a.shape}, n_heads={n_heads}")
    return a.reshape(n_tokens, n_heads, width // n_heads).transpose(1, 0, 2)


def multi_head_logits(
    x, w_q, w_k, n_heads: int, *, divisor: float, qk_layernorm: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Per-head attention logits and weights for self-attention.

    Parameters
    ----------
    x : array_like, shape (n_tokens, d_model)
    w_q, w_k : array_like, shape (d_model, n_heads * d_k)
        Query and key projections; head h uses columns h·d_k … (h+1)·d_k − 1.
    n_heads : int
        Number of heads; must divide the projection width.
    divisor : float
        Positive number the scores are divided by (√d_k is the Transformer's
        choice; √d_model shows the wrong one).
    qk_layernorm : bool
        Apply :func:`layer_norm` to each head's q and k (over d_k) before the
        dot product (Dehghani et al. 2023).

    Returns
    -------
    logits : ndarray, shape (n_heads, n_tokens, n_tokens)
        q_h k_hᵀ / divisor.
    weights : ndarray, shape (n_heads, n_tokens, n_tokens)
        softmax over the last axis.

    Raises
    ------
    ValueError
        If a shape does not fit (the message gives both shapes), n_heads does
        not divide the projection width, or divisor is not positive.

    References
    ----------
    Vaswani et al. 2017, §3.2.2; Dehghani et al. 2023.
    """
    x_arr = _matrix("x", x)
    wq = _matrix("w_q", w_q)
    wk = _matrix("w_k", w_k)
    n_heads = check_int("n_heads", n_heads, 1, 4096)
    divisor = check_positive("divisor", divisor)
    if wq.shape[0] != x_arr.shape[1]:
        raise ValueError(
            f"w_q must have d_model rows: x has shape {x_arr.shape}, w_q has shape {wq.shape}"
        )
    if wk.shape != wq.shape:
        raise ValueError(f"w_q and w_k must have the same shape: w_q {wq.shape}, w_k {wk.shape}")
    if wq.shape[1] % n_heads:
        raise ValueError(
            f"n_heads must divide the projection width: w_q has shape {wq.shape}, n_heads={n_heads}"
        )
    q = split_heads(x_arr @ wq, n_heads)  # (n_heads, n_tokens, d_k)
    k = split_heads(x_arr @ wk, n_heads)
    if qk_layernorm:
        q, k = layer_norm(q), layer_norm(k)
    logits = q @ k.transpose(0, 2, 1) / divisor  # (n_heads, n_tokens, n_tokens)
    return logits, softmax(logits, axis=-1)


def cross_attention_logits(x_q, x_kv, w_q, w_k, *, divisor: float) -> tuple[np.ndarray, np.ndarray]:
    """Cross-attention logits: queries and keys come from inputs of different widths.

    Parameters
    ----------
    x_q : array_like, shape (n_q, d_q)
    x_kv : array_like, shape (n_kv, d_kv)
    w_q : array_like, shape (d_q, d_k)
    w_k : array_like, shape (d_kv, d_k)
    divisor : float
        Positive; √d_k (the shared projection width) is the right choice,
        whatever d_q and d_kv are.

    Returns
    -------
    logits : ndarray, shape (n_q, n_kv)
    weights : ndarray, shape (n_q, n_kv)

    Raises
    ------
    ValueError
        If a shape does not fit (the message gives both shapes) or divisor is
        not positive.

    References
    ----------
    Vaswani et al. 2017, §3.2.1 and §3.2.3 (encoder–decoder attention).
    """
    xq = _matrix("x_q", x_q)
    xkv = _matrix("x_kv", x_kv)
    wq = _matrix("w_q", w_q)
    wk = _matrix("w_k", w_k)
    divisor = check_positive("divisor", divisor)
    if wq.shape[0] != xq.shape[1]:
        raise ValueError(
            f"w_q must have d_q rows: x_q has shape {xq.shape}, w_q has shape {wq.shape}"
        )
    if wk.shape[0] != xkv.shape[1]:
        raise ValueError(
            f"w_k must have d_kv rows: x_kv has shape {xkv.shape}, w_k has shape {wk.shape}"
        )
    if wq.shape[1] != wk.shape[1]:
        raise ValueError(f"w_q and w_k must share d_k columns: w_q {wq.shape}, w_k {wk.shape}")
    logits = (xq @ wq) @ (xkv @ wk).T / divisor  # (n_q, n_kv)
    return logits, softmax(logits, axis=-1)


def projected_score_variance(
    d_k: int, d_model: int, sigma_w: float, sigma_x: float, *, same_token: bool = False
) -> float:
    """Variance of a projected score q·k, q = x W_q, k = x' W_k.

    Model: x, x' ∈ R^{d_model} with iid N(0, sigma_x²) entries; W_q, W_k
    independent with iid N(0, sigma_w²) entries, shape (d_model, d_k). Each
    coordinate of q has variance d_model sigma_w² sigma_x², coordinates are
    uncorrelated and q, k are independent when x and x' are different
    (independent) tokens, so

        Var(q·k) = d_k (d_model sigma_w² sigma_x²)²      (tokens i ≠ j).

    For the same token (x' = x, the diagonal of the logits matrix) the shared
    x adds fourth moments: Var = d_k (d_model sigma_w² sigma_x²)² (1 + 2/d_model)
    for Gaussian x.

    Parameters
    ----------
    d_k : int
        Per-head projection width (≥ 1).
    d_model : int
        Input width (≥ 1).
    sigma_w, sigma_x : float
        Positive standard deviations of the weights and of the inputs.
    same_token : bool
        True for q and k computed from the same token.

    Returns
    -------
    float
        With fan-in init sigma_w = 1/√d_model and sigma_x = 1: exactly d_k —
        the √d_k divisor restores unit variance.

    Raises
    ------
    ValueError
        On an out-of-range argument (the message names it).

    References
    ----------
    Vaswani et al. 2017, §3.2.1 footnote 4 (the same count, one level down).
    """
    d_k = check_int("d_k", d_k, 1)
    d_model = check_int("d_model", d_model, 1)
    sigma_w = check_positive("sigma_w", sigma_w)
    sigma_x = check_positive("sigma_x", sigma_x)
    variance = d_k * (d_model * sigma_w**2 * sigma_x**2) ** 2
    return variance * (1.0 + 2.0 / d_model) if same_token else variance
