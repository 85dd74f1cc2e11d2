"""Exact histogram laws and summaries of q·k (core/variance.py)."""

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from core import variance
from core.sampling import dot_products, sample_qk


def _variance_gamma_pdf(x, d, c):
    """Closed form of c·χ_d·Z: |x|^ν K_ν(|x|/c) / (c^{ν+1} √π 2^ν Γ(d/2)), ν = (d−1)/2."""
    nu = (d - 1) / 2
    ax = abs(x) / c
    return ax**nu * special.kv(nu, ax) / (c * math.sqrt(math.pi) * 2**nu * special.gamma(d / 2))


@pytest.mark.parametrize(("d", "c"), [(1, 1.0), (2, 0.5), (5, 2.0), (64, 1.0)])
def test_normal_law_matches_closed_form(d, c):
    edges = variance.histogram_edges(d, "normal", c, 1.0)
    got = variance.expected_density(edges, d, "normal", c, 1.0)
    want = np.array(
        [
            integrate.quad(
                _variance_gamma_pdf, a, b, args=(d, c), points=[0.0] if a < 0 < b else None
            )[0]
            for a, b in itertools.pairwise(edges)
        ]
    ) / np.diff(edges)
    # exact bin probabilities up to the quadrature over χ_d and the 1.5e-7 normal-CDF error
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6 / c)


def test_product_normal_density_at_d1():
    """d = 1: the product-normal law K₀(|x|)/π."""
    x = np.array([0.3, 1.0, 2.5])
    np.testing.assert_allclose(
        variance._normal_mixture_density(x, 1, 1.0), special.k0(x) / np.pi, rtol=1e-4
    )


@pytest.mark.parametrize("d", [1, 3, 10, 64, 1000])
def test_rademacher_law_is_binomial(d):
    edges = variance.histogram_edges(d, "rademacher", 1.0, 1.0)
    prob = variance.expected_density(edges, d, "rademacher") * np.diff(edges)
    support = 2 * np.arange(d + 1) - d
    inside = (support > edges[0]) & (support < edges[-1])
    assert prob.sum() == pytest.approx(
        stats.binom.pmf(np.arange(d + 1), d, 0.5)[inside].sum(), rel=1e-12
    )
    # every lattice point lies strictly inside a bin, never on an edge
    assert not np.isin(support, edges).any()


@pytest.mark.parametrize("dist", ["normal", "uniform", "rademacher"])
@pytest.mark.parametrize("d", [1, 2, 9, 200, 2048])
def test_expected_density_matches_monte_carlo(dist, d):
    """Every bin of a 400,000-sample histogram within 4.5 binomial standard errors of the law."""
    n = 400_000
    s = dot_products(d, n, rng=np.random.default_rng(d), dist=dist, sigma_q=0.5, sigma_k=2.0)
    edges = variance.histogram_edges(d, dist, 0.5, 2.0)
    width = np.diff(edges)
    p = variance.expected_density(edges, d, dist, 0.5, 2.0) * width
    p_hat = variance.histogram_density(s, edges) * width
    se = np.sqrt(p * (1 - p) / n)
    # bins expecting ≥ 20 counts, where the normal approximation to the binomial holds;
    # 4.5 s.e. keeps the family-wise false alarm rate over ≤ 60 bins near 4·10⁻⁴
    big = n * p >= 20
    assert big.sum() >= 0.5 * big.size
    assert np.all(np.abs(p_hat - p)[big] < 4.5 * se[big])
    # and the sparse tail bins together
    tail, tail_hat = p[~big].sum(), p_hat[~big].sum()
    assert abs(tail_hat - tail) < 4.5 * np.sqrt(tail / n) + 5 / n


def test_histogram_density_counts_outliers_in_denominator():
    edges = np.array([-1.0, 0.0, 1.0])
    dens = variance.histogram_density(np.array([-0.5, 0.5, 0.5, 5.0]), edges)
    np.testing.assert_allclose(dens, [0.25, 0.5])


def test_sample_moments_known_values():
    m = variance.sample_moments(np.array([-1.0, 1.0, -1.0, 1.0]))
    assert m["mean"] == 0.0
    assert m["var"] == pytest.approx(4 / 3)  # unbiased
    assert m["kurt"] == pytest.approx(-2.0)
    assert m["var_se"] == 0.0
    with pytest.raises(ValueError, match="at least 2"):
        variance.sample_moments(np.array([1.0]))


def test_variance_sweep_follows_d():
    d_values = 2 ** np.arange(0, 13, 3)
    sw = variance.variance_sweep(d_values, 50_000, rng=np.random.default_rng(0))
    assert np.all(np.abs(sw["var"] - d_values) < 4 * sw["var_se"])
    np.testing.assert_array_equal(sw["theory"], d_values)
    assert np.all(sw["lo"] < sw["var"]) and np.all(sw["var"] < sw["hi"])


def test_running_sums_end_at_the_dot_product():
    d = 777
    idx, sums = variance.running_sums(d, 5, rng=np.random.default_rng(9), dist="uniform")
    q, k = sample_qk(5, d, rng=np.random.default_rng(9), dist="uniform")
    assert idx[0] == 1 and idx[-1] == d and idx.size <= 200
    np.testing.assert_allclose(sums[:, -1], (q * k).sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(sums[:, 0], q[:, 0] * k[:, 0], rtol=1e-12)


def test_kurtosis_standard_error_is_calibrated():
    """Over 200 independent samples the z-scores of the kurtosis have spread ≈ 1."""
    z = []
    for seed in range(200):
        m = variance.sample_moments(dot_products(4, 5_000, rng=np.random.default_rng(seed)))
        z.append((m["kurt"] - 1.5) / m["kurt_se"])
    z = np.array(z)
    # the std of 200 standard normals lies in [0.8, 1.2] with probability > 0.999
    assert 0.8 < z.std() < 1.3
    assert abs(z.mean()) < 0.6  # the sample kurtosis is biased low by O(1/√n) in se units


def test_score_sizes_quoted_on_the_variance_page():
    """The two question cards: at d = 1024, 0.18 % of |q·k| exceed 100; at d = 512 the
    median |q·k| is 15.2 and 19 % lie in (20, 30]. Exact values (quadrature over ‖q‖)
    against the exact O(1) sampler (2·10⁶ draws) and an explicit Σ q_i k_i (50,000 draws),
    within 4 binomial s.e.; the median within 4 s.e. of a sample median
    (√(p(1 − p)/n)/f(m), with f the density of |q·k| at m)."""
    rng = np.random.default_rng(11)
    share = variance.score_abs_share(1024, 100.0)
    assert round(100 * share, 2) == 0.18
    x = np.abs(dot_products(1024, 2_000_000, rng=rng))
    hit = np.mean(x > 100)
    assert abs(hit - share) < 4 * math.sqrt(share * (1 - share) / x.size)
    median = variance.score_abs_median(512)
    mid = variance.score_abs_share(512, 20.0, 30.0)
    assert round(median, 1) == 15.2 and round(100 * mid) == 19
    assert median == pytest.approx(stats.norm.ppf(0.75) * math.sqrt(512), rel=2e-3)
    q, k = sample_qk(50_000, 512, rng=rng)
    y = np.abs((q * k).sum(axis=1))
    assert abs(np.mean((y > 20) & (y <= 30)) - mid) < 4 * math.sqrt(mid * (1 - mid) / y.size)
    h = 0.05
    density = (
        variance.score_abs_share(512, 0, median + h) - variance.score_abs_share(512, 0, median - h)
    ) / (2 * h)
    assert abs(np.median(y) - median) < 4 * math.sqrt(0.25 / y.size) / density
    # the closed form at d = 1: |q·k| has P(|qk| > x) = (2/π) ∫_x^∞ K₀(t) dt
    tail = 2 / math.pi * integrate.quad(lambda t: special.k0(t), 1.0, np.inf)[0]
    assert variance.score_abs_share(1, 1.0) == pytest.approx(tail, rel=1e-4)


@pytest.mark.parametrize(("lo", "hi"), [(-1.0, 2.0), (3.0, 2.0), (0.0, float("nan"))])
def test_score_abs_share_bad_bounds(lo, hi):
    with pytest.raises(ValueError, match="lo and hi"):
        variance.score_abs_share(8, lo, hi)
    with pytest.raises(ValueError, match="d"):
        variance.score_abs_median(0)
