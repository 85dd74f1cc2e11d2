"""Distribution of the score s = q·k: exact histogram expectations, moments, sweeps.

Exact laws (derived in docs/mathematics.md §1.3), with c = σ_q σ_k:

- normal: s = c χ_d Z, a symmetric variance-gamma law; its density is the scale
  mixture f(x) = E_R[φ(x / (c R)) / (c R)], R ~ χ_d, evaluated by quadrature over R.
- rademacher: s = c (2 Binomial(d, ½) − d), a lattice law with spacing 2c.
- uniform: each term is c·3·U·V with U, V ~ U(−1, 1), P(|UV| ≤ y) = y (1 − ln y);
  the d-fold convolution is taken by FFT on a fine lattice (d ≤ ``UNIFORM_EXACT_MAX_D``),
  beyond which the excess kurtosis 0.24/d is below 10⁻³ and the Gaussian limit is used.

References
----------
Craig 1936, *Ann. Math. Statist.* 7 (the normal product law, d = 1).
Johnson, Kotz & Balakrishnan 1994, *Continuous Univariate Distributions*, vol. 1,
ch. 18 (the χ² law of ‖q‖²).
Abramowitz & Stegun 1964, 7.1.26 (the normal CDF used here).
"""

from __future__ import annotations

import math

import numpy as np

from core.sampling import dot_products, sample_qk
from core.theory import DISTRIBUTIONS
from core.validation import check_choice, check_positive, check_positive_int, check_rng

UNIFORM_EXACT_MAX_D = 256


def _normal_cdf(x: np.ndarray) -> np.ndarray:
    """Standard normal CDF, vectorised; absolute error < 1.5e-7.

    Abramowitz & Stegun 7.1.26 for erf(|x|/√2), reflected for negative x.
    """
    z = np.abs(np.asarray(x, dtype=float)) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    erf = 1.0 - poly * np.exp(-z * z)
    return 0.5 * (1.0 + np.sign(x) * erf)


def histogram_edges(
    d: int, dist: str, sigma_q: float, sigma_k: float, n_bins: int = 60
) -> np.ndarray:
    """Bin edges for a histogram of s = q·k covering ±4.5 standard deviations.

    For ``"rademacher"`` the edges sit halfway between lattice points, each bin holding
    the same number of lattice points, so the histogram has no aliasing.

    Parameters
    ----------
    d : int
        Dimension d_k (>= 1).
    dist : {"normal", "uniform", "rademacher"}
    sigma_q, sigma_k : float
        Component standard deviations (> 0).
    n_bins : int
        Bins wanted (>= 1); exactly this many except for ``"rademacher"``, whose bins
        are whole multiples of the lattice spacing (at most n_bins + 2).

    Returns
    -------
    ndarray, shape (n_edges,), increasing, in units of the score; the range is cut at
    the support ±d σ_q σ_k (Rademacher) or ±3 d σ_q σ_k (uniform) when that is narrower.

    Raises
    ------
    ValueError
        On an invalid argument (the message names it and the allowed range).
    """
    d = check_positive_int("d", d)
    n_bins = check_positive_int("n_bins", n_bins)
    dist = check_choice("dist", dist, DISTRIBUTIONS)
    c = check_positive("sigma_q", sigma_q) * check_positive("sigma_k", sigma_k)
    half = 4.5 * math.sqrt(d) * c
    if dist == "uniform":
        half = min(half, 3.0 * d * c)
    if dist == "rademacher":
        half = min(half, d * c)
        step = 2.0 * c
        per_bin = max(1, math.ceil(2 * half / step / n_bins))
        width = per_bin * step
        # lattice points are c (2j − d); edges at lattice points ± c, aligned to the lattice
        first = -d * c - c
        lo = first + math.floor((-half - c - first) / width) * width
        hi = first + math.ceil((half + c - first) / width) * width
        return lo + width * np.arange(round((hi - lo) / width) + 1)
    return np.linspace(-half, half, n_bins + 1)


def _chi_grid(d: int) -> tuple[np.ndarray, np.ndarray]:
    """Trapezoid nodes and weights for expectations over R ~ χ_d (±12 around the mode)."""
    centre = math.sqrt(max(d - 1, 0))
    r = np.linspace(max(1e-9, centre - 12.0), centre + 12.0, 3001)
    log_g = (d - 1) * np.log(r) - 0.5 * r * r - (0.5 * d - 1) * math.log(2.0) - math.lgamma(0.5 * d)
    w = np.exp(log_g) * (r[1] - r[0])
    w[[0, -1]] *= 0.5  # trapezoid rule
    return r, w / w.sum()


def _normal_mixture_density(x: np.ndarray, d: int, c: float) -> np.ndarray:
    """Density of c χ_d Z at x: E_R[φ(x / (c R)) / (c R)] by trapezoid quadrature over R."""
    r, w = _chi_grid(d)
    scale = c * r  # (n_r,)
    z = np.asarray(x, dtype=float)[..., None] / scale  # (..., n_r)
    return (np.exp(-0.5 * z * z) / (math.sqrt(2 * math.pi) * scale)) @ w


def _uniform_lattice(d: int, c: float) -> tuple[np.ndarray, np.ndarray]:
    """Lattice points and probabilities of the sum of d uniform products (FFT convolution)."""
    a = 3.0 * c  # support of one term: |q_i k_i| ≤ √3σ_q · √3σ_k
    h = a / 64.0
    half = min(d * a, 14.0 * math.sqrt(d) * c + a)
    n = 1 << math.ceil(math.log2(2 * half / h + 2))
    j = np.arange(-64, 65)
    y = np.clip((np.concatenate([j - 0.5, [64.5]])) * h / a, -1.0, 1.0)
    cdf = 0.5 + 0.5 * np.sign(y) * np.where(
        y == 0, 0.0, np.abs(y) * (1 - np.log(np.abs(y) + 1e-300))
    )
    p1 = np.diff(cdf)  # (129,) probabilities of lattice points j·h, j = −64…64
    buf = np.zeros(n)
    buf[j % n] = p1
    pmf = np.fft.irfft(np.fft.rfft(buf) ** d, n)
    pmf = np.clip(pmf, 0.0, None)
    k = np.fft.fftfreq(n, 1.0 / n)  # lattice index of each slot, wrapped
    order = np.argsort(k)
    return k[order] * h, pmf[order] / pmf.sum()


def expected_density(
    edges: np.ndarray, d: int, dist: str, sigma_q: float = 1.0, sigma_k: float = 1.0
) -> np.ndarray:
    """Exact expected histogram density of s = q·k on the given bins.

    Parameters
    ----------
    edges : ndarray, shape (n_bins + 1,)
        Increasing bin edges (units of s).
    d, dist, sigma_q, sigma_k
        As in :func:`core.sampling.dot_products`.

    Returns
    -------
    ndarray, shape (n_bins,)
        P(s in bin) / bin width (per unit of the score), so it is comparable with
        :func:`histogram_density` (counts normalised by the total sample count).

    Raises
    ------
    ValueError
        If d, dist, sigma_q or sigma_k is invalid (the message names it).

    References
    ----------
    docs/mathematics.md §1.3; the module's references.
    """
    d = check_positive_int("d", d)
    dist = check_choice("dist", dist, DISTRIBUTIONS)
    c = check_positive("sigma_q", sigma_q) * check_positive("sigma_k", sigma_k)
    edges = np.asarray(edges, dtype=float)
    width = np.diff(edges)
    if dist == "normal":
        # P(s ≤ x) = E_R[Φ(x / (c R))]: exact bin probabilities, even at the d = 1 cusp
        r, w = _chi_grid(d)
        cdf = _normal_cdf(edges[:, None] / (c * r)) @ w  # (n_edges,)
        return np.diff(cdf) / width
    if dist == "rademacher":
        jj = np.arange(d + 1)
        log_pmf = (
            math.lgamma(d + 1)
            - np.array([math.lgamma(i + 1) + math.lgamma(d - i + 1) for i in jj])
            - d * math.log(2.0)
        )
        prob, _ = np.histogram(c * (2.0 * jj - d), bins=edges, weights=np.exp(log_pmf))
        return prob / width
    if d > UNIFORM_EXACT_MAX_D:
        sd = math.sqrt(d) * c
        return np.diff(_normal_cdf(edges / sd)) / width
    points, pmf = _uniform_lattice(d, c)
    cdf = np.concatenate([[0.0], np.cumsum(pmf)])
    # lattice point x_j carries mass over [x_j − h/2, x_j + h/2]: interpolate the CDF there
    h = points[1] - points[0]
    grid = np.concatenate([[points[0] - h / 2], points + h / 2])
    return np.diff(np.interp(edges, grid, cdf)) / width


def histogram_density(samples: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Histogram counts / (n_samples · bin width): density comparable with the exact law.

    Samples outside the edges count in the denominator, not in any bin.

    Parameters
    ----------
    samples : array_like, any shape
        Scores; every entry is one sample (at least one).
    edges : array_like, shape (n_bins + 1,)
        Increasing bin edges, in units of the score.

    Returns
    -------
    ndarray, shape (n_bins,)
        Density per unit of the score, as :func:`expected_density`.

    Raises
    ------
    ValueError
        If ``samples`` is empty, or (from ``np.histogram``) if ``edges`` do not increase.
    """
    samples = np.asarray(samples, dtype=float)
    if samples.size == 0:
        raise ValueError("samples must hold at least one score")
    counts, _ = np.histogram(samples, bins=edges)
    return counts / (samples.size * np.diff(edges))


def sample_moments(s: np.ndarray) -> dict[str, float]:
    """Sample mean, variance, std and excess kurtosis of s, each with a standard error.

    Standard errors are the delta-method (influence-function) ones, valid for any law
    with finite moments of the needed order: mean σ/√n; variance √((m₄ − m₂²)/n);
    std se_var / (2σ); kurtosis g = m₄/m₂² from its influence function
    (x⁴ − m₄)/m₂² − 2 m₄ (x² − m₂)/m₂³ − 4 m₃ x/m₂² on centred x.

    Parameters
    ----------
    s : array_like, any shape
        Samples (every entry counts once).

    Returns
    -------
    dict of str -> float
        ``mean``, ``var`` (unbiased, ddof = 1), ``std``, ``kurt`` (excess kurtosis
        m₄/m₂² − 3, dimensionless), each with its ``*_se``, and ``n``. Units: those of s,
        squared for ``var``.

    Raises
    ------
    ValueError
        If ``s`` holds fewer than 2 samples.

    References
    ----------
    van der Vaart 1998, *Asymptotic Statistics*, ch. 3 (the delta method).
    """
    s = np.asarray(s, dtype=float)
    n = s.size
    if n < 2:
        raise ValueError(f"s must hold at least 2 samples, got {n}")
    mean = float(s.mean())
    dev = s - mean
    m2 = float(np.mean(dev * dev))
    m4 = float(np.mean(dev**4))
    var = m2 * n / (n - 1)
    var_se = math.sqrt(max(m4 - m2 * m2, 0.0) / n)
    std = math.sqrt(var)
    if m2 > 0:
        m3 = float(np.mean(dev**3))
        dev2 = dev * dev
        influence = (dev2 * dev2 - m4) / m2**2 - 2 * m4 * (dev2 - m2) / m2**3 - 4 * m3 * dev / m2**2
        kurt_se = float(influence.std()) / math.sqrt(n)
    else:
        kurt_se = 0.0
    return {
        "mean": mean,
        "mean_se": std / math.sqrt(n),
        "var": var,
        "var_se": var_se,
        "std": std,
        "std_se": var_se / (2 * std) if std > 0 else 0.0,
        "kurt": m4 / (m2 * m2) - 3.0 if m2 > 0 else 0.0,
        "kurt_se": kurt_se,
        "n": float(n),
    }


def variance_sweep(
    d_values: np.ndarray,
    n_samples: int,
    *,
    rng: np.random.Generator,
    dist: str = "normal",
    max_products: int | None = None,
) -> dict[str, np.ndarray]:
    """Empirical Var(q·k) at unit σ_q, σ_k for each d in ``d_values``.

    ``max_products`` (uniform only, whose sampler is O(d) per sample) caps the samples at
    d to max(1000, max_products // d); the intervals widen accordingly.

    Multiply ``var``/``var_se`` by σ_q²σ_k² for other scales (s scales exactly by σ_qσ_k).

    Parameters
    ----------
    d_values : array_like of int, shape (n_d,)
        Dimensions d_k (each >= 1).
    n_samples : int
        Samples per d (>= 1; at least 2 for a variance).
    rng : numpy.random.Generator
    dist : {"normal", "uniform", "rademacher"}
    max_products : int, optional
        Uniform only: cap on n · d per point (see above).

    Returns
    -------
    dict of ndarray, each shape (n_d,): d, var, var_se, lo, hi (95% interval
    var ± 1.96 se), theory (= d, Vaswani et al. 2017 footnote 4), n (samples drawn at
    each d).

    Raises
    ------
    ValueError
        On an invalid argument (the message names it), from the checks here or from
        :func:`core.sampling.dot_products`.
    """
    n = check_positive_int("n_samples", n_samples)
    check_rng("rng", rng)
    d_values = np.asarray(d_values)
    out = {k: np.empty(d_values.size) for k in ("var", "var_se", "n")}
    for i, d in enumerate(d_values):
        n_d = n
        if dist == "uniform" and max_products is not None:
            n_d = max(1000, min(n, max_products // int(d)))
        m = sample_moments(dot_products(int(d), n_d, rng=rng, dist=dist))
        out["var"][i], out["var_se"][i], out["n"][i] = m["var"], m["var_se"], n_d
    out["d"] = d_values.astype(float)
    out["lo"] = out["var"] - 1.96 * out["var_se"]
    out["hi"] = out["var"] + 1.96 * out["var_se"]
    out["theory"] = d_values.astype(float)
    return out


def running_sums(
    d: int,
    n_paths: int,
    *,
    rng: np.random.Generator,
    dist: str = "normal",
    sigma_q: float = 1.0,
    sigma_k: float = 1.0,
    max_points: int = 200,
) -> tuple[np.ndarray, np.ndarray]:
    """Partial sums Σ_{j ≤ i} q_j k_j of n_paths sampled pairs, at ≤ max_points indices i.

    Parameters
    ----------
    d : int
        Dimension d_k (>= 1).
    n_paths : int
        Sampled (q, k) pairs (>= 1); n_paths · d at most ``core.sampling.MAX_ELEMENTS``.
    rng, dist, sigma_q, sigma_k
        As in :func:`core.sampling.sample_qk`.
    max_points : int
        Most indices kept per path (>= 1), spread evenly over 1 … d.

    Returns
    -------
    i : ndarray of int, shape (n_points,), 1-based dimension indices (always includes d).
    sums : ndarray, shape (n_paths, n_points), in units of the score: a random walk whose
        variance after i steps is i σ_q² σ_k².

    Raises
    ------
    ValueError
        On an invalid argument (the message names it).
    """
    max_points = check_positive_int("max_points", max_points)
    q, k = sample_qk(n_paths, d, rng=rng, dist=dist, sigma_q=sigma_q, sigma_k=sigma_k)
    cums = np.cumsum(q * k, axis=1)  # (n_paths, d)
    idx = np.unique(np.round(np.linspace(1, d, min(d, max_points))).astype(int))
    return idx, cums[:, idx - 1]


def score_abs_share(d: int, lo: float, hi: float = math.inf) -> float:
    """Share of Gaussian scores with lo < |q·k| ≤ hi, exact (q, k ~ N(0, I_d) independent).

    Given q, q·k ~ N(0, ‖q‖²) with ‖q‖ ~ χ_d, so

        P(lo < |q·k| ≤ hi) = E_R[2 (Φ(hi/R) − Φ(lo/R))],   R ~ χ_d,

    by the trapezoid rule over R (3,001 nodes over ±12 around the mode; Φ to 1.5·10⁻⁷).

    Parameters
    ----------
    d : int
        Dimension d_k of q and k, ≥ 1.
    lo, hi : float
        Bounds on |q·k| (unit components), 0 ≤ lo ≤ hi; hi may be ``math.inf``.

    Returns
    -------
    float
        Probability in [0, 1].

    Raises
    ------
    ValueError
        If ``d`` is not a positive integer or the bounds are not 0 ≤ lo ≤ hi.

    References
    ----------
    docs/mathematics.md §1.3 (the scale-mixture law of q·k); Abramowitz & Stegun 1964,
    7.1.26.
    """
    d = check_positive_int("d", d)
    lo, hi = float(lo), float(hi)
    if not (0.0 <= lo <= hi) or math.isnan(hi):
        raise ValueError(f"lo and hi must satisfy 0 <= lo <= hi, got lo={lo!r}, hi={hi!r}")
    r, w = _chi_grid(d)
    upper = np.ones_like(r) if math.isinf(hi) else _normal_cdf(hi / r)
    return float(np.clip((2.0 * (upper - _normal_cdf(lo / r))) @ w, 0.0, 1.0))


def score_abs_median(d: int) -> float:
    """Median of |q·k| for q, k ~ N(0, I_d) independent, exact to 10⁻⁹ relative.

    Solves :func:`score_abs_share` (d, 0, x) = ½ by bisection; about 0.674·√d for large d
    (the median of |N(0, d)|), slightly less at small d (heavier centre).

    Parameters
    ----------
    d : int
        Dimension d_k, ≥ 1.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``d`` is not a positive integer.

    References
    ----------
    docs/mathematics.md §1.3.
    """
    d = check_positive_int("d", d)
    lo, hi = 0.0, 10.0 * math.sqrt(d)
    while hi - lo > 1e-9 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if score_abs_share(d, 0.0, mid) < 0.5 else (lo, mid)
    return 0.5 * (lo + hi)
