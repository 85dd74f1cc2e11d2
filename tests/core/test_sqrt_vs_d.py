"""√d_k vs d_k: logit scales against theory, softmax limits, μP stability, discrimination.

Statistics are compared with theory within 4 standard errors (the s.e. reported by
core.experiments); two independent estimates within 4·sqrt(se₁² + se₂²). The laws are
derived in docs/mathematics.md (section given at each test).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from core.experiments import saturation_stats, saturation_sweep
from core.scaling import (
    independent_logit_std,
    linear_scaling_weight_limit,
    relevant_logit_mean,
    signal_to_noise,
)
from tests.core.closed_forms import expected_max, relevant_weight_bounds

#: Expected maximum of 10 standard normals, 1.53875 (docs/mathematics.md §3.2), by quadrature.
E_10 = expected_max(10)


# --------------------------------------------------------------------------- closed forms


#: The closed forms are one ``np.power`` (and a product): NumPy's SIMD ``pow`` kernels
#: (AVX-512 SVML, or the C library's) are accurate to a few ULPs, and need not return an
#: exactly representable power such as 64**−½ exactly.
POW_RTOL = 4 * np.finfo(float).eps


def test_closed_forms_reference_values():
    assert independent_logit_std(64, 0.0) == pytest.approx(8.0, rel=POW_RTOL)
    assert independent_logit_std(64, 0.5) == pytest.approx(1.0, rel=POW_RTOL)
    assert independent_logit_std(64, 1.0) == pytest.approx(0.125, rel=POW_RTOL)
    assert relevant_logit_mean(64, 0.0, 0.5) == pytest.approx(32.0, rel=POW_RTOL)
    assert relevant_logit_mean(64, 0.5, 0.5) == pytest.approx(4.0, rel=POW_RTOL)
    assert relevant_logit_mean(64, 1.0, 0.5) == pytest.approx(0.5, rel=POW_RTOL)
    assert signal_to_noise(64, 0.5) == 4.0  # √64, correctly rounded on every CPU
    # docs/mathematics.md §2.3: the 1/d_k weight's large-d_k limit e^½/(e^½ + 9)
    assert linear_scaling_weight_limit(10, 0.5) == pytest.approx(0.154828, abs=1e-6)
    assert linear_scaling_weight_limit(10, 0.0) == pytest.approx(0.1)


@pytest.mark.parametrize("alpha", [0.0, 0.25, 0.5, 1.0, 1.5])
def test_signal_to_noise_does_not_depend_on_alpha(alpha):
    d = np.array([1, 16, 256, 4096])
    ratio = relevant_logit_mean(d, alpha, 0.3) / independent_logit_std(d, alpha)
    np.testing.assert_allclose(ratio, signal_to_noise(d, 0.3), rtol=1e-12)


def test_arrays_keep_their_shape():
    d = np.array([[1, 2], [4, 8]])
    assert independent_logit_std(d, 0.5).shape == (2, 2)
    assert relevant_logit_mean(d, 1.0, 0.2).shape == (2, 2)
    np.testing.assert_allclose(relevant_logit_mean(d, 1.0, 0.2), 0.2, rtol=POW_RTOL)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: independent_logit_std(0, 0.5), "d"),
        (lambda: independent_logit_std(2.5, 0.5), "d"),
        (lambda: independent_logit_std([4, 0], 0.5), "d[1]"),
        (lambda: independent_logit_std(4, -0.1), "alpha"),
        (lambda: independent_logit_std(4, math.nan), "alpha"),
        (lambda: relevant_logit_mean(4, 0.5, 1.0), "rho"),
        (lambda: signal_to_noise(4, -1.5), "rho"),
        (lambda: linear_scaling_weight_limit(0, 0.5), "n_keys"),
        (lambda: linear_scaling_weight_limit(10, math.inf), "rho"),
    ],
)
def test_bad_arguments_name_themselves(call, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)} must"):
        call()


# --------------------------------------------------------------------------- logit scale


@pytest.mark.parametrize(
    ("d", "alpha", "rho"),
    [
        (1, 0.0, 0.3),
        (16, 0.5, 0.5),
        (64, 1.0, 0.0),
        (64, 1.5, 0.5),
        (256, 1.0, 0.9),
        (1024, 0.0, 0.5),
        (4096, 0.75, 0.2),
        (4096, 0.5, 0.0),
    ],
)
def test_logit_mean_and_std_within_4_se_of_theory(d, alpha, rho):
    s = saturation_stats(d, 8, alpha, rng=np.random.default_rng([d, 7]), n_rows=20_000, rho=rho)
    std_theory = independent_logit_std(d, alpha)
    assert abs(s.logit_std - std_theory) < 4 * s.logit_std_se, (s.logit_std, std_theory)
    mean_theory = relevant_logit_mean(d, alpha, rho)
    assert abs(s.relevant_logit_mean - mean_theory) < 4 * s.relevant_logit_se
    # the s.e. are honest: of the order theory predicts, not inflated
    assert s.relevant_logit_se == pytest.approx(
        math.sqrt(d * (1 + rho**2)) * d**-alpha / math.sqrt(20_000), rel=0.05
    )


# --------------------------------------------------------------------------- entropy limits


def test_entropy_alpha_1_tends_to_ln_n():
    n = 10
    out = saturation_sweep([256, 4096], n, [1.0], rng=np.random.default_rng(1), n_rows=20_000)
    h, se = out["entropy_mean"][0], out["entropy_se"][0]
    # docs/mathematics.md §3.3, small σ: E[H] ≈ ln n − σ²(n − 1)/(2n), σ² = 1/d_k for alpha = 1
    small_sigma = math.log(n) - (1 / np.array([256, 4096])) * (n - 1) / (2 * n)
    assert np.all(np.abs(h - small_sigma) < 4 * se + 1e-5)
    assert math.log(n) - h[-1] < 2e-4
    # docs §3.3, small σ: E[max p] ≈ (1 + σ e_n)/n, here σ = 1/64 (O(σ²) terms ≈ 1e-4)
    m, m_se = out["max_weight_mean"][0, -1], out["max_weight_se"][0, -1]
    assert abs(m - (1 + E_10 / 64) / n) < 4 * m_se + 2e-4


def test_entropy_alpha_0_tends_to_0():
    n = 10
    ds = [64, 256, 1024, 4096]
    out = saturation_sweep(ds, n, [0.0], rng=np.random.default_rng(2), n_rows=40_000)
    h, se = out["entropy_mean"][0], out["entropy_se"][0]
    assert np.all(np.diff(h) < 0)
    assert h[-1] / math.log(n) < 0.05
    # docs §3.4, large σ = √d_k: E[H] ≈ (π²/6) e_n / σ (a power law on average), relative
    # error O(1/σ): 3 % slack at σ = 32 and 64
    asym = (math.pi**2 / 6) * E_10 / np.sqrt(ds[-2:])
    assert np.all(np.abs(h[-2:] - asym) < 4 * se[-2:] + 0.03 * asym)
    assert out["max_weight_mean"][0, -1] > 0.97


def test_entropy_alpha_half_is_width_independent():
    out = saturation_sweep(
        [256, 4096], 10, [0.5], rng=np.random.default_rng(3), n_rows=40_000, rho=0.0
    )
    h, se = out["entropy_mean"][0], out["entropy_se"][0]
    assert abs(h[0] - h[1]) < 4 * math.hypot(*se)
    assert 0.5 < h[1] / math.log(10) < 0.95


# --------------------------------------------------------------------------- μP vs √d_k


def test_linear_scaling_keeps_the_relevant_weight_while_sqrt_locks_on():
    """n = 10, ρ = 0.5: 1/d ≈ 0.155 at every d from 16 to 4096, 1/√d 0.37 → 0.99 (docs §2.3–2.4)."""
    ds = [16, 64, 256, 1024, 4096]
    out = saturation_sweep(ds, 10, [0.5, 1.0], rng=np.random.default_rng(4), n_rows=40_000, rho=0.5)
    w, se = out["relevant_weight_mean"], out["relevant_weight_se"]
    limit = linear_scaling_weight_limit(10, 0.5)
    # 1/d_k: stable across d_k, at the large-d_k limit, within 4 s.e.
    assert np.all(np.abs(w[1] - limit) < 4 * se[1]), (w[1], limit)
    assert np.ptp(w[1]) < 4 * se[1].max()
    # 1/√d_k: rises toward 1
    assert np.all(np.diff(w[0]) > 0)
    # d_k = 16 has no closed form (≈ 0.37): a direct simulation with explicit q and keys
    direct, direct_se = _direct(16, 10, 0.5, 0.5, 4_000, np.random.default_rng(13))["w"]
    assert abs(w[0, 0] - direct) < 4 * math.hypot(se[0, 0], direct_se)
    # d_k ≥ 256: within the bounds of docs §2.4 (E[w] in [0.99123, 0.99148] at d_k = 256)
    for i, d in enumerate(ds[2:], start=2):
        lower, upper = relevant_weight_bounds(d, 10, 0.5)
        assert lower - 4 * se[0, i] < w[0, i] < upper + 4 * se[0, i], d


def test_small_rho_linear_scaling_sits_near_one_over_n():
    out = saturation_sweep([1024, 4096], 10, [1.0], rng=np.random.default_rng(5), rho=0.1)
    w = out["relevant_weight_mean"][0]
    assert np.all(
        np.abs(w - linear_scaling_weight_limit(10, 0.1)) < 4 * out["relevant_weight_se"][0]
    )
    assert np.all(w < 0.12)  # 1/n_keys = 0.1: "too smooth"
    # … although the relevant key has the largest logit in most rows
    assert np.all(out["relevant_argmax_rate"][0] > 0.9)


def test_argmax_rate_is_the_same_for_every_alpha():
    out = saturation_sweep(
        [4, 64], 10, [0.0, 0.5, 1.0, 1.5], rng=np.random.default_rng(6), n_rows=5_000, rho=0.4
    )
    rate = out["relevant_argmax_rate"]
    assert np.all(rate == rate[0])


# --------------------------------------------------------------------------- direct simulation


def _direct(d, n_keys, alpha, rho, n_rows, rng):
    """Explicit q and K: k_0 = ρ q + √(1−ρ²) ε, other keys independent; softmax per row."""
    weight, argmax, entropy, top = [], [], [], []
    for start in range(0, n_rows, 1000):
        m = min(1000, n_rows - start)
        q = rng.standard_normal((m, d))
        k = rng.standard_normal((m, n_keys, d))  # (rows, n_keys, d_k)
        k[:, 0] = rho * q + math.sqrt(1 - rho**2) * k[:, 0]
        z = np.einsum("rkd,rd->rk", k, q) * d**-alpha  # (rows, n_keys) logits
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        weight.append(p[:, 0])
        argmax.append(np.argmax(z, axis=1) == 0)
        entropy.append(-(p * np.log(np.where(p > 0, p, 1.0))).sum(axis=1))
        top.append(p.max(axis=1))
    out = {}
    for name, parts in (("w", weight), ("a", argmax), ("h", entropy), ("m", top)):
        x = np.concatenate(parts).astype(float)
        out[name] = (x.mean(), x.std(ddof=1) / math.sqrt(x.size))
    return out


@pytest.mark.parametrize(
    ("d", "n_keys", "alpha", "rho"),
    [(16, 10, 0.5, 0.5), (64, 10, 1.0, 0.5), (256, 8, 0.5, 0.3), (32, 5, 0.0, 0.2)],
)
def test_discrimination_matches_a_direct_simulation(d, n_keys, alpha, rho):
    fast = saturation_stats(
        d, n_keys, alpha, rng=np.random.default_rng([d, 11]), n_rows=20_000, rho=rho
    )
    direct = _direct(d, n_keys, alpha, rho, 4_000, np.random.default_rng([d, 12]))
    for (mean, se), (f_mean, f_se) in (
        (direct["w"], (fast.relevant_weight_mean, fast.relevant_weight_se)),
        (direct["a"], (fast.relevant_argmax_rate, fast.relevant_argmax_se)),
        (direct["h"], (fast.entropy_mean, fast.entropy_se)),
        (direct["m"], (fast.max_weight_mean, fast.max_weight_se)),
    ):
        assert abs(mean - f_mean) < 4 * math.hypot(se, f_se), (mean, f_mean)
