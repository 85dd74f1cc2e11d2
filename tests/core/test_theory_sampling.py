"""Score moments and the exact samplers (docs/mathematics.md §1)."""

import math

import numpy as np
import pytest

from core import sampling, theory

DISTS = ("normal", "uniform", "rademacher")


def test_theory_reference_values():
    assert theory.dot_product_variance(64) == 64
    assert math.sqrt(theory.dot_product_variance(64)) == 8
    assert math.sqrt(theory.dot_product_variance(1024)) == 32
    assert theory.dot_product_variance(512) == pytest.approx(22.627417**2, rel=1e-7)
    assert theory.dot_product_variance(10, 2.0, 0.5, rho=0.5) == 10 * 4 * 0.25 * 1.25
    assert theory.dot_product_mean(10, 2.0, 0.5, rho=0.5) == 0.5 * 10 * 2.0 * 0.5
    assert theory.dot_product_mean(10) == 0.0
    assert theory.scale_factor(64, 0.5) == 0.125
    assert theory.scale_factor(64, 1.0) == 1 / 64
    assert theory.scale_factor(64, 0.0) == 1.0
    assert theory.logit_std(64, 0.5) == 1.0
    assert theory.dot_product_excess_kurtosis(10, "normal") == pytest.approx(0.6)
    assert theory.dot_product_excess_kurtosis(10, "uniform") == pytest.approx(0.024)
    assert theory.dot_product_excess_kurtosis(10, "rademacher") == pytest.approx(-0.2)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: theory.dot_product_variance(0), "d must be an integer in \\[1"),
        (lambda: theory.dot_product_variance(2.5), "d must be an integer in"),
        (lambda: theory.dot_product_variance(True), "d must be an integer in"),
        (lambda: theory.dot_product_variance(4, sigma_q=0), "sigma_q"),
        (lambda: theory.dot_product_variance(4, sigma_k=-1), "sigma_k"),
        (lambda: theory.dot_product_variance(4, sigma_k=float("nan")), "sigma_k"),
        (lambda: theory.dot_product_mean(4, rho=1.0), "rho"),
        (lambda: theory.dot_product_mean(4, rho=float("nan")), "rho"),
        (lambda: theory.scale_factor(4, float("inf")), "alpha"),
        (lambda: theory.dot_product_excess_kurtosis(4, "cauchy"), "dist must be one of"),
    ],
)
def test_theory_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"d": 0, "n_samples": 10}, "d must be"),
        ({"d": 4, "n_samples": 0}, "n_samples must be"),
        ({"d": 4, "n_samples": 10, "dist": "gamma"}, "dist must be one of"),
        ({"d": 4, "n_samples": 10, "sigma_q": 0.0}, "sigma_q"),
        ({"d": 4, "n_samples": 10, "rho": -1.0}, "rho"),
        (
            {"d": 4, "n_samples": 10, "rho": 0.5, "dist": "uniform"},
            "only supported for dist='normal'",
        ),
    ],
)
def test_dot_products_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sampling.dot_products(rng=np.random.default_rng(0), **kwargs)


def test_sample_qk_bad_arguments():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="n must be"):
        sampling.sample_qk(0, 4, rng=rng)
    with pytest.raises(ValueError, match="n \\* d must be"):
        sampling.sample_qk(2**20, 2**8, rng=rng)
    with pytest.raises(ValueError, match="rng must be"):
        sampling.sample_qk(2, 4, rng=np.random.RandomState(0))
    with pytest.raises(ValueError, match="rademacher"):
        sampling.sample_qk(2, 4, rng=rng, dist="rademacher", rho=0.3)


@pytest.mark.parametrize("dist", DISTS)
def test_sample_qk_components(dist):
    q, k = sampling.sample_qk(
        50_000, 8, rng=np.random.default_rng(1), dist=dist, sigma_q=2.0, sigma_k=0.5
    )
    assert q.shape == k.shape == (50_000, 8)
    n = q.size
    for x, sigma in ((q, 2.0), (k, 0.5)):
        # mean within 4 s.e.; variance within 4 s.e. (se from the sample fourth moment)
        assert abs(x.mean()) < 4 * sigma / math.sqrt(n)
        m2, m4 = np.mean(x**2), np.mean(x**4)
        assert abs(m2 - sigma**2) <= 4 * math.sqrt((m4 - m2**2) / n)  # exact for ±σ
    if dist == "rademacher":
        assert set(np.unique(q)) == {-2.0, 2.0}
    if dist == "uniform":
        assert np.abs(q).max() <= 2.0 * math.sqrt(3.0)


def _batch_se(s, stat, n_batches=40):
    """Standard error of a statistic by batch means (no distributional assumption)."""
    vals = np.array([stat(b) for b in np.array_split(s, n_batches)])
    return vals.mean(), vals.std(ddof=1) / math.sqrt(n_batches)


def _second_moment(x):
    return np.mean(x * x)  # the mean is known to be 0: no centring bias


def _excess_kurtosis(x):
    return np.mean(x**4) / np.mean(x**2) ** 2 - 3.0


@pytest.mark.parametrize("dist", DISTS)
@pytest.mark.parametrize("d", [1, 7, 64, 1024])
def test_dot_products_variance_and_kurtosis(dist, d):
    rng = np.random.default_rng(10 + d)
    sq, sk = 1.5, 0.75
    s = sampling.dot_products(d, 400_000, rng=rng, dist=dist, sigma_q=sq, sigma_k=sk)
    var_hat, var_se = _batch_se(s, _second_moment)
    # <= and a rounding allowance: at d = 1 Rademacher scores are exactly ±σ_qσ_k (se = 0)
    assert abs(var_hat - theory.dot_product_variance(d, sq, sk)) <= 4 * var_se + 1e-12
    kurt_hat, kurt_se = _batch_se(s, _excess_kurtosis)
    # batch kurtosis has an O(1/batch size) bias; add it to the tolerance explicitly
    bias = 6.0 / (s.size / 40)
    assert abs(kurt_hat - theory.dot_product_excess_kurtosis(d, dist)) <= 4 * kurt_se + bias


@pytest.mark.parametrize("rho", [-0.6, 0.3, 0.9])
def test_dot_products_correlated(rho):
    d, sq, sk = 32, 1.0, 2.0
    s = sampling.dot_products(
        d, 400_000, rng=np.random.default_rng(3), sigma_q=sq, sigma_k=sk, rho=rho
    )
    mean_hat, mean_se = _batch_se(s, np.mean)
    var_hat, var_se = _batch_se(s, np.var)
    assert abs(mean_hat - theory.dot_product_mean(d, sq, sk, rho)) < 4 * mean_se
    assert abs(var_hat - theory.dot_product_variance(d, sq, sk, rho)) < 4 * var_se


def _ks_statistic(a, b):
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    cdf_a = np.searchsorted(a, grid, side="right") / a.size
    cdf_b = np.searchsorted(b, grid, side="right") / b.size
    return np.abs(cdf_a - cdf_b).max()


@pytest.mark.parametrize(
    ("dist", "d", "rho"),
    [(dist, d, 0.0) for dist in DISTS for d in (1, 64, 300)] + [("normal", 16, 0.7)],
)
def test_exact_sampler_matches_direct_sum(dist, d, rho):
    """Two-sample KS: the exact O(1) sampler and the explicit sum agree in distribution."""
    n = 20_000
    exact = sampling.dot_products(
        d, n, rng=np.random.default_rng(5), dist=dist, sigma_q=0.5, rho=rho
    )
    q, k = sampling.sample_qk(n, d, rng=np.random.default_rng(6), dist=dist, sigma_q=0.5, rho=rho)
    direct = (q * k).sum(axis=1)
    critical = 1.949 * math.sqrt(2 / n)  # two-sample KS critical value at the 0.1% level
    assert _ks_statistic(exact, direct) < critical
    if dist == "rademacher":  # same lattice, exactly
        assert set(np.unique(exact)) <= set(0.5 * (2.0 * np.arange(d + 1) - d))


def test_uniform_path_is_chunked(monkeypatch):
    """The direct path never holds more than CHUNK_ELEMENTS per operand."""
    monkeypatch.setattr(sampling, "CHUNK_ELEMENTS", 1000)
    seen = []
    real = sampling._components

    def spy(rng, shape, dist):
        seen.append(shape[0] * shape[1])
        return real(rng, shape, dist)

    monkeypatch.setattr(sampling, "_components", spy)
    s = sampling.dot_products(100, 5_003, rng=np.random.default_rng(0), dist="uniform")
    assert s.shape == (5_003,)
    assert max(seen) <= 1000
    assert len(seen) == 2 * math.ceil(5_003 / 10)


def test_same_seed_same_samples():
    a = sampling.dot_products(64, 1000, rng=np.random.default_rng(42))
    b = sampling.dot_products(64, 1000, rng=np.random.default_rng(42))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("d", [4, 64, 4096])
def test_score_matrix_std_has_the_exact_mean_variance(d):
    """E[std² of the 12 scores] = d (1 − 1/12): every score has variance d, and the
    scores are uncorrelated, so their mean has variance d/12. The sample mean of 20,000
    draws lies within 4 standard errors of it (a false alarm once in ~16,000 runs)."""
    std = sampling.score_matrix_std(d, 3, 4, 20_000, rng=np.random.default_rng(7))
    variance = std**2
    se = variance.std(ddof=1) / math.sqrt(variance.size)
    assert abs(variance.mean() - d * (1 - 1 / 12)) < 4 * se


def test_score_matrix_std_matches_the_direct_product():
    """The same law as the 12 scores of Q Kᵀ drawn in full (d = 8): the deciles of 20,000
    draws each agree within 0.04 √d (a decile's standard error here is ~0.005 √d)."""
    rng = np.random.default_rng(3)
    d, n = 8, 20_000
    exact = sampling.score_matrix_std(d, 3, 4, n, rng=rng)
    q, k = rng.standard_normal((n, 3, d)), rng.standard_normal((n, 4, d))
    direct = (q @ k.transpose(0, 2, 1)).reshape(n, -1).std(axis=1)
    deciles = np.linspace(0.1, 0.9, 9)
    np.testing.assert_allclose(
        np.quantile(exact, deciles), np.quantile(direct, deciles), atol=0.04 * math.sqrt(d)
    )


def test_score_matrix_std_bad_arguments():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="n_keys = 4"):
        sampling.score_matrix_std(3, 3, 4, 10, rng=rng)
    with pytest.raises(ValueError, match="n_draws"):
        sampling.score_matrix_std(8, 3, 4, 0, rng=rng)
