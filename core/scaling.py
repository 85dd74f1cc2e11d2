"""Which exponent α keeps attention stable as d_k grows: closed forms for the √d_k-vs-d_k page.

Model (as in :mod:`core.experiments`)::

    q ~ N(0, I_{d_k})
    k_0 = rho q + sqrt(1 − rho²) eps            # the one "relevant" key
    k_j ~ N(0, I_{d_k}),  j = 1 .. n_keys − 1   # independent keys
    logits z_j = d_k**-alpha · q·k_j

Softmax ignores a shift shared by a whole row, so the model has ONE key aligned
with the query among independent ones: if every key were correlated with q in
the same way, the common part rho ‖q‖² would cancel inside the softmax.

Theory (docs/mathematics.md §2.1–§2.3, unit component variances)::

    std(z_j), j ≥ 1   = d_k**(½ − alpha)          (independent keys)
    E[z_0]            = rho · d_k**(1 − alpha)     (relevant key)
    E[z_0] / std(z_j) = rho · sqrt(d_k)            (whatever alpha is)

With alpha = 1 and d_k → ∞ the logits tend to (rho, 0, …, 0), so the relevant
key's weight tends to e**rho / (e**rho + n_keys − 1) at every large width.

References
----------
Vaswani et al. 2017, *Attention Is All You Need*, §3.2.1 footnote 4.
Yang et al. 2022, *Tensor Programs V* (μP: 1/d_k attention for aligned q, k).
"""

from __future__ import annotations

import math

import numpy as np

from core.attention import check_alpha
from core.validation import check_int, check_rho

__all__ = [
    "independent_logit_std",
    "linear_scaling_weight_limit",
    "relevant_logit_mean",
    "signal_to_noise",
]

#: Largest d_k accepted (as core.experiments).
D_MAX = 1 << 20


def _as_d(d: object) -> np.ndarray | int:
    """d_k as an int, or an integer array (each in [1, D_MAX])."""
    if np.ndim(d) == 0:
        return check_int("d", d, 1, D_MAX)
    arr = np.asarray(d)
    for i, value in enumerate(arr.ravel().tolist()):
        check_int(f"d[{i}]", value, 1, D_MAX)
    return arr.astype(np.int64)


def independent_logit_std(d, alpha: float):
    """Standard deviation of an independent key's logit: d_k**(½ − alpha).

    Parameters
    ----------
    d : int or array of int, any shape
        d_k, each in [1, 2**20].
    alpha : float
        Scaling exponent in [0, 4] (0 none, ½ the Transformer's, 1 μP's).

    Returns
    -------
    float or ndarray (shape of ``d``)
        Dimensionless; 1 at every d_k for alpha = ½.

    Raises
    ------
    ValueError
        If d or alpha is out of range (the message names it).

    References
    ----------
    Vaswani et al. 2017, footnote 4: Var(q·k) = d_k for independent unit components.
    """
    d = _as_d(d)
    alpha = check_alpha(alpha)
    out = np.power(np.asarray(d, dtype=float), 0.5 - alpha)
    return float(out) if np.ndim(out) == 0 else out


def relevant_logit_mean(d, alpha: float, rho: float):
    """Mean logit of the relevant key: rho · d_k**(1 − alpha).

    E[q·k_0] = rho d_k (docs/mathematics.md §1.1), times the scale d_k**-alpha.

    Parameters
    ----------
    d : int or array of int, any shape
        d_k, each in [1, 2**20].
    alpha : float
        Scaling exponent in [0, 4].
    rho : float
        corr(q_i, k_0i), |rho| < 1.

    Returns
    -------
    float or ndarray (shape of ``d``)
        Grows like d_k for alpha = 0, like √d_k for alpha = ½, constant rho for alpha = 1.

    Raises
    ------
    ValueError
        If an argument is out of range (the message names it).

    References
    ----------
    docs/mathematics.md §2.2; Yang et al. 2022, *Tensor Programs V* (alpha = 1).
    """
    d = _as_d(d)
    alpha = check_alpha(alpha)
    rho = check_rho("rho", rho)
    out = rho * np.power(np.asarray(d, dtype=float), 1.0 - alpha)
    return float(out) if np.ndim(out) == 0 else out


def signal_to_noise(d, rho: float):
    """How far the relevant key's mean logit stands above the others' spread: rho √d_k.

    The ratio E[z_0] / std(z_j) = rho d_k**(1 − alpha) / d_k**(½ − alpha) does not
    depend on alpha: scaling cannot change which key is ahead (the argmax), only how
    hard softmax commits to it.

    Parameters
    ----------
    d : int or array of int
        d_k, each in [1, 2**20].
    rho : float
        |rho| < 1.

    Returns
    -------
    float or ndarray (shape of ``d``)
        Dimensionless: a number of standard deviations of the independent logits.

    Raises
    ------
    ValueError
        If an argument is out of range (the message names it).

    References
    ----------
    docs/mathematics.md §2.2.
    """
    d = _as_d(d)
    rho = check_rho("rho", rho)
    out = rho * np.sqrt(np.asarray(d, dtype=float))
    return float(out) if np.ndim(out) == 0 else out


def linear_scaling_weight_limit(n_keys: int, rho: float) -> float:
    """The relevant key's weight with 1/d_k scaling as d_k → ∞: e**rho / (e**rho + n_keys − 1).

    With alpha = 1 the relevant logit tends to rho (its variance (1 + rho²)/d_k
    vanishes) and every other logit to 0, so softmax sees (rho, 0, …, 0).

    Parameters
    ----------
    n_keys : int
        Keys per row, in [1, 65536].
    rho : float
        |rho| < 1.

    Returns
    -------
    float
        In (0, 1]; 1/n_keys at rho = 0. For n_keys = 10, rho = 0.5: 0.15483, which
        the simulated weight matches at every d_k from 16 to 4096.

    Raises
    ------
    ValueError
        If an argument is out of range (the message names it).

    References
    ----------
    Yang et al. 2022, *Tensor Programs V* (width-independent attention under μP);
    derivation in docs/mathematics.md §2.3.
    """
    n_keys = check_int("n_keys", n_keys, 1, 1 << 16)
    rho = check_rho("rho", rho)
    e = math.exp(rho)
    return e / (e + n_keys - 1)
