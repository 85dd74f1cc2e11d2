"""Which d goes in √d? Fast projected attention, divisors, initialisations, QK LayerNorm.

The page compares divisors of the same scores, so it needs projected queries and keys
q = x W_q, k = x W_k for widths up to d_model = 4096. Drawing W (d_model, width) costs
d_model·width normals; this module draws the projections *exactly in distribution*
for O(n_tokens·width) normals instead:

    W iid N(0, σ²)  ⇒  given x, every column of x W is N(0, σ² x xᵀ)
    ⇒  x W  =_d  R Z,   R = (x xᵀ)^½ (n_tokens, n_tokens),  Z iid N(0, σ²) (n_tokens, width)

Columns of x W_q and x W_k are independent given x, so (q, k) =_d (R Z_q, R Z_k).
:func:`core.heads.multi_head_logits` and :func:`core.heads.cross_attention_logits`
then run unchanged with R in the place of x and Z in the place of W.

Shapes::

    x           (n_tokens, d_model)              token representations
    r           (n_tokens, n_tokens)             principal square root of x xᵀ
    q, k        (n_tokens, n_heads * d_k)        projections, heads side by side
    logits      (n_heads, n_tokens, n_tokens)

References
----------
Vaswani et al. 2017, *Attention Is All You Need*, §3.2.1–3.2.3.
Dehghani et al. 2023, *Scaling Vision Transformers to 22 Billion Parameters* (QK LayerNorm).
"""

from __future__ import annotations

import math

import numpy as np

from core.attention import attention_weights
from core.heads import (
    LAYER_NORM_EPS,
    cross_attention_logits,
    multi_head_logits,
    split_heads,
)
from core.softmax import softmax_entropy
from core.validation import check_choice, check_finite, check_int, check_real, check_rng

__all__ = [
    "DIVISORS_CROSS",
    "DIVISORS_SELF",
    "INITS",
    "divisor_value",
    "divisors",
    "gram_root",
    "head_statistics",
    "init_stds",
    "input_scale_sweep",
    "layernorm_logit_std",
    "projected_cross_attention_logits",
    "projected_multi_head_logits",
    "projected_qk",
    "quarter_scaling_gap",
    "score_variance",
]

#: Projection initialisations: fan-in std 1/√d_in, std 1, or W_q = 0 (W_k fan-in).
INITS = ("fan_in", "one", "zero_q")
#: Divisors of multi-head self-attention: per-head √d_k, √d_model, none (1).
DIVISORS_SELF = ("d_k", "d_model", "none")
#: Divisors of cross-attention: √d_k (projection), √(query feature size), √(key feature size).
DIVISORS_CROSS = ("d_k", "d_q", "d_kv")


def _matrix(name: str, a: object) -> np.ndarray:
    arr = check_finite(name, a)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got shape {arr.shape}")
    return arr


def _std(name: str, value: float | None, d_in: int) -> float:
    if value is None:
        return d_in**-0.5
    return check_real(name, value, 0.0)


def divisors(n: int) -> list[int]:
    """The positive divisors of ``n`` in increasing order (the possible n_heads of d_model = n).

    Parameters
    ----------
    n : int
        In [1, 2**31 − 1].

    Returns
    -------
    list of int
        Starts with 1, ends with n.

    Raises
    ------
    ValueError
        If ``n`` is not an integer in [1, 2**31 − 1].
    """
    n = check_int("n", n, 1, 2**31 - 1)
    small = [i for i in range(1, math.isqrt(n) + 1) if n % i == 0]
    return sorted(set(small) | {n // i for i in small})


def init_stds(init: str, d_q: int, d_kv: int) -> tuple[float, float]:
    """Entry standard deviations (σ_wq, σ_wk) of W_q (d_q rows) and W_k (d_kv rows).

    Parameters
    ----------
    init : {"fan_in", "one", "zero_q"}
        ``fan_in``: σ = 1/√(rows) for both (keeps x W at the scale of x);
        ``one``: σ = 1 for both; ``zero_q``: W_q = 0, W_k fan-in.
    d_q, d_kv : int
        Input widths of the query and key projections (both d_model in self-attention).

    Returns
    -------
    (sigma_wq, sigma_wk) : tuple of float
        Weight standard deviations, ≥ 0.

    Raises
    ------
    ValueError
        On an unknown ``init`` or a width outside [1, 65536].

    References
    ----------
    LeCun et al. 1998, *Efficient BackProp*, §4.6 (fan-in).
    """
    init = check_choice("init", init, INITS)
    d_q = check_int("d_q", d_q, 1, 65536)
    d_kv = check_int("d_kv", d_kv, 1, 65536)
    if init == "one":
        return 1.0, 1.0
    return (0.0 if init == "zero_q" else d_q**-0.5), d_kv**-0.5


def score_variance(
    d_k: int, d_q: int, d_kv: int, sigma_wq: float, sigma_wk: float, sigma_x: float = 1.0
) -> float:
    """Var(q·k) for q = x_q W_q, k = x_kv W_k with independent Gaussian x and W.

    Each coordinate of q has variance d_q σ_wq² σ_x², each of k d_kv σ_wk² σ_x²; the
    d_k coordinates are uncorrelated and q, k independent (different tokens), so

        Var(q·k) = d_k · (d_q σ_wq² σ_x²) · (d_kv σ_wk² σ_x²).

    With d_q = d_kv = d_model and σ_wq = σ_wk this is
    :func:`core.heads.projected_score_variance`; a zero σ (W_q = 0) gives 0.

    Parameters
    ----------
    d_k : int
        Projection width per head (≥ 1).
    d_q, d_kv : int
        Query and key input widths (≥ 1).
    sigma_wq, sigma_wk : float
        Weight standard deviations (≥ 0).
    sigma_x : float
        Input standard deviation (≥ 0).

    Returns
    -------
    float
        In squared units of the score; d_k for fan-in weights and unit inputs.

    Raises
    ------
    ValueError
        On an out-of-range argument (the message names it).

    References
    ----------
    docs/mathematics.md §7; Vaswani et al. 2017, §3.2.1 footnote 4.
    """
    d_k = check_int("d_k", d_k, 1)
    d_q = check_int("d_q", d_q, 1)
    d_kv = check_int("d_kv", d_kv, 1)
    sigma_wq = check_real("sigma_wq", sigma_wq, 0.0)
    sigma_wk = check_real("sigma_wk", sigma_wk, 0.0)
    sigma_x = check_real("sigma_x", sigma_x, 0.0)
    return d_k * (d_q * sigma_wq**2 * sigma_x**2) * (d_kv * sigma_wk**2 * sigma_x**2)


def divisor_value(divisor: str, *, d_k: int, d_q: int, d_kv: int) -> float:
    """The number a divisor name stands for: √d_k, √d_q (= √d_model), √d_kv, or 1 (``none``).

    ``d_model`` is an alias of ``d_q`` (self-attention: d_q = d_kv = d_model).

    Parameters
    ----------
    divisor : {"d_k", "d_model", "d_q", "d_kv", "none"}
    d_k, d_q, d_kv : int
        Widths (>= 1).

    Returns
    -------
    float
        The positive number the scores are divided by.

    Raises
    ------
    ValueError
        On an unknown divisor name or a non-positive width.

    References
    ----------
    Vaswani et al. 2017, §3.2.1–3.2.3 (√d_k, whatever d_q and d_kv are).
    """
    divisor = check_choice("divisor", divisor, ("d_k", "d_model", "d_q", "d_kv", "none"))
    widths = {
        "d_k": check_int("d_k", d_k, 1),
        "d_q": check_int("d_q", d_q, 1),
        "d_kv": check_int("d_kv", d_kv, 1),
    }
    widths["d_model"] = widths["d_q"]
    return 1.0 if divisor == "none" else math.sqrt(widths[divisor])


def gram_root(x) -> np.ndarray:
    """The principal square root R of x xᵀ: symmetric, positive semidefinite, R Rᵀ = x xᵀ.

    Parameters
    ----------
    x : array_like, shape (n_tokens, d_model)

    Returns
    -------
    ndarray, shape (n_tokens, n_tokens)
        Unique, so ``gram_root(c * x) == |c| * gram_root(x)`` up to rounding.

    Raises
    ------
    ValueError
        If ``x`` is not a finite 2-D array with at least one row.

    References
    ----------
    Horn & Johnson 2013, *Matrix Analysis*, 2nd ed., Thm 7.2.6 (the unique positive
    semidefinite square root).
    """
    arr = _matrix("x", x)
    if arr.shape[0] == 0:
        raise ValueError(f"x must have at least one row (token), got shape {arr.shape}")
    gram = arr @ arr.T  # (n_tokens, n_tokens)
    eigval, eigvec = np.linalg.eigh(gram)
    # eigenvalues at rounding level are zeros (rank < n_tokens when d_model < n_tokens);
    # dropping them keeps the root continuous in x: sqrt would amplify the rounding noise
    floor = gram.shape[0] * np.finfo(gram.dtype).eps * max(float(eigval[-1]), 0.0)
    root = (eigvec * np.sqrt(np.where(eigval > floor, eigval, 0.0))) @ eigvec.T
    return 0.5 * (root + root.T)


def _draw(x, width: int, rng, sigma_wq, sigma_wk) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    arr = _matrix("x", x)
    check_rng("rng", rng)
    width = check_int("width", width, 1, 65536)
    d_model = arr.shape[1]
    sq, sk = _std("sigma_wq", sigma_wq, d_model), _std("sigma_wk", sigma_wk, d_model)
    n_tokens = arr.shape[0]
    z_q = sq * rng.standard_normal((n_tokens, width))
    z_k = sk * rng.standard_normal((n_tokens, width))
    return gram_root(arr), z_q, z_k


def projected_qk(
    x, width: int, *, rng: np.random.Generator, sigma_wq=None, sigma_wk=None
) -> tuple[np.ndarray, np.ndarray]:
    """Queries and keys (x W_q, x W_k), W iid N(0, σ²) of shape (d_model, width), exactly in law.

    Parameters
    ----------
    x : array_like, shape (n_tokens, d_model)
    width : int
        Projection width n_heads·d_k, in [1, 65536].
    rng : numpy.random.Generator
    sigma_wq, sigma_wk : float, optional
        Entry standard deviations of W_q and W_k (≥ 0); default 1/√d_model.

    Returns
    -------
    q, k : ndarray, shape (n_tokens, width) each

    Raises
    ------
    ValueError
        On a bad argument (the message names it).

    Notes
    -----
    Costs 2·n_tokens·width normals and one n_tokens × n_tokens eigendecomposition,
    whatever d_model is (module docstring).

    References
    ----------
    The exact representation x W =_d (x xᵀ)^½ Z: module docstring.
    """
    root, z_q, z_k = _draw(x, width, rng, sigma_wq, sigma_wk)
    return root @ z_q, root @ z_k


def projected_multi_head_logits(
    x,
    n_heads: int,
    d_k: int,
    *,
    rng: np.random.Generator,
    divisor: float,
    sigma_wq=None,
    sigma_wk=None,
    qk_layernorm: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`core.heads.multi_head_logits` with freshly drawn Gaussian projections, fast.

    Equal in distribution to ``multi_head_logits(x, W_q, W_k, n_heads, ...)`` with W_q,
    W_k of shape (d_model, n_heads·d_k) and iid N(0, σ²) entries: it calls that function
    with R = (x xᵀ)^½ as the input and Z (n_tokens, n_heads·d_k) as the weights.
    n_heads may be fewer than a layer's heads: heads are exchangeable, so the first
    n_heads of a wider layer have this law too.

    Parameters
    ----------
    x : array_like, shape (n_tokens, d_model)
    n_heads, d_k : int
        Heads computed and the width of each.
    rng : numpy.random.Generator
    divisor : float
        Positive number the scores are divided by.
    sigma_wq, sigma_wk : float, optional
        Weight standard deviations (≥ 0); default 1/√d_model (fan-in).
    qk_layernorm : bool
        LayerNorm each head's q and k over d_k first.

    Returns
    -------
    logits, weights : ndarray, shape (n_heads, n_tokens, n_tokens) each

    Raises
    ------
    ValueError
        On a bad argument (the message names it).

    References
    ----------
    Vaswani et al. 2017, §3.2.2; Dehghani et al. 2023.
    """
    n_heads = check_int("n_heads", n_heads, 1, 4096)
    d_k = check_int("d_k", d_k, 1, 65536)
    root, z_q, z_k = _draw(x, n_heads * d_k, rng, sigma_wq, sigma_wk)
    return multi_head_logits(root, z_q, z_k, n_heads, divisor=divisor, qk_layernorm=qk_layernorm)


def projected_cross_attention_logits(
    x_q,
    x_kv,
    n_heads: int,
    d_k: int,
    *,
    rng: np.random.Generator,
    divisor: float,
    sigma_wq=None,
    sigma_wk=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head cross-attention logits with fresh Gaussian projections, exactly in law.

    Head h equals in distribution ``cross_attention_logits(x_q, x_kv, W_q^h, W_k^h)``
    with W_q^h (d_q, d_k) and W_k^h (d_kv, d_k) iid N(0, σ²); each head calls that
    function with the Gram roots of x_q and x_kv as inputs.

    Parameters
    ----------
    x_q : array_like, shape (n_q, d_q)
    x_kv : array_like, shape (n_kv, d_kv)
    n_heads, d_k : int
        Heads and the projection width of each.
    rng : numpy.random.Generator
    divisor : float
        Positive; √d_k is right whatever d_q and d_kv are.
    sigma_wq, sigma_wk : float, optional
        Weight standard deviations (≥ 0); default fan-in 1/√d_q and 1/√d_kv.

    Returns
    -------
    logits, weights : ndarray, shape (n_heads, n_q, n_kv) each

    Raises
    ------
    ValueError
        On a bad argument (the message names it).

    References
    ----------
    Vaswani et al. 2017, §3.2.3 (encoder–decoder attention).
    """
    xq, xkv = _matrix("x_q", x_q), _matrix("x_kv", x_kv)
    check_rng("rng", rng)
    n_heads = check_int("n_heads", n_heads, 1, 4096)
    d_k = check_int("d_k", d_k, 1, 65536)
    sq = _std("sigma_wq", sigma_wq, xq.shape[1])
    sk = _std("sigma_wk", sigma_wk, xkv.shape[1])
    root_q, root_kv = gram_root(xq), gram_root(xkv)
    z_q = sq * rng.standard_normal((n_heads, xq.shape[0], d_k))
    z_k = sk * rng.standard_normal((n_heads, xkv.shape[0], d_k))
    heads = [
        cross_attention_logits(root_q, root_kv, z_q[h], z_k[h], divisor=divisor)
        for h in range(n_heads)
    ]
    return np.stack([h[0] for h in heads]), np.stack([h[1] for h in heads])


def head_statistics(logits) -> dict[str, np.ndarray]:
    """Per-head logit spread and what softmax makes of it.

    Parameters
    ----------
    logits : array_like, shape (n_heads, n_q, n_k)

    Returns
    -------
    dict of ndarray, shape (n_heads,) each
        ``std``: standard deviation of all the head's logits; ``entropy``: mean over
        query rows of H(softmax(row)) in nats (ln n_k for uniform rows);
        ``max_weight``: mean over rows of the largest attention weight.

    Raises
    ------
    ValueError
        If ``logits`` is not a finite 3-D array.

    References
    ----------
    Zhai et al. 2023 (per-head attention entropy).
    """
    arr = check_finite("logits", logits)
    if arr.ndim != 3:
        raise ValueError(f"logits must have shape (n_heads, n_q, n_k), got {arr.shape}")
    # one exp pass: with gaps g = max − z ≥ 0 and S = Σ e^{−g}, p_max = 1/S and
    # H = ln S + Σ e^{−g} g / S (as core.softmax.softmax_entropy, exact when saturated)
    gaps = arr.max(axis=-1, keepdims=True) - arr  # (n_heads, n_q, n_k)
    e = np.exp(-gaps)
    total = e.sum(axis=-1)  # (n_heads, n_q), ≥ 1
    entropy = np.log(total) + np.einsum("hqk,hqk->hq", e, gaps) / total
    return {
        "std": arr.std(axis=(1, 2)),
        "entropy": entropy.mean(axis=1),
        "max_weight": (1.0 / total).mean(axis=1),
    }


def quarter_scaling_gap(q, k) -> float:
    """max |softmax((q d_k^-¼)(k d_k^-¼)ᵀ) − softmax(q kᵀ / √d_k)| — zero up to rounding.

    Parameters
    ----------
    q : array_like, shape (..., n_q, d_k)
    k : array_like, shape (..., n_k, d_k)

    Returns
    -------
    float
        Of the order of machine epsilon (≈ 1e-16): where the factor goes does not
        change the weights.

    Raises
    ------
    ValueError
        As :func:`core.attention.attention_weights`.

    References
    ----------
    Vaswani et al. 2017, eq. (1): (q c)(k c)ᵀ = c² q kᵀ, so c = d_k^-¼ on each side is
    1/√d_k on the product.
    """
    q_arr = check_finite("q", q)
    k_arr = check_finite("k", k)
    d_k = q_arr.shape[-1]
    quarter = float(d_k) ** -0.25
    split = attention_weights(q_arr * quarter, k_arr * quarter, alpha=0.0)
    whole = attention_weights(q_arr, k_arr, alpha=0.5)
    return float(np.max(np.abs(split - whole)))


def layernorm_logit_std(d_k: int) -> float:
    """Standard deviation of LN(q)·LN(k)/√d_k for independent, isotropic q and k.

    LayerNorm without gain (eps → 0) maps a vector of d_k numbers to one with mean 0 and
    squared norm d_k: a point of the sphere of radius √d_k in the (d_k − 1)-dimensional
    subspace orthogonal to (1, …, 1). For isotropic q, LN(q) is uniform on it, so
    E[LN(q) LN(q)ᵀ] = d_k/(d_k − 1) · (I − 11ᵀ/d_k), and for independent q and k
    E[(LN(q)·LN(k))²] = d_k²/(d_k − 1). Hence std = √(d_k/(d_k − 1)): √2 at d_k = 2
    (every logit is ±√2), 1.0079 at d_k = 64, → 1 as d_k grows.

    Parameters
    ----------
    d_k : int
        Head width, ≥ 2.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``d_k`` is not an integer ≥ 2 (over one dimension LayerNorm maps every vector
        to 0, and every logit is 0).

    References
    ----------
    docs/mathematics.md §7; Dehghani et al. 2023 (QK LayerNorm).
    """
    d_k = check_int("d_k", d_k, 2)
    return math.sqrt(d_k / (d_k - 1))


#: Logits per block of scales in :func:`input_scale_sweep` (2²¹ float64: 16 MB).
_SWEEP_BLOCK = 2**21


def input_scale_sweep(
    x, n_heads: int, d_k: int, scales, *, rng: np.random.Generator, divisor: float
) -> dict[str, np.ndarray]:
    """Logit std and entropy when the input x is multiplied by each scale, with and without
    QK LayerNorm, for one draw of fan-in projections.

    Projections are linear, so (s x) W = s (x W): q and k are drawn once
    (:func:`projected_qk`) and scaled. Without normalisation the logits grow like s²
    (their variance like s⁴); LayerNorm over d_k removes s from q and k (up to its eps).

    Parameters
    ----------
    x : array_like, shape (n_tokens, d_model)
    n_heads, d_k : int
        Heads computed and the width of each.
    scales : array_like, shape (n_scales,)
        Positive input scales s.
    rng : numpy.random.Generator
    divisor : float
        Positive divisor of the scores (√d_k on the page).

    Returns
    -------
    dict of ndarray
        ``scale`` (n_scales,); ``std_raw``, ``std_ln``, ``entropy_raw``, ``entropy_ln``
        (n_scales,): logit std over all heads' logits and mean row entropy (nats).

    Raises
    ------
    ValueError
        On a bad argument (the message names it).

    References
    ----------
    Dehghani et al. 2023; Wortsman et al. 2023 (attention logit growth).
    """
    n_heads = check_int("n_heads", n_heads, 1, 4096)
    d_k = check_int("d_k", d_k, 1, 65536)
    s = check_finite("scales", scales).ravel()
    if s.size == 0 or np.any(s <= 0):
        raise ValueError(f"scales must be positive and non-empty, got {s.tolist()}")
    divisor = check_real("divisor", divisor, 0.0, lo_open=True)
    q, k = projected_qk(x, n_heads * d_k, rng=rng)
    q_h, k_h = split_heads(q, n_heads), split_heads(k, n_heads)  # (n_heads, n_tokens, d_k)
    base = q_h @ k_h.transpose(0, 2, 1) / divisor  # logits at s = 1
    # LayerNorm of s·q over d_k (core.heads.layer_norm, eps = LAYER_NORM_EPS) is
    # (q − mean q)·s/√(s² var q + eps): one product of the centred q and k, scaled per
    # row and column, gives the normalised logits at every s, a block of scales at once
    cq, ck = q_h - q_h.mean(-1, keepdims=True), k_h - k_h.mean(-1, keepdims=True)
    centred = cq @ ck.transpose(0, 2, 1) / divisor
    var_q, var_k = np.mean(cq * cq, axis=-1), np.mean(ck * ck, axis=-1)  # (n_heads, n_tokens)
    out = {key: np.empty(s.size) for key in ("std_raw", "std_ln", "entropy_raw", "entropy_ln")}
    block = max(1, _SWEEP_BLOCK // base.size)  # scales per block: memory stays bounded
    for lo in range(0, s.size, block):
        col = s[lo : lo + block, None, None]  # (b, 1, 1)
        f_q = col / np.sqrt(col**2 * var_q + LAYER_NORM_EPS)  # (b, n_heads, n_tokens)
        f_k = col / np.sqrt(col**2 * var_k + LAYER_NORM_EPS)
        raw = col[..., None] ** 2 * base  # (b, n_heads, n_tokens, n_tokens)
        normed = centred * f_q[..., :, None] * f_k[..., None, :]
        part = slice(lo, lo + col.shape[0])
        out["std_raw"][part] = raw.reshape(col.shape[0], -1).std(axis=1)
        out["std_ln"][part] = normed.reshape(col.shape[0], -1).std(axis=1)
        out["entropy_raw"][part] = softmax_entropy(raw, axis=-1).mean(axis=(1, 2))
        out["entropy_ln"][part] = softmax_entropy(normed, axis=-1).mean(axis=(1, 2))
    return {"scale": s, **out}
