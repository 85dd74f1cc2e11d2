"""Exact identities of softmax, entropy and the softmax Jacobian (docs/mathematics.md §3–§5)."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from core.softmax import (
    entropy,
    gaussian_overflow_chance,
    jacobian_norm,
    naive_softmax,
    overflow_threshold,
    row_overflows,
    row_underflows,
    scaled_overflow_chance,
    softmax,
    softmax_entropy,
    softmax_jacobian,
    underflow_threshold,
)

RTOL = 1e-12


def loop_softmax(row: list[float]) -> list[float]:
    """Plain-Python reference softmax of one row."""
    top = max(row)
    exps = [math.exp(x - top) for x in row]
    total = sum(exps)
    return [e / total for e in exps]


def loop_jacobian(p: list[float]) -> np.ndarray:
    n = len(p)
    return np.array([[(p[i] if i == j else 0.0) - p[i] * p[j] for j in range(n)] for i in range(n)])


@pytest.fixture
def logits() -> np.ndarray:
    rng = np.random.default_rng(20240601)
    return rng.normal(0.0, 3.0, size=(50, 12))  # (rows, n_keys)


# --------------------------------------------------------------------------- softmax


def test_softmax_matches_loop_reference_and_sums_to_one(logits):
    p = softmax(logits)
    expected = np.array([loop_softmax(list(row)) for row in logits])
    assert_allclose(p, expected, rtol=RTOL)
    assert_allclose(p.sum(axis=-1), 1.0, rtol=RTOL)
    assert (p > 0).all()


def test_softmax_axis(logits):
    assert_allclose(softmax(logits.T, axis=0), softmax(logits).T, rtol=RTOL)
    cube = logits.reshape(5, 10, 12)
    assert_allclose(softmax(cube, axis=1).sum(axis=1), 1.0, rtol=RTOL)


@pytest.mark.parametrize("shift", [-50.0, 3.5, 1000.0])
def test_softmax_shift_invariance(logits, shift):
    assert_allclose(softmax(logits + shift), softmax(logits), rtol=RTOL)


@pytest.mark.parametrize(
    ("z", "expected"),
    [([10.0, 5.0], [0.9933071, 0.0066929]), ([1.25, 0.625], [0.6513549, 0.3486451])],
)
def test_two_score_examples(z, expected):
    # docs/mathematics.md §3.1: two keys give the logistic function of the gap
    logistic = 1 / (1 + math.exp(-(z[0] - z[1])))
    assert_allclose(softmax(z), [logistic, 1 - logistic], rtol=RTOL)
    assert_allclose(softmax(z), expected, atol=5e-8)  # the page's 7 decimals


def test_softmax_large_logits_do_not_overflow():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = softmax([1000.0, 0.0, -1000.0])
    assert_array_equal(p, [1.0, 0.0, 0.0])


def test_masking_with_neg_inf():
    z = np.array([[1.0, -np.inf, 2.0, 0.5]])
    p = softmax(z)
    assert p[0, 1] == 0.0
    assert_allclose(p[0, [0, 2, 3]], loop_softmax([1.0, 2.0, 0.5]), rtol=RTOL)


def test_fully_masked_row_is_all_zeros():
    z = np.array([[-np.inf, -np.inf, -np.inf], [0.0, 1.0, -np.inf]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = softmax(z)
    assert_array_equal(p[0], 0.0)
    assert_allclose(p[1], [*loop_softmax([0.0, 1.0]), 0.0], rtol=RTOL)


def test_softmax_dtypes():
    assert softmax(np.array([1.0, 2.0], dtype=np.float32)).dtype == np.float32
    assert_allclose(softmax([1, 2, 3]), loop_softmax([1.0, 2.0, 3.0]), rtol=RTOL)


@pytest.mark.parametrize("bad", [[1.0, np.nan], [1.0, np.inf]])
def test_softmax_rejects_nan_and_pos_inf(bad):
    with pytest.raises(ValueError, match=r"^z must not contain"):
        softmax(bad)


def test_softmax_rejects_empty_and_scalar():
    with pytest.raises(ValueError, match="z must have at least one entry"):
        softmax(np.zeros((3, 0)))
    with pytest.raises(ValueError, match="z must have at least one dimension"):
        softmax(1.0)


# --------------------------------------------------------------------------- naive softmax


def test_naive_softmax_matches_stable_softmax_when_nothing_overflows(logits):
    small = logits / 3.0
    assert_allclose(naive_softmax(small, dtype=np.float64), softmax(small), rtol=1e-12)
    assert_allclose(naive_softmax(small, dtype=np.float32), softmax(small), rtol=1e-5)
    assert naive_softmax(small, dtype=np.float32).dtype == np.float32
    assert_allclose(naive_softmax(small), softmax(small), rtol=2e-2, atol=1e-3)  # float16


@pytest.mark.parametrize(
    ("dtype", "threshold"),
    [
        # ln(max + ½ ulp) from the IEEE 754 formats (docs/mathematics.md §5.1)
        (np.float16, math.log(65504 + 16)),  # 11.0901
        (np.float32, math.log((2 - 2**-24) * 2.0**127)),  # 88.7228
        (np.float64, 1024 * math.log(2) + math.log1p(-(2**-54))),  # 709.7827
    ],
)
def test_overflow_threshold_values(dtype, threshold):
    # two evaluations of a logarithm in different arrangements: a few ulps apart at most
    assert overflow_threshold(dtype) == pytest.approx(threshold, rel=1e-14)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_overflow_threshold_is_within_one_ulp(dtype):
    t = np.array(overflow_threshold(dtype), dtype=dtype)
    below, above = np.nextafter(t, dtype(-np.inf)), np.nextafter(t, dtype(np.inf))
    with np.errstate(over="ignore"):
        assert np.isfinite(np.exp(below))
        assert np.isinf(np.exp(above))


def test_float16_exact_thresholds():
    assert overflow_threshold(np.float16) > math.log(65504.0)  # max + ½ ulp, not max
    ok = naive_softmax([11.08, 0.0])
    assert np.isfinite(ok).all()
    assert float(ok.astype(np.float64).sum()) == pytest.approx(1.0, abs=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bad = naive_softmax([11.1, 0.0])
    assert np.isnan(bad[0])
    assert bad[1] == 0.0
    assert_array_equal(row_overflows([[11.08, 0.0], [11.1, 0.0]]), [False, True])


def test_float32_exact_thresholds():
    assert np.isfinite(naive_softmax([88.72, 0.0], dtype=np.float32)).all()
    assert np.isnan(naive_softmax([88.73, 0.0], dtype=np.float32)[0])
    assert_array_equal(row_overflows([[88.72, 0.0], [88.73, 0.0]], dtype=np.float32), [False, True])


def test_float16_row_sum_overflow_gives_zeros():
    # Each exp(11.0) = 59874 fits in float16, but six of them sum past 65504.
    z = np.full(6, 11.0)
    assert np.isfinite(np.exp(z.astype(np.float16))).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = naive_softmax(z)
    assert_array_equal(p, 0.0)  # silently sums to 0, not 1
    assert row_overflows(z)
    # Three values of 10: 3 * 22026 = 66078 > 65504; two are fine.
    assert_array_equal(row_overflows([[10.0, 10.0, 10.0], [10.0, 10.0, -np.inf]]), [True, False])
    assert_allclose(softmax(z), 1 / 6, rtol=RTOL)  # the stable softmax is fine


def test_float16_underflow():
    # ln of half the smallest subnormal, 2⁻²⁵ (docs/mathematics.md §5.1)
    assert underflow_threshold(np.float16) == pytest.approx(-25 * math.log(2), rel=1e-14)
    assert np.exp(np.float16(-17.0)) > 0
    assert np.exp(np.float16(-17.4)) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = naive_softmax([-18.0, -18.0, -18.0])
    assert np.isnan(p).all()
    assert_array_equal(row_underflows([[-18.0, -18.0], [-17.0, -18.0]]), [True, False])
    assert not row_overflows([-18.0, -18.0])
    assert_allclose(softmax([-18.0, -18.0, -18.0]), 1 / 3, rtol=RTOL)


def test_naive_softmax_rejects_bad_dtype_and_nan():
    with pytest.raises(ValueError, match="dtype"):
        naive_softmax([1.0, 2.0], dtype=np.int32)
    with pytest.raises(ValueError, match="z must not contain NaN"):
        naive_softmax([1.0, np.nan])


# --------------------------------------------------------------------------- entropy


def test_entropy_known_values():
    for n in (1, 2, 10, 512):
        assert entropy(np.full(n, 1.0 / n)) == pytest.approx(math.log(n), rel=RTOL)
    assert entropy([0.0, 1.0, 0.0]) == 0.0
    assert entropy([0.0, 0.0]) == 0.0  # fully masked row
    assert entropy([0.5, 0.5]) == pytest.approx(math.log(2), rel=RTOL)


def test_entropy_matches_loop_and_bounds(logits):
    p = softmax(logits)
    h = entropy(p)
    expected = [-sum(x * math.log(x) for x in row if x > 0) for row in p]
    assert_allclose(h, expected, rtol=RTOL)
    assert (h >= 0).all()
    assert (h <= math.log(logits.shape[1]) + 1e-12).all()
    assert_allclose(entropy(p.T, axis=0), h, rtol=RTOL)


def test_softmax_entropy_matches_entropy(logits):
    assert_allclose(softmax_entropy(logits), entropy(softmax(logits)), rtol=1e-12)
    z = np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf]])
    assert_allclose(softmax_entropy(z), [entropy(softmax(z[0])), 0.0], rtol=RTOL)


def test_softmax_entropy_accurate_when_saturated():
    g = 40.0
    eps = math.exp(-g)
    exact = math.log1p(eps) + g * eps / (1 + eps)
    assert softmax_entropy([0.0, -g]) == pytest.approx(exact, rel=1e-13)
    # The p-based formula loses the −p_max ln p_max ≈ eps term (p_max rounds to 1).
    assert entropy(softmax([0.0, -g])) == pytest.approx(exact * g / (g + 1), rel=1e-3)


def test_entropy_rejects_bad_weights():
    with pytest.raises(ValueError, match="p must be non-negative"):
        entropy([0.5, -0.1, 0.6])
    with pytest.raises(ValueError, match="p must not contain NaN"):
        entropy([0.5, np.nan])


# --------------------------------------------------------------------------- Jacobian


def test_jacobian_matches_loop_and_identities(logits):
    p = softmax(logits)
    jac = softmax_jacobian(p)
    assert jac.shape == (*p.shape, p.shape[-1])
    assert_allclose(jac[3], loop_jacobian(list(p[3])), rtol=RTOL, atol=1e-17)
    assert_array_equal(jac, np.swapaxes(jac, -1, -2))  # symmetric
    assert_allclose(jac.sum(axis=-1), 0.0, atol=1e-15)  # J·1 = 0
    assert_allclose(np.trace(jac, axis1=-2, axis2=-1), 1 - (p * p).sum(-1), rtol=RTOL)
    eig = np.linalg.eigvalsh(jac)
    assert (eig >= -1e-15).all()  # positive semidefinite
    assert (eig[:, -1] <= np.minimum(0.5, p.max(axis=-1)) + 1e-15).all()


def test_jacobian_norm_closed_form_equals_explicit(logits):
    p = softmax(logits)
    explicit = np.linalg.norm(softmax_jacobian(p), ord="fro", axis=(-2, -1))
    assert_allclose(jacobian_norm(p), explicit, rtol=RTOL)
    s2, s3 = (p**2).sum(-1), (p**3).sum(-1)
    assert_allclose(jacobian_norm(p), np.sqrt(s2 - 2 * s3 + s2**2), rtol=1e-10)
    spectral = np.linalg.norm(softmax_jacobian(p), ord=2, axis=(-2, -1))
    assert_allclose(jacobian_norm(p, ord=2), spectral, rtol=1e-10)
    assert_allclose(jacobian_norm(p.T, axis=0), jacobian_norm(p), rtol=RTOL)


@pytest.mark.parametrize(("z", "expected"), [([10.0, 5.0], 0.0132961), ([1.25, 0.625], 0.4541834)])
def test_two_key_jacobian_values(z, expected):
    # docs/mathematics.md §4.1: ‖J‖_F = 2 p₁ p₂ = 2 e^(−g) / (1 + e^(−g))², g the gap
    gap = z[0] - z[1]
    assert 2 * math.exp(-gap) / (1 + math.exp(-gap)) ** 2 == pytest.approx(expected, abs=5e-8)
    p = softmax(z)
    assert jacobian_norm(p) == pytest.approx(expected, abs=5e-8)
    assert jacobian_norm(p) == pytest.approx(2 * p[0] * p[1], rel=RTOL)
    assert jacobian_norm(p, ord=2) == pytest.approx(2 * p[0] * p[1], rel=1e-12)
    assert np.trace(softmax_jacobian(p)) == pytest.approx(2 * p[0] * p[1], rel=RTOL)


@pytest.mark.parametrize("n", [2, 10, 512])
def test_uniform_limit(n):
    p = np.full(n, 1.0 / n)
    assert jacobian_norm(p) == pytest.approx(math.sqrt(n - 1) / n, rel=RTOL)
    assert jacobian_norm(p, ord=2) == pytest.approx(1.0 / n, rel=1e-10)


def test_gap_law_relative_error_vanishes():
    n = 10
    errors = []
    for g in (5.0, 10.0, 15.0, 20.0, 30.0):
        eps = np.full(n - 1, math.exp(-g))
        approx = math.sqrt(eps.sum() ** 2 + 3 * (eps**2).sum())
        exact = jacobian_norm(softmax([g] + [0.0] * (n - 1)))
        errors.append(abs(exact / approx - 1))
    assert errors == sorted(errors, reverse=True)
    assert errors[2] < 1e-3  # g = 15
    assert errors[-1] < 1e-9  # g = 30: ‖J‖_F ≈ 1e-12, below the plain formula's roundoff


def test_jacobian_norm_accurate_far_into_saturation():
    # Two keys, gap 300: ‖J‖_F = 2 p1 p2 ≈ 2 e^-300 ≈ 1e-130; the plain
    # closed form Σp² − 2Σp³ + (Σp²)² cancels to 0 here.
    p = softmax([300.0, 0.0])
    assert jacobian_norm(p) == pytest.approx(2 * p[0] * p[1], rel=1e-12)
    assert jacobian_norm(p) > 0


def test_jacobian_norm_masked_and_single_key():
    assert_array_equal(jacobian_norm(np.zeros((2, 4))), 0.0)
    assert jacobian_norm([1.0]) == 0.0
    assert jacobian_norm([0.0, 1.0, 0.0], ord=2) == 0.0


def test_jacobian_norm_rejects_bad_input():
    with pytest.raises(ValueError, match="p must hold probability vectors"):
        jacobian_norm([0.2, 0.2])
    with pytest.raises(ValueError, match="ord must be"):
        jacobian_norm([0.5, 0.5], ord=1)
    with pytest.raises(ValueError, match="p must be non-negative"):
        softmax_jacobian([1.5, -0.5])


def test_gaussian_overflow_chance_one_key_is_the_normal_tail():
    t16 = overflow_threshold(np.float16)
    assert gaussian_overflow_chance(1) == pytest.approx(
        0.5 * math.erfc(t16 / math.sqrt(2)), rel=1e-12
    )
    # tiny chances: 1 − (1 − Q)^n = n·Q to far below float64's epsilon
    assert gaussian_overflow_chance(512) == pytest.approx(
        512 * gaussian_overflow_chance(1), rel=1e-9
    )
    assert 6.9e-28 < gaussian_overflow_chance(10) < 7.1e-28
    assert gaussian_overflow_chance(10, np.float32) == 0.0  # Q(88.7) underflows float64


def test_gaussian_overflow_chance_against_simulation():
    # std 5: Q(11.09/5) = 0.0133 per logit; 10 keys -> 0.125 per row
    rng = np.random.default_rng(7)
    n_rows, n_keys, std = 200_000, 10, 5.0
    logits = rng.standard_normal((n_rows, n_keys)) * std
    # some exp is inf (row_overflows also counts a row whose finite terms sum past 65504)
    rate = (logits >= overflow_threshold(np.float16)).any(axis=1).mean()
    p = gaussian_overflow_chance(n_keys, std=std)
    se = math.sqrt(p * (1 - p) / n_rows)
    assert abs(rate - p) < 4 * se, (rate, p, se)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_keys": 0}, "n_keys"),
        ({"n_keys": 2.5}, "n_keys"),
        ({"n_keys": 3, "std": 0.0}, "std"),
        ({"n_keys": 3, "std": float("nan")}, "std"),
        ({"n_keys": 3, "dtype": np.int32}, "dtype"),
    ],
)
def test_gaussian_overflow_chance_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gaussian_overflow_chance(**kwargs)


@pytest.mark.parametrize(("d_k", "n_keys"), [(1, 10), (2, 3), (8, 10), (64, 512)])
def test_scaled_overflow_chance_against_simulation(d_k, n_keys):
    # a threshold low enough to be seen in 100,000 rows: q, K ~ N(0, I), logits K q/√d_k
    rng = np.random.default_rng(d_k)
    n_rows, threshold = 100_000, 3.5
    q = rng.standard_normal((n_rows, d_k))
    norms = np.linalg.norm(q, axis=1, keepdims=True)
    # given q, each q·k_j/√d_k is N(0, ‖q‖²/d_k): drawn exactly, as the app does
    logits = rng.standard_normal((n_rows, n_keys)) * norms / math.sqrt(d_k)
    rate = (logits >= threshold).any(axis=1).mean()
    p = scaled_overflow_chance(d_k, n_keys, threshold=threshold)
    se = math.sqrt(p * (1 - p) / n_rows)
    assert abs(rate - p) < 4 * se, (rate, p, se)


def test_scaled_overflow_chance_falls_to_the_gaussian_limit():
    chances = [scaled_overflow_chance(d, 10) for d in (1, 8, 64, 1024, 4096)]
    assert all(a > b for a, b in itertools.pairwise(chances))
    assert 6e-19 < chances[2] < 8e-19  # float16, d_k = 64: far above the Gaussian 7·10⁻²⁸
    assert scaled_overflow_chance(10**6, 10) == pytest.approx(
        gaussian_overflow_chance(10), rel=0.01
    )
    assert scaled_overflow_chance(64, 10, np.float32) < 1e-250  # 88.7 standard deviations


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"d_k": 0, "n_keys": 3}, "d_k"),
        ({"d_k": 4, "n_keys": 0}, "n_keys"),
        ({"d_k": 4, "n_keys": 3, "threshold": -1.0}, "threshold"),
        ({"d_k": 4, "n_keys": 3, "dtype": np.int8}, "dtype"),
    ],
)
def test_scaled_overflow_chance_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        scaled_overflow_chance(**kwargs)


def _scaled_overflow_every_point(d: int, n: int, dtype) -> float:
    """The quadrature of scaled_overflow_chance with erfc evaluated at every grid point."""
    t = overflow_threshold(dtype)
    x = np.linspace(0.0, math.sqrt(d) + 40.0, 40_001)[1:]
    log_density = (
        (d - 1) * np.log(x) - 0.5 * x**2 - (0.5 * d - 1) * math.log(2) - math.lgamma(0.5 * d)
    )
    tail = np.array([0.5 * math.erfc(t * math.sqrt(d) / v / math.sqrt(2.0)) for v in x])
    values = np.exp(log_density) * -np.expm1(n * np.log1p(-tail))
    return float(min(1.0, (x[1] - x[0]) * (values.sum() - 0.5 * values[-1])))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("d", [1, 3, 64, 1000, 4096])
@pytest.mark.parametrize("n", [1, 10, 65536])
def test_scaled_overflow_chance_skips_only_points_that_cannot_matter(d, n, dtype):
    # erfc is evaluated only in the window where the integrand can matter: the same sum
    assert scaled_overflow_chance(d, n, dtype) == _scaled_overflow_every_point(d, n, dtype)
