"""Closed forms and quadratures the tests compare core's Monte Carlo figures with.

Written independently of ``core`` (SciPy and the standard library only). Derivations in
docs/mathematics.md: order statistics of standard normals §3.2 (tabulated in Harter
1961), the relevant key's weight under 1/√d_k §2.4.
"""

from __future__ import annotations

import math

from scipy import integrate, optimize, stats


def expected_max(n: int) -> float:
    """e_n = E[max of n standard normals] = ∫ x · n φ(x) Φ(x)^(n−1) dx (absolute error < 1e-9)."""
    value, _ = integrate.quad(
        lambda x: x * n * stats.norm.pdf(x) * stats.norm.cdf(x) ** (n - 1),
        -math.inf,
        math.inf,
        epsabs=1e-11,
    )
    return value


def top_two_gap_cdf(g: float, n: int) -> float:
    """P(Z_(1) − Z_(2) ≤ g) = n ∫ φ(x) [Φ(x)^(n−1) − Φ(x − g)^(n−1)] dx, for n ≥ 2."""
    value, _ = integrate.quad(
        lambda x: (
            n
            * stats.norm.pdf(x)
            * (stats.norm.cdf(x) ** (n - 1) - stats.norm.cdf(x - g) ** (n - 1))
        ),
        -math.inf,
        math.inf,
        epsabs=1e-11,
    )
    return value


def top_two_gap_median(n: int) -> float:
    """Median of the gap between the two largest of n standard normals (n ≥ 2)."""
    return optimize.brentq(lambda g: top_two_gap_cdf(g, n) - 0.5, 1e-6, 10.0, xtol=1e-9)


def relevant_weight_bounds(d: int, n_keys: int, rho: float) -> tuple[float, float]:
    """Bounds on the relevant key's mean weight E[w] with logits q·k/√d (docs/mathematics.md §2.4).

    q ~ N(0, I_d), k_0 = rho q + √(1 − rho²) ε, the other keys independent N(0, I_d). With
    x = Σ_{j≥1} e^(z_j − z_0), 1 − w = x/(1 + x) lies in [x − x², x], and E[x], E[x²] are
    χ²_d moment generating functions, E[e^(−t r²)] = (1 + 2t)^(−d/2).

    Returns
    -------
    (lower, upper) : 1 − E[x], 1 − E[x] + E[x²]; informative once E[x] ≪ 1.
    """
    n, r = n_keys, rho

    def mgf(t: float) -> float:  # E[e^(−t r²)], r² ~ χ²_d
        return (1.0 + 2.0 * t) ** (-d / 2)

    t1 = r / math.sqrt(d) - (2 - r * r) / (2 * d)
    t2 = 2 * r / math.sqrt(d) - (4 - 2 * r * r) / d
    t3 = 2 * r / math.sqrt(d) - (3 - 2 * r * r) / d
    ex = (n - 1) * mgf(t1)
    ex2 = (n - 1) * mgf(t2) + (n - 1) * (n - 2) * mgf(t3)
    return 1.0 - ex, 1.0 - ex + ex2
