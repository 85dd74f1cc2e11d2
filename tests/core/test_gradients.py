"""Gradients through a saturated softmax: J from logits, J u, gap laws, ∂L/∂q, grad fields.

Complements tests/core/test_softmax.py (J identities, two-key values, the gap law for
[g, 0, …, 0]), test_attention.py (backward pass against finite differences) and
test_experiments.py (fast sampler against direct simulation) with what they leave out:
the 1/c factor of ∂p/∂s by finite differences, the one-runner-up gap law, the bound
|J_ij| ≤ 1 − p_k stated on the page, the exact ∂L/∂q sampler against explicit q, K, V,
and the gradient fields of ``saturation_stats`` (mean, median, q10, q90) against a
direct simulation that builds every Jacobian matrix explicitly.

Statistics: two independent MC means agree within 4·sqrt(se₁² + se₂²); a quantile of
the fast sample, read on the direct sample's CDF, is within 4 binomial s.e. of q.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from core.attention import attention_backward
from core.experiments import DEAD_THRESHOLD, saturation_stats
from core.gradients import (
    gap_curve,
    gap_logits,
    jacobian_from_logits,
    jacobian_vector_product,
    query_grad_norms,
)
from core.softmax import jacobian_norm, softmax, softmax_jacobian

RTOL = 1e-12


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(2024)


def _mean_se(x: np.ndarray) -> tuple[float, float]:
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def _assert_same_mean(fast: np.ndarray | tuple[float, float], ref: np.ndarray) -> None:
    m1, s1 = fast if isinstance(fast, tuple) else _mean_se(fast)
    m2, s2 = _mean_se(ref)
    assert abs(m1 - m2) < 4 * math.hypot(s1, s2), (m1, m2, s1, s2)


def _assert_quantiles_match(values: dict[float, float], ref: np.ndarray, n_fast: int) -> None:
    for q, value in values.items():
        cdf = float(np.mean(ref <= value))
        tol = 4 * math.sqrt(q * (1 - q) * (1 / n_fast + 1 / ref.size))
        assert abs(cdf - q) < tol, (q, value, cdf)


# --------------------------------------------------------------------------- J from logits


def test_jacobian_from_logits_equals_softmax_jacobian(rng):
    z = 3 * rng.standard_normal((4, 3, 7))
    p, jac = jacobian_from_logits(z)
    assert_allclose(p, softmax(z), rtol=RTOL)
    assert_allclose(jac, softmax_jacobian(p), rtol=1e-10, atol=1e-16)
    assert jac.shape == (4, 3, 7, 7)


def test_jacobian_identities_and_the_page_bound(rng):
    # docs/mathematics.md §4.1: symmetric PSD, J·1 = 0, tr J = 1 − ‖p‖², λ_max ≤ min(½, max p);
    # the page: every |J_ij| ≤ 1 − p_k (k the top key).
    z = rng.standard_normal((200, 9)) * rng.choice([0.3, 3.0, 30.0], size=(200, 1))
    p, jac = jacobian_from_logits(z)
    assert np.array_equal(jac, np.swapaxes(jac, -1, -2))
    assert_allclose(jac.sum(axis=-1), 0.0, atol=1e-15)
    assert_allclose(np.trace(jac, axis1=-2, axis2=-1), 1 - (p * p).sum(-1), rtol=1e-10, atol=1e-15)
    eig = np.linalg.eigvalsh(jac)
    assert (eig >= -1e-15).all()
    assert (eig[:, -1] <= np.minimum(0.5, p.max(-1)) + 1e-15).all()
    rest = np.sort(p, axis=-1)[:, :-1].sum(-1)  # 1 − p_k from the small weights
    assert (np.abs(jac).max(axis=(-2, -1)) <= rest * (1 + 1e-12)).all()
    fro = np.linalg.norm(jac, axis=(-2, -1))
    assert_allclose(jacobian_norm(p), fro, rtol=1e-9)


def test_jacobian_from_logits_keeps_the_winner_diagonal_when_saturated():
    # Two keys, gap 50: p_1 = 1/(1 + e^50) ≈ 1.9e-22, p_0 rounds to 1.0 and the plain
    # p_0 − p_0² is exactly 0; the true J_00 = p_0 p_1 = 2p_1p_2/2.
    p, jac = jacobian_from_logits([50.0, 0.0])
    p1 = 1 / (1 + math.exp(50.0))
    assert p[0] == 1.0
    assert softmax_jacobian(p)[0, 0] == 0.0  # the cancellation this function avoids
    assert jac[0, 0] == pytest.approx(p1 * (1 - p1), rel=1e-12)
    assert jac[1, 1] == pytest.approx(p1 * (1 - p1), rel=1e-12)
    assert jac[0, 1] == pytest.approx(-p1 * (1 - p1), rel=1e-12)
    assert 2 * jac[0, 0] == pytest.approx(jacobian_norm(p), rel=1e-12)  # ‖J‖_F = 2p₁p₂


def test_jacobian_from_logits_rejects_bad_input():
    with pytest.raises(ValueError, match="z must have shape"):
        jacobian_from_logits(3.0)
    with pytest.raises(ValueError, match="z"):
        jacobian_from_logits([1.0, float("nan")])


# --------------------------------------------------------------------------- J u


def test_jacobian_vector_product_matches_matrix(rng):
    z = 2 * rng.standard_normal((50, 6))
    u = rng.standard_normal((50, 6))
    p, jac = jacobian_from_logits(z)
    w = jacobian_vector_product(p, u)
    assert_allclose(w, np.einsum("rij,rj->ri", jac, u), rtol=1e-10, atol=1e-15)
    assert_allclose(w.sum(-1), 0.0, atol=1e-14)
    assert_allclose(jacobian_vector_product(p, u[0]), np.einsum("rij,j->ri", jac, u[0]), atol=1e-14)


def test_jacobian_vector_product_accurate_when_saturated():
    # Two keys: J u = p₀p₁ (u₀ − u₁) (1, −1), ≈ 1.9e-22 here; the plain p ∘ (u − p·u)
    # loses it entirely for the top key.
    p = softmax([50.0, 0.0])
    u = np.array([0.3, -1.2])
    p1 = 1 / (1 + math.exp(50.0))
    expected = p1 * (1 - p1) * (u[0] - u[1])
    w = jacobian_vector_product(p, u)
    assert w[0] == pytest.approx(expected, rel=1e-12)
    assert w[1] == pytest.approx(-expected, rel=1e-12)


def test_jacobian_vector_product_rejects_bad_input():
    with pytest.raises(ValueError, match="p must be non-negative"):
        jacobian_vector_product([1.5, -0.5], [1.0, 1.0])
    with pytest.raises(ValueError, match="do not broadcast"):
        jacobian_vector_product([0.5, 0.5], [1.0, 2.0, 3.0])


# --------------------------------------------------------------------------- the 1/c factor


@pytest.mark.parametrize(("d_k", "alpha"), [(64, 0.0), (64, 0.5), (256, 1.0)])
def test_gradient_wrt_raw_scores_carries_the_scale(rng, d_k, alpha):
    # docs/mathematics.md §4.3: with logits z = c s, ∂p/∂s = c J(p); central finite
    # differences in s.
    c = d_k**-alpha
    s = rng.standard_normal(6) * math.sqrt(d_k) / 4  # raw scores, unsaturated enough
    p = softmax(c * s)
    h = 1e-6 * max(1.0, 1.0 / c)
    numeric = np.empty((6, 6))
    for j in range(6):
        e = np.zeros(6)
        e[j] = h
        numeric[:, j] = (softmax(c * (s + e)) - softmax(c * (s - e))) / (2 * h)
    analytic = c * softmax_jacobian(p)
    assert np.linalg.norm(numeric - analytic) / np.linalg.norm(analytic) < 1e-6


# --------------------------------------------------------------------------- gap explorer


def test_gap_logits():
    assert_allclose(gap_logits(5.0, 4), [5.0, 0.0, 0.0, 0.0])
    assert_allclose(gap_logits(5.0, 4, gap2=2.0), [5.0, 3.0, 0.0, 0.0])
    assert_allclose(gap_logits(1.0, 3, gap2=2.0), [1.0, 0.0, 0.0])  # never below the bulk
    for kwargs, name in [
        ({"g": -1.0, "n_keys": 4}, "g"),
        ({"g": 1.0, "n_keys": 1}, "n_keys"),
        ({"g": 1.0, "n_keys": 4, "gap2": float("nan")}, "gap2"),
    ]:
        with pytest.raises(ValueError, match=name):
            gap_logits(**kwargs)


@pytest.mark.parametrize("gap2", [None, 0.0, 1.5, 4.0])
def test_gap_curve_exact_columns(gap2):
    g = np.arange(0.0, 40.0, 0.5)
    cur = gap_curve(g, 10, gap2)
    for i, gi in enumerate(g):
        p = softmax(gap_logits(gi, 10, gap2))
        jac = softmax_jacobian(p)
        assert cur["fro"][i] == pytest.approx(float(jacobian_norm(p)), rel=1e-10)
        off = np.abs(jac - np.diag(np.diag(jac))).max()
        assert cur["offdiag"][i] == pytest.approx(off, rel=1e-10)
        assert cur["p_top"][i] == pytest.approx(p.max(), rel=1e-12)


def test_gap_law_every_other_key_at_zero():
    # [g, 0, …, 0]: ‖J‖_F ≈ √((n−1)² + 3(n−1)) e^(−g), largest off-diagonal ≈ e^(−g);
    # relative errors O(n e^(−g)), and ‖J‖_F falls by e per unit of gap.
    n = 10
    g = np.array([8.0, 12.0, 16.0, 20.0, 30.0])
    cur = gap_curve(g, n)
    law = math.sqrt((n - 1) ** 2 + 3 * (n - 1)) * np.exp(-g)
    assert_allclose(cur["fro_law"], law, rtol=1e-12)
    assert_allclose(cur["offdiag_law"], np.exp(-g), rtol=1e-12)
    err_fro = np.abs(cur["fro"] / law - 1)
    err_off = np.abs(cur["offdiag"] / np.exp(-g) - 1)
    assert (np.diff(err_fro) < 0).all() and (np.diff(err_off) < 0).all()
    assert (err_fro < 4 * n * np.exp(-g)).all()
    assert (err_off < 4 * n * np.exp(-g)).all()
    step = gap_curve([20.0, 21.0], n)["fro"]
    assert step[1] / step[0] == pytest.approx(math.exp(-1), rel=1e-7)


def test_gap_law_one_dominant_runner_up():
    # docs/mathematics.md §4.2: ‖J‖_F ≈ 2 e^(−g₂) when one runner-up dominates (two-key
    # limit 2p₁p₂ = 2ε/(1 + ε)², relative error 2ε; the other keys' e^(−40) is negligible).
    for gap2 in (6.0, 8.0, 12.0):
        cur = gap_curve([40.0], 10, gap2)
        eps = math.exp(-gap2)
        assert cur["fro"][0] == pytest.approx(2 * eps, rel=3 * eps)
        assert cur["offdiag"][0] == pytest.approx(eps, rel=3 * eps)
        assert cur["fro_law"][0] == pytest.approx(2 * eps, rel=1e-12)


def test_gap_curve_rejects_bad_input():
    with pytest.raises(ValueError, match="g_values"):
        gap_curve([], 10)
    with pytest.raises(ValueError, match="g"):
        gap_curve([-1.0], 10)


# --------------------------------------------------------------------------- ∂L/∂q


def _direct_query_grad(d: int, n_keys: int, alpha: float, n_rows: int, rng) -> np.ndarray:
    """Explicit q, K, V and a unit upstream gradient, through attention_backward."""
    d_v = 3
    out = []
    for start in range(0, n_rows, 500):
        m = min(500, n_rows - start)
        q = rng.standard_normal((m, 1, d))
        k = rng.standard_normal((m, n_keys, d))
        v = rng.standard_normal((m, n_keys, d_v))
        g = rng.standard_normal((m, 1, d_v))
        g /= np.linalg.norm(g, axis=-1, keepdims=True)
        grad_q = attention_backward(q, k, v, g, alpha=alpha)[0]
        out.append(np.linalg.norm(grad_q, axis=(1, 2)))
    return np.concatenate(out)


@pytest.mark.parametrize(
    ("d", "n_keys", "alpha"), [(1, 5, 0.0), (16, 8, 0.0), (64, 8, 0.5), (64, 2, 0.0), (32, 6, 1.0)]
)
def test_query_grad_norms_match_explicit_backward_pass(d, n_keys, alpha):
    n_fast, n_direct = 40_000, 4_000
    fast = query_grad_norms(d, n_keys, alpha, rng=np.random.default_rng(5), n_rows=n_fast)
    ref = _direct_query_grad(d, n_keys, alpha, n_direct, np.random.default_rng(6))
    assert fast.shape == (n_fast,) and (fast >= 0).all()
    _assert_same_mean(fast, ref)
    _assert_same_mean(fast**2, ref**2)
    _assert_quantiles_match({q: float(np.quantile(fast, q)) for q in (0.1, 0.5, 0.9)}, ref, n_fast)


def test_query_grad_norms_typical_row_collapses_without_scaling():
    # Same rows, two scalings: the unscaled median falls by orders of magnitude at
    # d_k = 1024, while its mean does not (rare near-ties get an unshrunk gradient).
    unscaled = query_grad_norms(1024, 10, 0.0, rng=np.random.default_rng(9))
    scaled = query_grad_norms(1024, 10, 0.5, rng=np.random.default_rng(9))
    assert np.median(unscaled) < 1e-2 * np.median(scaled)
    assert unscaled.mean() > scaled.mean()
    assert 0.25 < np.median(scaled) < 0.35


def test_query_grad_norms_is_reproducible_and_validates():
    a = query_grad_norms(64, 10, 0.5, rng=np.random.default_rng(1), n_rows=100)
    b = query_grad_norms(64, 10, 0.5, rng=np.random.default_rng(1), n_rows=100)
    assert np.array_equal(a, b)
    for kwargs, name in [
        ({"d": 0}, "d"),
        ({"n_keys": 0}, "n_keys"),
        ({"alpha": -0.5}, "alpha"),
        ({"n_rows": 0}, "n_rows"),
        ({"n_rows": 1 << 20, "n_keys": 1 << 10}, "n_rows \\* n_keys"),
    ]:
        args = {"d": 64, "n_keys": 10, "alpha": 0.5, "n_rows": 10} | kwargs
        with pytest.raises(ValueError, match=name):
            query_grad_norms(**args, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="rng"):
        query_grad_norms(64, 10, 0.5, rng=1)


# --------------------------------------------------------------------------- saturation_stats


def _direct_grad_rows(d: int, n_keys: int, alpha: float, n_rows: int, rng):
    """Explicit q and keys; ‖∂p/∂s‖_F from the full Jacobian matrix (no closed form)."""
    c = d**-alpha
    jac_fro = []
    for start in range(0, n_rows, 250):
        m = min(250, n_rows - start)
        q = rng.standard_normal((m, d))
        keys = rng.standard_normal((m, n_keys, d))
        logits = c * np.einsum("md,mkd->mk", q, keys)  # (rows, n_keys)
        jac_fro.append(np.linalg.norm(jacobian_from_logits(logits)[1], axis=(-2, -1)))
    jac_fro = np.concatenate(jac_fro)
    return jac_fro, c * jac_fro


@pytest.mark.parametrize(("d", "alpha"), [(64, 0.0), (1024, 0.0), (1024, 0.5), (256, 1.0)])
def test_saturation_stats_gradient_fields_match_direct_simulation(d, alpha):
    n_fast, n_direct, n_keys = 40_000, 3_000, 10
    fast = saturation_stats(d, n_keys, alpha, rng=np.random.default_rng(31), n_rows=n_fast)
    jac, grad = _direct_grad_rows(d, n_keys, alpha, n_direct, np.random.default_rng(32))
    _assert_same_mean((fast.grad_fro_mean, fast.grad_fro_se), grad)
    _assert_same_mean((fast.jacobian_fro_mean, fast.jacobian_fro_se), jac)
    _assert_quantiles_match(
        {0.1: fast.grad_fro_q10, 0.5: fast.grad_fro_median, 0.9: fast.grad_fro_q90}, grad, n_fast
    )
    dead = float(np.mean(jac < DEAD_THRESHOLD))
    se = math.hypot(fast.dead_fraction_se, math.sqrt(dead * (1 - dead) / n_direct))
    assert abs(fast.dead_fraction - dead) <= 4 * se + 1e-12


def test_reference_section_3_figures():
    # n_keys = 10, d_k = 1024: unscaled median ‖J‖_F ≈ 4e-6, scaled ≈ 0.35; mean ‖∂p/∂s‖_F
    # ≈ 0.044 unscaled vs ≈ 0.011 scaled; mean ‖J‖_F (logits) ≈ 0.044 vs ≈ 0.35.
    un = saturation_stats(1024, 10, 0.0, rng=np.random.default_rng(51), n_rows=100_000)
    sc = saturation_stats(1024, 10, 0.5, rng=np.random.default_rng(52), n_rows=100_000)
    assert 2e-6 < un.jacobian_fro_median < 8e-6
    assert sc.jacobian_fro_median == pytest.approx(0.35, abs=0.01)
    assert un.grad_fro_mean == pytest.approx(0.044, abs=0.004)
    assert sc.grad_fro_mean == pytest.approx(0.011, abs=0.0005)
    assert un.jacobian_fro_mean == pytest.approx(0.044, abs=0.004)
    assert sc.jacobian_fro_mean == pytest.approx(0.35, abs=0.01)
    assert un.grad_fro_mean > sc.grad_fro_mean + 4 * math.hypot(un.grad_fro_se, sc.grad_fro_se)


def test_one_row_decays_exponentially_while_the_mean_falls_like_one_over_sigma():
    """The gradients page's card: doubling one row's gap from 10 to 20 multiplies ‖J‖_F
    by e⁻¹⁰(1 + (n−1)e⁻¹⁰)²/(1 + (n−1)e⁻²⁰)² (exact for [g, 0, …, 0]), not by ½; the mean
    over random unscaled rows (logits iid N(0, ‖q‖²) given q, ‖q‖² ~ χ²_d) from d = 256
    (σ = 16) to 1024 (σ = 32) falls by 0.5 within 0.05 (the 1/σ law plus its O(1/σ²)
    correction), measured within 4 s.e. (delta method)."""
    for n in (10, 512):
        fro = gap_curve([10.0, 20.0], n, None)["fro"]
        e = (n - 1) * math.exp(-10.0)
        assert fro[1] / fro[0] == pytest.approx(
            math.exp(-10.0) * (1 + e) ** 2 / (1 + e * math.exp(-10.0)) ** 2, rel=1e-3
        )
    rng = np.random.default_rng(7)
    means, ses = [], []
    for d in (256, 1024):
        z = np.sqrt(rng.chisquare(d, size=(200_000, 1))) * rng.standard_normal((200_000, 10))
        j = jacobian_norm(softmax(z))
        means.append(j.mean())
        ses.append(j.std(ddof=1) / math.sqrt(j.size))
    ratio = means[1] / means[0]
    se = ratio * math.hypot(ses[0] / means[0], ses[1] / means[1])
    assert abs(ratio - 0.5) < 0.05 + 4 * se
    assert se < 0.01
    # the page's sweep (core.experiments.saturation_stats) measures the same means
    for d, m, s in zip((256, 1024), means, ses, strict=True):
        st = saturation_stats(d, 10, 0.0, rng=np.random.default_rng(d), n_rows=100_000)
        assert abs(st.jacobian_fro_mean - m) < 4 * math.hypot(s, s * math.sqrt(2))
