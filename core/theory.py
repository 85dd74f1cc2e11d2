"""Closed-form moments of the attention score s = q·k and of its scaled logits.

For d independent, zero-mean components with variances σ_q², σ_k² and per-component
correlation ρ (Gaussian case),

    E[s] = ρ d σ_q σ_k,        Var[s] = d σ_q² σ_k² (1 + ρ²).

Derivations in docs/mathematics.md §1.1–§1.2 and §2.1.

References
----------
Vaswani et al. 2017, *Attention Is All You Need*, §3.2.1 footnote 4 (ρ = 0).
Isserlis 1918, *Biometrika* 12 (fourth moments of normal pairs, ρ ≠ 0).
"""

from __future__ import annotations

import math

from core.validation import check_choice, check_positive, check_positive_int, check_real, check_rho

#: Raw kurtosis E[x⁴]/E[x²]² of one zero-mean component, by distribution name.
RAW_KURTOSIS = {"normal": 3.0, "uniform": 9.0 / 5.0, "rademacher": 1.0}
DISTRIBUTIONS = tuple(RAW_KURTOSIS)


def _check_d(d: int, name: str = "d") -> int:
    return check_positive_int(name, d)


def _check_sigma(value: float, name: str) -> float:
    return check_positive(name, value)


def _check_rho(rho: float) -> float:
    return check_rho("rho", rho)


def _check_dist(dist: str) -> str:
    return check_choice("dist", dist, DISTRIBUTIONS)


def dot_product_mean(d: int, sigma_q: float = 1.0, sigma_k: float = 1.0, rho: float = 0.0) -> float:
    """Mean of the score s = q·k: ρ d σ_q σ_k.

    Parameters
    ----------
    d : int
        Dimension d_k (>= 1).
    sigma_q, sigma_k : float
        Standard deviation of one component of q and of k (> 0).
    rho : float
        Correlation of q_i and k_i, |rho| < 1.

    Returns
    -------
    float
        In units of q times units of k; 0 for rho = 0.

    Raises
    ------
    ValueError
        If d < 1, a sigma is not positive and finite, or |rho| >= 1.

    References
    ----------
    docs/mathematics.md §1.1.
    """
    d = _check_d(d)
    return _check_rho(rho) * d * _check_sigma(sigma_q, "sigma_q") * _check_sigma(sigma_k, "sigma_k")


def dot_product_variance(
    d: int, sigma_q: float = 1.0, sigma_k: float = 1.0, rho: float = 0.0
) -> float:
    """Variance of the score s = q·k: d σ_q² σ_k² (1 + ρ²).

    Each term q_i k_i has mean ρσ_qσ_k and second moment σ_q²σ_k²(1 + 2ρ²) (Isserlis),
    so variance σ_q²σ_k²(1 + ρ²); the d terms are independent.

    Parameters
    ----------
    d, sigma_q, sigma_k, rho
        As in :func:`dot_product_mean`.

    Returns
    -------
    float
        In squared units of the score; d for unit variances and rho = 0.

    Raises
    ------
    ValueError
        As :func:`dot_product_mean`.

    References
    ----------
    Vaswani et al. 2017, §3.2.1 footnote 4 (rho = 0); Isserlis 1918; docs/mathematics.md §1.1.
    """
    d = _check_d(d)
    sq = _check_sigma(sigma_q, "sigma_q")
    sk = _check_sigma(sigma_k, "sigma_k")
    rho = _check_rho(rho)
    return d * sq**2 * sk**2 * (1.0 + rho**2)


def dot_product_excess_kurtosis(d: int, dist: str = "normal") -> float:
    """Excess kurtosis of s = q·k for independent q, k: (κ_q κ_k − 3) / d.

    κ is the raw kurtosis of one component (Gaussian 3, Uniform 9/5, Rademacher 1),
    giving 6/d, 0.24/d and −2/d. Independent of σ_q, σ_k.

    Parameters
    ----------
    d : int
        Dimension d_k (>= 1).
    dist : {"normal", "uniform", "rademacher"}
        Law of every component of q and k.

    Returns
    -------
    float
        Dimensionless; 0 for a normal law.

    Raises
    ------
    ValueError
        If d < 1 or dist is unknown.

    References
    ----------
    docs/mathematics.md §1.2 (cumulants of independent terms add; Stuart & Ord,
    *Kendall's Advanced Theory of Statistics*, vol. 1, ch. 3).
    """
    d = _check_d(d)
    kappa = RAW_KURTOSIS[_check_dist(dist)]
    return (kappa * kappa - 3.0) / d


def scale_factor(d: int, alpha: float) -> float:
    """Logit scale d ** -alpha (0: none, 0.5: 1/√d_k, 1: 1/d_k).

    Parameters
    ----------
    d : int
        Dimension d_k (>= 1).
    alpha : float
        Scaling exponent (finite).

    Returns
    -------
    float
        The factor c of the logits z = c · q·k.

    Raises
    ------
    ValueError
        If d < 1 or alpha is not finite.

    References
    ----------
    Vaswani et al. 2017, eq. (1) (alpha = ½); Yang et al. 2022, *Tensor Programs V*
    (alpha = 1).
    """
    d = _check_d(d)
    return float(d) ** -check_real("alpha", alpha)


def logit_std(d: int, alpha: float, sigma_q: float = 1.0, sigma_k: float = 1.0) -> float:
    """Standard deviation of independent logits d^-alpha · q·k: d^(½ − alpha) σ_q σ_k.

    Parameters
    ----------
    d : int
        Dimension d_k (>= 1).
    alpha : float
        Scaling exponent (finite).
    sigma_q, sigma_k : float
        Component standard deviations (> 0).

    Returns
    -------
    float
        In logit units; σ_q σ_k at every d for alpha = ½.

    Raises
    ------
    ValueError
        If d < 1, alpha is not finite or a sigma is not positive and finite.

    References
    ----------
    docs/mathematics.md §2.1.
    """
    return scale_factor(d, alpha) * math.sqrt(dot_product_variance(d, sigma_q, sigma_k))
