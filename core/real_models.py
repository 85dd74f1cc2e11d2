"""What trained attention heads do with the scale: summaries of real attention logits.

The data are the logits z = q·k/√d_k of a trained encoder (all-MiniLM-L6-v2, written
by ``scripts/extract_attention.py``), per sentence, layer and head. A counterfactual
divisor c applied to the same q and k gives the logits q·k/c = z·√d_k/c: c = 1 (no
division) multiplies the trained logits by √d_k, c = √d_k leaves them as trained, and
c = d_k divides them by √d_k. The weights were trained *with* √d_k, so the other two are
what the same q and k would do, not what a model trained otherwise would learn.

Shapes::

    logits      (n_layers, n_heads, T, T)     one sentence: rows queries, columns keys
    multipliers (M,)                          √d_k / c for each counterfactual divisor c

References
----------
Vaswani et al. 2017, *Attention Is All You Need*, §3.2.1 (the 1/√d_k factor).
Zhai et al. 2023, *Stabilizing Transformer Training by Preventing Attention Entropy
Collapse* (per-head attention entropy as a health measure). arXiv:2303.06296.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from core.softmax import softmax, softmax_entropy
from core.validation import check_choice, check_finite, check_positive_int, check_real

__all__ = [
    "COLLAPSE_NATS",
    "DIVISORS",
    "collapsed_share",
    "corpus_summaries",
    "divisor_value",
    "head_attention",
    "head_summaries",
    "logit_multiplier",
    "pooled_histogram",
    "split_logits",
    "standard_normal_pdf",
]

#: Counterfactual divisors of q·k, in display order: none, √d_k (as trained), d_k.
DIVISORS = ("none", "sqrt_d_k", "d_k")

#: A head whose mean row entropy is below this many nats puts (almost) all of each
#: query's weight on one key: it has collapsed.
COLLAPSE_NATS = 0.1


def divisor_value(name: str, d_k: int) -> float:
    """The divisor c of q·k named ``name``: 1, √d_k or d_k.

    Parameters
    ----------
    name : {"none", "sqrt_d_k", "d_k"}
    d_k : int
        Head width (>= 1).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``name`` is not one of :data:`DIVISORS` or d_k < 1.

    References
    ----------
    Vaswani et al. 2017, §3.2.1 (√d_k); Yang et al. 2022 (d_k).
    """
    check_choice("divisor", name, DIVISORS)
    d_k = check_positive_int("d_k", d_k)
    return {"none": 1.0, "sqrt_d_k": math.sqrt(d_k), "d_k": float(d_k)}[name]


def logit_multiplier(name: str, d_k: int) -> float:
    """√d_k / c: what turns the trained logits q·k/√d_k into q·k/c.

    Parameters
    ----------
    name : {"none", "sqrt_d_k", "d_k"}
        The counterfactual divisor c (:func:`divisor_value`).
    d_k : int
        Head width (>= 1).

    Returns
    -------
    float
        √d_k for no division, 1 for √d_k (as trained), 1/√d_k for d_k.

    Raises
    ------
    ValueError
        As :func:`divisor_value`.
    """
    return math.sqrt(check_positive_int("d_k", d_k)) / divisor_value(name, d_k)


def split_logits(
    logits: np.ndarray,
    logit_offsets: np.ndarray,
    n_tokens: np.ndarray,
    n_layers: int,
    n_heads: int,
) -> list[np.ndarray]:
    """The flat logits of the data file as one float64 array per sentence.

    Parameters
    ----------
    logits : ndarray, shape (Σ_s n_layers·n_heads·T_s²,)
        All logits, sentence after sentence, each sentence's block in C order.
    logit_offsets : ndarray of int, shape (S + 1,)
        Sentence s occupies ``logits[logit_offsets[s]:logit_offsets[s + 1]]``.
    n_tokens : ndarray of int, shape (S,)
        T_s, tokens of sentence s.
    n_layers, n_heads : int

    Returns
    -------
    list of S ndarrays, shape (n_layers, n_heads, T_s, T_s), float64

    Raises
    ------
    ValueError
        If the offsets do not match the token counts or the length of ``logits``, or
        n_layers, n_heads are not positive integers.
    """
    n_layers = check_positive_int("n_layers", n_layers)
    n_heads = check_positive_int("n_heads", n_heads)
    flat = np.asarray(logits)
    offsets = np.asarray(logit_offsets, dtype=np.int64)
    tokens = np.asarray(n_tokens, dtype=np.int64)
    sizes = n_layers * n_heads * tokens**2
    if offsets.shape != (len(tokens) + 1,) or offsets[0] != 0:
        raise ValueError(
            f"logit_offsets must have S + 1 = {len(tokens) + 1} entries starting at 0, "
            f"got shape {offsets.shape}"
        )
    if not np.array_equal(np.diff(offsets), sizes) or offsets[-1] != flat.size:
        raise ValueError("logit_offsets must step by n_layers·n_heads·T_s² and end at len(logits)")
    return [
        flat[a:b].astype(np.float64).reshape(n_layers, n_heads, t, t)
        for a, b, t in zip(offsets[:-1], offsets[1:], tokens, strict=True)
    ]


def _multipliers(multipliers: Sequence[float]) -> np.ndarray:
    m = np.asarray(multipliers, dtype=np.float64).reshape(-1)
    if m.size == 0 or not np.all(np.isfinite(m)) or not np.all(m > 0):
        raise ValueError("multipliers must be a non-empty sequence of finite numbers > 0")
    return m


def head_summaries(logits: np.ndarray, multipliers: Sequence[float]) -> dict[str, np.ndarray]:
    """Per-head statistics of one sentence's logits, under each multiplier.

    Parameters
    ----------
    logits : ndarray, shape (..., T, T)
        Trained logits q·k/√d_k, rows queries, columns keys (e.g. (n_layers, n_heads, T, T)).
    multipliers : sequence of M floats > 0
        √d_k / c for each divisor c (:func:`logit_multiplier`).

    Returns
    -------
    dict of ndarrays
        ``mean``, ``std`` (shape (...)): mean and population std of the head's T² logits
        as given; ``entropy`` (shape (..., M)): mean over queries of the row entropy of
        softmax(multiplier · logits), in nats; ``max_weight`` (shape (..., M)): mean over
        queries of the row's largest weight.

    Raises
    ------
    ValueError
        If the last two axes are not square, the logits are not finite, or a multiplier
        is not a finite number > 0.

    References
    ----------
    Zhai et al. 2023 (per-head attention entropy); docs/mathematics.md §7.
    """
    z = check_finite("logits", logits)
    if z.ndim < 2 or z.shape[-1] != z.shape[-2] or z.shape[-1] < 1:
        raise ValueError(f"logits must have shape (..., T, T) with T ≥ 1, got {z.shape}")
    m = _multipliers(multipliers)
    scaled = m.reshape((-1,) + (1,) * z.ndim) * z  # (M, ..., T, T)
    entropy = softmax_entropy(scaled).mean(axis=-1)  # (M, ...)
    max_weight = softmax(scaled).max(axis=-1).mean(axis=-1)  # (M, ...)
    flat = z.reshape(*z.shape[:-2], -1)
    return {
        "mean": flat.mean(axis=-1),
        "std": flat.std(axis=-1),
        "entropy": np.moveaxis(entropy, 0, -1),
        "max_weight": np.moveaxis(max_weight, 0, -1),
    }


def corpus_summaries(
    sentences: Sequence[np.ndarray], multipliers: Sequence[float]
) -> dict[str, np.ndarray]:
    """:func:`head_summaries` of every sentence, stacked on a leading sentence axis.

    Parameters
    ----------
    sentences : sequence of S ndarrays, shape (n_layers, n_heads, T_s, T_s)
        T_s may differ between sentences (:func:`split_logits`).
    multipliers : sequence of M floats > 0

    Returns
    -------
    dict of ndarrays: ``mean``, ``std`` (S, n_layers, n_heads); ``entropy``,
    ``max_weight`` (S, n_layers, n_heads, M); ``n_tokens`` (S,).

    Raises
    ------
    ValueError
        If ``sentences`` is empty or the sentences differ in layers or heads.
    """
    if len(sentences) == 0:
        raise ValueError("sentences must hold at least one sentence")
    if len({s.shape[:-2] for s in sentences}) != 1:
        raise ValueError("every sentence must have the same (n_layers, n_heads)")
    per = [head_summaries(s, multipliers) for s in sentences]
    out = {key: np.stack([p[key] for p in per]) for key in per[0]}
    out["n_tokens"] = np.array([s.shape[-1] for s in sentences], dtype=np.int64)
    return out


def collapsed_share(entropy: np.ndarray, threshold: float = COLLAPSE_NATS) -> np.ndarray:
    """Share of (sentence, layer, head) cells whose mean row entropy is below ``threshold``.

    Parameters
    ----------
    entropy : ndarray, shape (S, n_layers, n_heads, M)
        From :func:`corpus_summaries`.
    threshold : float
        Nats (default :data:`COLLAPSE_NATS`).

    Returns
    -------
    ndarray, shape (M,): a share in [0, 1] per divisor.

    Raises
    ------
    ValueError
        If ``entropy`` is not a finite 4-D array or ``threshold`` is negative.

    References
    ----------
    Zhai et al. 2023 (entropy collapse).
    """
    h = check_finite("entropy", entropy)
    threshold = check_real("threshold", threshold, lo=0.0)
    if h.ndim != 4:
        raise ValueError(f"entropy must have shape (S, n_layers, n_heads, M), got {h.shape}")
    return (h < threshold).mean(axis=(0, 1, 2))


def pooled_histogram(sentences: Sequence[np.ndarray], edges: np.ndarray) -> dict[str, object]:
    """Histogram of every logit of every head and sentence, pooled, as a density.

    Parameters
    ----------
    sentences : sequence of ndarrays, any shapes
        The logits (e.g. from :func:`split_logits`); every entry counts once.
    edges : ndarray, shape (B + 1,)
        Increasing bin edges.

    Returns
    -------
    dict
        ``density`` (B,): count / (N · bin width), so that it integrates to the share
        inside the edges; ``below``, ``above``: shares of logits outside the edges;
        ``mean``, ``std``: of all N pooled logits (population std); ``min``, ``max``;
        ``n``: N.

    Raises
    ------
    ValueError
        If there are no logits or the edges are not increasing.
    """
    e = check_finite("edges", edges)
    if e.ndim != 1 or e.size < 2 or not np.all(np.diff(e) > 0):
        raise ValueError("edges must be a 1-D increasing array with at least two entries")
    values = np.concatenate([np.asarray(s, dtype=np.float64).ravel() for s in sentences])
    if values.size == 0:
        raise ValueError("sentences must hold at least one logit")
    counts, _ = np.histogram(values, bins=e)
    n = values.size
    return {
        "density": counts / (n * np.diff(e)),
        "below": float(np.mean(values < e[0])),
        "above": float(np.mean(values > e[-1])),
        "mean": float(values.mean()),
        "std": float(values.std()),
        "min": float(values.min()),
        "max": float(values.max()),
        "n": int(n),
    }


def standard_normal_pdf(x) -> np.ndarray:
    """Density of N(0, 1): exp(−x²/2) / √(2π), the logits' law assumed at initialisation.

    Parameters
    ----------
    x : array_like, any shape
        Logits.

    Returns
    -------
    ndarray, same shape as ``x``
        Density per unit logit.

    Raises
    ------
    ValueError
        If ``x`` is not real-valued or contains NaN or an infinity.

    References
    ----------
    docs/mathematics.md §2.1 (unit-variance logits with 1/√d_k at initialisation).
    """
    x = check_finite("x", x)
    return np.exp(-0.5 * x**2) / math.sqrt(2.0 * math.pi)


def head_attention(logits: np.ndarray, multiplier: float) -> dict[str, np.ndarray]:
    """One head of one sentence under a counterfactual multiplier.

    Parameters
    ----------
    logits : ndarray, shape (T, T)
        Trained logits q·k/√d_k of the head.
    multiplier : float > 0
        √d_k / c (:func:`logit_multiplier`).

    Returns
    -------
    dict of ndarrays
        ``logits`` (T, T): multiplier · logits = q·k/c; ``weights`` (T, T): their softmax
        along keys; ``entropy`` (T,): each query row's entropy in nats; ``max_weight`` (T,):
        each row's largest weight; ``argmax`` (T,): the key it goes to.

    Raises
    ------
    ValueError
        If ``logits`` is not a finite (T, T) array with T ≥ 1 or ``multiplier`` is not a
        finite number > 0.

    References
    ----------
    Vaswani et al. 2017, eq. (1); docs/mathematics.md §7 (a counterfactual on fixed q, k).
    """
    z = check_finite("logits", logits)
    if z.ndim != 2 or z.shape[0] != z.shape[1] or z.shape[0] < 1:
        raise ValueError(f"logits must have shape (T, T) with T ≥ 1, got {z.shape}")
    m = float(_multipliers([multiplier])[0])
    scaled = m * z
    weights = softmax(scaled)
    return {
        "logits": scaled,
        "weights": weights,
        "entropy": softmax_entropy(scaled),
        "max_weight": weights.max(axis=-1),
        "argmax": weights.argmax(axis=-1),
    }
