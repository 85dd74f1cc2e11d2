"""Monte Carlo experiments: exact fast sampler vs direct simulation, limits, μP, saturation.

Statistical checks use 4 standard errors: a single MC mean against a known
value within 4·se, two independent MC means within 4·sqrt(se₁² + se₂²).
Seeds are fixed, so every run is deterministic. The laws and reference values are
derived in docs/mathematics.md (section given at each test).
"""

from __future__ import annotations

import math
import tracemalloc
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

from core import experiments
from core.experiments import (
    DEAD_THRESHOLD,
    STAT_FIELDS,
    SaturationStats,
    classic_experiment_rowmax,
    naive_overflow_rate,
    naive_overflow_sweep,
    sample_scores,
    saturation_samples,
    saturation_stats,
    saturation_sweep,
)
from core.softmax import entropy, jacobian_norm, naive_softmax, row_overflows, softmax
from tests.core.closed_forms import expected_max, relevant_weight_bounds, top_two_gap_median

#: Expected maximum of 10 standard normals, 1.53875 (docs/mathematics.md §3.2), by quadrature.
E_10 = expected_max(10)


def rng_for(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def within(a: float, b: float, se: float) -> bool:
    return abs(a - b) < 4.0 * se


def direct_rows(d: int, n_keys: int, alpha: float, rho: float, n_rows: int, rng, chunk=500):
    """Independent reference: explicit q (rows, d) and K (rows, n_keys, d), then softmax."""
    out: dict[str, list[np.ndarray]] = {
        k: [] for k in ("max_weight", "entropy", "jac", "relevant", "argmax0", "logit0")
    }
    for start in range(0, n_rows, chunk):
        m = min(chunk, n_rows - start)
        q = rng.standard_normal((m, d))
        keys = rng.standard_normal((m, n_keys, d))
        keys[:, 0] = rho * q + math.sqrt(1 - rho**2) * keys[:, 0]
        logits = d**-alpha * np.einsum("md,mkd->mk", q, keys)  # (rows, n_keys)
        p = softmax(logits)
        out["max_weight"].append(p.max(axis=-1))
        out["entropy"].append(entropy(p))
        out["jac"].append(jacobian_norm(p))
        out["relevant"].append(p[:, 0])
        out["argmax0"].append(p.argmax(axis=-1) == 0)
        out["logit0"].append(logits[:, 0])
    return {k: np.concatenate(v) for k, v in out.items()}


def mean_se(x: np.ndarray) -> tuple[float, float]:
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


# --------------------------------------------------------------------------- fast vs direct

COMBOS = [(16, 10, 0.0, 0.0), (64, 10, 0.5, 0.0), (64, 10, 1.0, 0.5), (256, 8, 0.5, 0.5)]


@pytest.mark.parametrize(("d", "n_keys", "alpha", "rho"), COMBOS)
def test_fast_sampler_matches_direct_simulation(d, n_keys, alpha, rho):
    n_fast, n_direct = 40_000, 4_000
    fast = saturation_stats(d, n_keys, alpha, rng=rng_for(11), n_rows=n_fast, rho=rho)
    ref = direct_rows(d, n_keys, alpha, rho, n_direct, rng_for(12))
    c = d**-alpha

    pairs = [
        ("max_weight", fast.max_weight_mean, fast.max_weight_se),
        ("entropy", fast.entropy_mean, fast.entropy_se),
        ("jac", fast.jacobian_fro_mean, fast.jacobian_fro_se),
        ("relevant", fast.relevant_weight_mean, fast.relevant_weight_se),
        ("logit0", fast.relevant_logit_mean, fast.relevant_logit_se),
    ]
    for key, value, se in pairs:
        ref_mean, ref_se = mean_se(ref[key])
        assert abs(value - ref_mean) < 4 * math.hypot(se, ref_se), key
    ref_grad, ref_grad_se = mean_se(c * ref["jac"])
    assert abs(fast.grad_fro_mean - ref_grad) < 4 * math.hypot(fast.grad_fro_se, ref_grad_se)
    for value, se, flags in [
        (fast.relevant_argmax_rate, fast.relevant_argmax_se, ref["argmax0"]),
        (fast.dead_fraction, fast.dead_fraction_se, ref["jac"] < DEAD_THRESHOLD),
    ]:
        share = flags.mean()
        assert abs(value - share) <= 4 * math.hypot(se, math.sqrt(share * (1 - share) / n_direct))

    # Quantiles, distribution-free: the direct sample's CDF at the fast sample's
    # q-quantile is q up to the binomial noise of both samples.
    for q, value in [
        (0.1, fast.jacobian_fro_q10),
        (0.5, fast.jacobian_fro_median),
        (0.9, fast.jacobian_fro_q90),
    ]:
        cdf = float(np.mean(ref["jac"] <= value))
        assert abs(cdf - q) < 4 * math.sqrt(q * (1 - q) * (1 / n_fast + 1 / n_direct)), q
    assert fast.grad_fro_median == pytest.approx(c * fast.jacobian_fro_median, rel=1e-12)

    # Exact theory for the logits' first two moments.
    assert within(fast.relevant_logit_mean, c * rho * d, fast.relevant_logit_se)
    assert within(fast.logit_std, d ** (0.5 - alpha), fast.logit_std_se)


def test_sample_scores_moments():
    d, rho, n = 64, 0.5, 50_000
    s = sample_scores(d, 4, rng=rng_for(3), n_rows=n, rho=rho)
    assert s.shape == (n, 4)
    assert within(s[:, 0].mean(), rho * d, s[:, 0].std() / math.sqrt(n))
    dev0 = (s[:, 0] - rho * d) ** 2
    assert within(dev0.mean(), d * (1 + rho**2), dev0.std() / math.sqrt(n))
    sq = s[:, 1] ** 2
    assert within(sq.mean(), d, sq.std() / math.sqrt(n))


# --------------------------------------------------------------------------- limits (docs §3.3–§3.5)


def test_alpha_one_large_d_is_nearly_uniform():
    d, n = 4096, 10
    s = saturation_stats(d, n, 1.0, rng=rng_for(21))
    sigma2 = 1.0 / d  # logit variance d**(1 - 2 alpha)
    deficit = math.log(n) - s.entropy_mean
    assert 0 < deficit < 1e-3
    assert abs(deficit - sigma2 * (n - 1) / (2 * n)) < 4 * s.entropy_se + 1e-6
    assert (
        abs(s.max_weight_mean - (1 + math.sqrt(sigma2) * E_10) / n)
        < 4 * s.max_weight_se + sigma2 / n
    )
    assert s.jacobian_fro_mean == pytest.approx(math.sqrt(n - 1) / n, rel=1e-3)
    assert s.dead_fraction == 0.0


def test_alpha_zero_large_d_saturates_with_power_laws():
    d, n = 4096, 10
    s = saturation_stats(d, n, 0.0, rng=rng_for(22))
    sigma = math.sqrt(d)
    # Large-σ laws (docs/mathematics.md §3.4); their relative error is O(1/σ), 2 % slack at
    # σ = 64.
    for value, se, law in [
        (s.entropy_mean, s.entropy_se, math.pi**2 / 6 * E_10 / sigma),
        (1 - s.max_weight_mean, s.max_weight_se, math.log(2) * E_10 / sigma),
        (s.jacobian_fro_mean, s.jacobian_fro_se, E_10 / sigma),
    ]:
        assert abs(value - law) < 4 * se + 0.02 * law
    assert s.entropy_mean < 0.1
    assert s.dead_fraction > 0.5


def test_single_key_is_trivial():
    s = saturation_stats(64, 1, 0.5, rng=rng_for(23), n_rows=100)
    assert s.max_weight_mean == 1.0
    assert s.entropy_mean == 0.0
    assert s.jacobian_fro_mean == 0.0
    assert s.dead_fraction == 1.0
    assert s.relevant_argmax_rate == 1.0
    assert math.isnan(s.relevant_margin_mean)


def test_one_row_gives_nan_standard_errors_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = saturation_stats(8, 5, 0.5, rng=rng_for(24), n_rows=1)
    assert math.isnan(s.max_weight_se)
    assert 0.2 <= s.max_weight_mean <= 1.0


# --------------------------------------------------------------------------- μP (docs §2.3–§2.4)


def test_mup_relevant_weight_is_width_independent_with_inverse_d():
    stats = [saturation_stats(d, 10, 1.0, rng=rng_for(31), rho=0.5) for d in (16, 4096)]
    low, high = stats
    assert abs(low.relevant_weight_mean - high.relevant_weight_mean) < 4 * math.hypot(
        low.relevant_weight_se, high.relevant_weight_se
    )
    # Large-d limit: logits → (rho, 0, …, 0), weight e^½ / (e^½ + 9) = 0.1548 (docs §2.3).
    limit = math.exp(0.5) / (math.exp(0.5) + 9)
    assert within(high.relevant_weight_mean, limit, high.relevant_weight_se)


def test_mup_relevant_weight_locks_on_with_inverse_sqrt_d():
    at16 = saturation_stats(16, 10, 0.5, rng=rng_for(32), rho=0.5)
    at256 = saturation_stats(256, 10, 0.5, rng=rng_for(33), rho=0.5)
    # d_k = 16 has no closed form (≈ 0.37): a direct simulation with explicit q and keys.
    direct, direct_se = mean_se(direct_rows(16, 10, 0.5, 0.5, 4_000, rng_for(34))["relevant"])
    assert abs(at16.relevant_weight_mean - direct) < 4 * math.hypot(
        at16.relevant_weight_se, direct_se
    )
    # d_k = 256: 1 − E[x] ≤ E[w] ≤ 1 − E[x] + E[x²] = [0.99123, 0.99148] (docs §2.4).
    lower, upper = relevant_weight_bounds(256, 10, 0.5)
    se = at256.relevant_weight_se
    assert lower - 4 * se < at256.relevant_weight_mean < upper + 4 * se
    # Margin of the relevant logit grows like rho √d (minus the others' max).
    assert at256.relevant_margin_mean > 2 * at16.relevant_margin_mean > 0


# --------------------------------------------------------------------------- typical vs mean (§4.4)


def test_unscaled_median_jacobian_collapses_but_mean_gradient_does_not():
    unscaled = saturation_stats(1024, 10, 0.0, rng=rng_for(41))
    scaled = saturation_stats(1024, 10, 0.5, rng=rng_for(42))
    # docs/mathematics.md §4.4: ‖J‖_F ≈ 2 e^(−σ G) decreases in the top-two gap G, so the
    # median row has ≈ 2 e^(−σ m), m the median of G (σ = √1024 = 32): 3.6e-6. The spread of
    # ‖q‖ (±2 % of σ, ±0.3 in the exponent) and the third key move it by less than 2×.
    typical = 2 * math.exp(-32 * top_two_gap_median(10))
    assert typical / 2 < unscaled.jacobian_fro_median < 2 * typical
    # With 1/√d_k the logits given q are iid N(0, ‖q‖²/d_k), of spread ≈ 1 at every d_k, and
    # the median ‖J‖_F stays ≈ 0.35. Reference: 100,000 such rows drawn with plain NumPy;
    # its CDF at core's median is ½ up to the binomial noise of both samples.
    rng = rng_for(43)
    z = rng.standard_normal((100_000, 10)) * np.sqrt(rng.chisquare(1024, (100_000, 1)) / 1024)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    s2 = (p * p).sum(axis=1)
    fro = np.sqrt(s2 - 2 * (p**3).sum(axis=1) + s2**2)  # no saturation: no cancellation
    cdf = float(np.mean(fro <= scaled.jacobian_fro_median))
    assert abs(cdf - 0.5) < 4 * math.sqrt(0.25 * (1 / 100_000 + 1 / 20_000))
    assert unscaled.dead_fraction > 0.5
    assert scaled.dead_fraction < 0.01
    # Mean ‖∂p/∂s‖_F (with the 1/c factor): unscaled is NOT smaller, rare near-ties keep it up.
    gap = unscaled.grad_fro_mean - scaled.grad_fro_mean
    assert gap > 10 * math.hypot(unscaled.grad_fro_se, scaled.grad_fro_se)
    # …while the logit-space mean ‖J‖_F is smaller, and the typical row is dead.
    assert unscaled.jacobian_fro_mean < scaled.jacobian_fro_mean
    assert unscaled.grad_fro_median < 1e-3 * scaled.grad_fro_median


# --------------------------------------------------------------------------- classic experiment


def test_classic_experiment_unscaled_row_max():
    rowmax = classic_experiment_rowmax(rng=rng_for(51), alpha=0.0)
    assert rowmax.shape == (2000, 4, 10)
    # Rows of one replicate share K: the s.e. comes from replicate means.
    mean, se = mean_se(rowmax.mean(axis=(1, 2)))
    # ≈ 0.86 (docs/mathematics.md §3.6): the exact one-row sampler gives the same mean
    # (each row is 10 iid N(0, ‖q‖²) scores given q).
    exact = saturation_stats(64, 10, 0.0, rng=rng_for(52), n_rows=100_000)
    assert abs(mean - exact.max_weight_mean) < 4 * math.hypot(se, exact.max_weight_se)
    tensor_max = rowmax.max(axis=(1, 2))
    assert tensor_max.mean() > 0.999  # the tensor's largest entry is ≈ 1 …
    # …while a typical row is not: about 40 % of rows have max weight < 0.9, and
    # only about 10 % exceed 0.9999.
    assert 0.3 < np.mean(rowmax < 0.9) < 0.5
    assert np.mean(rowmax > 0.9999) < 0.2


def test_classic_experiment_scaled_and_shapes():
    rowmax = classic_experiment_rowmax(2, 5, 16, 300, rng=rng_for(53), alpha=0.5)
    assert rowmax.shape == (300, 2, 5)
    assert ((rowmax >= 1 / 5) & (rowmax <= 1)).all()
    scaled = classic_experiment_rowmax(rng=rng_for(54), alpha=0.5, n_replicates=500)
    assert scaled.mean() < 0.4


# --------------------------------------------------------------------------- float16 overflow (§5)


def test_naive_overflow_rate_float16():
    rates = naive_overflow_sweep([16, 48, 60, 256], 10, [0.0, 0.5], rng=rng_for(61))
    unscaled, scaled = rates
    assert unscaled[0] < 0.1
    assert unscaled[1] < 0.5 < unscaled[2]  # crosses one half at d_k ≈ 55 (docs §5.2)
    assert unscaled[3] > 0.9
    assert (scaled == 0).all()  # true rate 3e-13 at d_k = 16, less beyond (docs §5.2)
    assert naive_overflow_rate(4096, 10, 0.5, rng=rng_for(62)) == 0.0


def test_naive_overflow_rate_matches_direct_count():
    d, n = 52, 4000
    rate = naive_overflow_rate(d, 10, 0.0, rng=rng_for(63), n_rows=20_000)
    rng = rng_for(64)
    logits = np.einsum("md,mkd->mk", rng.standard_normal((n, d)), rng.standard_normal((n, 10, d)))
    direct = float(np.mean(~np.isfinite(naive_softmax(logits)).all(axis=-1)))
    se = math.hypot(math.sqrt(rate * (1 - rate) / 20_000), math.sqrt(direct * (1 - direct) / n))
    assert abs(rate - direct) < 4 * se


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("n_keys", [1, 2, 10, 512])
def test_rows_skipped_as_safe_never_overflow(dtype, n_keys):
    """The sweep runs the naive softmax only on rows that may overflow: every row that
    does overflow must be among them, including rows just past the threshold."""
    rng = np.random.default_rng(67)
    limit = math.log(float(np.finfo(dtype).max))
    top = rng.uniform(limit - math.log(n_keys) - 1.0, limit + 0.5, 20_000)
    logits = top[:, None] - rng.exponential(0.05, (top.size, n_keys))  # near-ties
    logits[np.arange(top.size), rng.integers(0, n_keys, top.size)] = top
    overflows = row_overflows(logits, dtype)
    flagged = experiments._may_overflow(logits.max(axis=1), n_keys, np.dtype(dtype))
    assert overflows.any() and (~overflows).any()
    assert not (overflows & ~flagged).any()
    assert (~flagged).any()  # and some rows are skipped


def test_naive_overflow_rate_float32():
    assert naive_overflow_rate(64, 10, 0.0, np.float32, rng=rng_for(65)) == 0.0
    assert naive_overflow_rate(4096, 10, 0.0, np.float32, rng=rng_for(66)) > 0.3


# --------------------------------------------------------------------------- sweep


def test_sweep_shapes_and_consistency():
    ds, alphas = [64, 128, 256], [0.0, 0.5, 1.0]
    sweep = saturation_sweep(ds, 10, alphas, rng=rng_for(71), n_rows=5_000, rho=0.3)
    assert set(sweep) == {*STAT_FIELDS, "d", "alpha"}
    for name in STAT_FIELDS:
        assert sweep[name].shape == (3, 3), name
    assert (sweep["d"][1] == ds).all()
    assert (sweep["alpha"][:, 0] == alphas).all()
    # The first d_k of a sweep consumes the generator exactly as saturation_stats does.
    single = saturation_stats(64, 10, 0.5, rng=rng_for(71), n_rows=5_000, rho=0.3)
    for name in STAT_FIELDS:
        assert_allclose(sweep[name][1, 0], getattr(single, name), rtol=1e-12, err_msg=name)
    # Scaling never changes which key is largest.
    assert (sweep["relevant_argmax_rate"] == sweep["relevant_argmax_rate"][0]).all()
    assert (np.diff(sweep["entropy_mean"], axis=0) > 0).all()  # more scaling, more entropy


def test_samples_agree_with_stats():
    samples = saturation_samples(64, 10, 0.5, rng=rng_for(72), n_rows=3_000, rho=0.2)
    stats = saturation_stats(64, 10, 0.5, rng=rng_for(72), n_rows=3_000, rho=0.2)
    assert all(v.shape == (3_000,) for v in samples.values())
    assert np.median(samples["jacobian_fro"]) == pytest.approx(stats.jacobian_fro_median, rel=1e-12)
    assert samples["grad_fro"].mean() == pytest.approx(stats.grad_fro_mean, rel=1e-12)
    assert samples["relevant_is_argmax"].mean() == stats.relevant_argmax_rate
    assert isinstance(stats, SaturationStats)


def test_chunking_does_not_change_results(monkeypatch):
    kwargs = dict(rng=None, n_rows=3_000, rho=0.4)
    reference = saturation_sweep([32, 512], 10, [0.0, 0.5], **{**kwargs, "rng": rng_for(73)})
    monkeypatch.setattr(experiments, "_CHUNK_ELEMENTS", 1_000)
    monkeypatch.setattr(experiments, "_BLOCK_ELEMENTS", 700)
    monkeypatch.setattr(experiments, "_Z_CACHE_ELEMENTS", 0)
    chunked = saturation_sweep([32, 512], 10, [0.0, 0.5], **{**kwargs, "rng": rng_for(73)})
    for name in STAT_FIELDS:
        assert_allclose(chunked[name], reference[name], rtol=1e-12, err_msg=name)


def test_memory_is_bounded_at_large_controls():
    tracemalloc.start()
    try:
        saturation_stats(4096, 512, 0.5, rng=rng_for(74), n_rows=50_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 80e6  # one (n_rows, n_keys) float64 array alone would be 205 MB


# --------------------------------------------------------------------------- bad arguments

GOOD = dict(d=64, n_keys=10, alpha=0.5)


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("d", {"d": 0}),
        ("d", {"d": 2.5}),
        ("d", {"d": 2**21}),
        ("n_keys", {"n_keys": 0}),
        ("alpha", {"alpha": -0.1}),
        ("alpha", {"alpha": math.nan}),
        ("alpha", {"alpha": 5.0}),
        ("rho", {"rho": 1.0}),
        ("rho", {"rho": -1.5}),
        ("n_rows", {"n_rows": 0}),
        ("rng", {"rng": 42}),
    ],
)
def test_bad_arguments_name_the_argument(name, kwargs):
    args = {**GOOD, "rng": rng_for(0), **kwargs}
    with pytest.raises(ValueError, match=rf"^{name} must"):
        saturation_stats(**args)


def test_bad_sweep_and_overflow_arguments():
    rng = rng_for(0)
    with pytest.raises(ValueError, match="d_values must be a non-empty"):
        saturation_sweep([], 10, [0.5], rng=rng)
    with pytest.raises(ValueError, match=r"d_values\[1\] must be an integer"):
        saturation_sweep([4, 0], 10, [0.5], rng=rng)
    with pytest.raises(ValueError, match=r"alphas\[0\] must be a finite number"):
        saturation_sweep([4], 10, [9.0], rng=rng)
    with pytest.raises(ValueError, match="dtype"):
        naive_overflow_rate(4, 10, 0.0, np.int16, rng=rng)
    with pytest.raises(ValueError, match="d_k must be an integer"):
        classic_experiment_rowmax(d_k=0, rng=rng, alpha=0.5)
    with pytest.raises(ValueError, match="n_replicates"):
        classic_experiment_rowmax(n_replicates=0, rng=rng, alpha=0.5)
