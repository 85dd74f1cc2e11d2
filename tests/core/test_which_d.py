"""Which d? Per-head variances, the d_k^-¼ identity, cross-attention, QK LayerNorm, fast
projections (core/which_d.py together with core/heads.py)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from numpy.testing import assert_allclose

from core.attention import attention_weights
from core.heads import (
    cross_attention_logits,
    init_projection,
    layer_norm,
    multi_head_logits,
    projected_score_variance,
    split_heads,
)
from core.softmax import softmax
from core.which_d import (
    DIVISORS_CROSS,
    DIVISORS_SELF,
    INITS,
    divisor_value,
    divisors,
    gram_root,
    head_statistics,
    init_stds,
    input_scale_sweep,
    layernorm_logit_std,
    projected_cross_attention_logits,
    projected_multi_head_logits,
    projected_qk,
    quarter_scaling_gap,
    score_variance,
)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(2024)


def _off_diagonal_square_means(logits: np.ndarray) -> np.ndarray:
    """Mean s² over pairs i ≠ j, per head: (n_heads, n, n) -> (n_heads,)."""
    n = logits.shape[-1]
    mask = ~np.eye(n, dtype=bool)
    return (logits**2)[:, mask].mean(axis=-1)


def _assert_within_4_se(draws: np.ndarray, theory: float) -> None:
    """Each column of ``draws`` (independent draws × heads) has mean within 4 s.e. of theory."""
    mean = draws.mean(axis=0)
    se = draws.std(axis=0, ddof=1) / math.sqrt(draws.shape[0])
    assert np.all(np.abs(mean - theory) < 4 * se), (mean, theory, se)


# --- multi-head: shapes and per-head variances --------------------------------------------


def test_multi_head_per_head_variance_matches_theory(rng):
    """Direct W_q, W_k: every head's Var(q·k) within 4 s.e. of d_k (d_model σ_w² σ_x²)²."""
    n_tokens, d_model, n_heads, sigma_w, sigma_x = 24, 16, 4, 0.3, 1.5
    d_k = d_model // n_heads
    n_draws = 2000
    draws = np.empty((n_draws, n_heads))
    for t in range(n_draws):
        x = rng.normal(0.0, sigma_x, size=(n_tokens, d_model))
        w_q = init_projection(d_model, d_model, rng=rng, std=sigma_w)
        w_k = init_projection(d_model, d_model, rng=rng, std=sigma_w)
        logits, weights = multi_head_logits(x, w_q, w_k, n_heads, divisor=1.0)
        assert logits.shape == weights.shape == (n_heads, n_tokens, n_tokens)
        draws[t] = _off_diagonal_square_means(logits)
    # E[s] = 0, so Var(s) = E[s²]; draws are independent, their spread gives the s.e.
    _assert_within_4_se(draws, projected_score_variance(d_k, d_model, sigma_w, sigma_x))


@pytest.mark.parametrize(("d_model", "n_heads"), [(512, 8), (96, 3)])
def test_fast_multi_head_per_head_variance_matches_theory(rng, d_model, n_heads):
    """The fast path (no W formed) has the same per-head variance law."""
    n_tokens, sigma_w, sigma_x, n_draws = 16, 0.05, 1.2, 600
    d_k = d_model // n_heads
    draws = np.empty((n_draws, n_heads))
    for t in range(n_draws):
        x = rng.normal(0.0, sigma_x, size=(n_tokens, d_model))
        logits, weights = projected_multi_head_logits(
            x, n_heads, d_k, rng=rng, divisor=1.0, sigma_wq=sigma_w, sigma_wk=sigma_w
        )
        assert logits.shape == weights.shape == (n_heads, n_tokens, n_tokens)
        draws[t] = _off_diagonal_square_means(logits)
    _assert_within_4_se(draws, projected_score_variance(d_k, d_model, sigma_w, sigma_x))


def test_fan_in_init_gives_unit_logits_only_with_sqrt_d_k(rng):
    """Fan-in: Var(q·k) = d_k exactly in theory; ÷√d_model leaves std 1/√n_heads."""
    d_model, n_heads = 1024, 16
    d_k = d_model // n_heads
    assert projected_score_variance(d_k, d_model, d_model**-0.5, 1.0) == pytest.approx(d_k)
    x = rng.standard_normal((64, d_model))
    raw, _ = projected_multi_head_logits(x, n_heads, d_k, rng=rng, divisor=1.0)
    right = raw / math.sqrt(d_k)
    wrong = raw / math.sqrt(d_model)
    assert_allclose(right.std() / wrong.std(), math.sqrt(n_heads), rtol=1e-12)
    # 16 heads × 64² logits: the pooled std is within a few per cent of 1
    assert abs(right.std() - 1.0) < 0.1


# --- where the scale goes -----------------------------------------------------------------


@pytest.mark.parametrize("d_k", [1, 3, 64, 1000])
def test_quarter_scaling_equals_sqrt_scaling(rng, d_k):
    q, k = 3.0 * rng.standard_normal((2, 7, d_k)), 3.0 * rng.standard_normal((2, 9, d_k))
    quarter = d_k**-0.25
    assert_allclose(
        (q * quarter) @ np.swapaxes(k * quarter, -1, -2),
        q @ np.swapaxes(k, -1, -2) / math.sqrt(d_k),
        rtol=1e-12,
        atol=1e-12,
    )
    split = attention_weights(q * quarter, k * quarter, alpha=0.0)
    whole = attention_weights(q, k, alpha=0.5)
    assert np.max(np.abs(split - whole)) < 1e-12
    assert quarter_scaling_gap(q, k) < 1e-12


def test_scale_folded_into_w_q_gives_the_same_weights(rng):
    x = rng.standard_normal((10, 32))
    w_q, w_k = rng.standard_normal((32, 32)), rng.standard_normal((32, 32))
    d_k = 8
    folded, wf = multi_head_logits(x, w_q / math.sqrt(d_k), w_k, 4, divisor=1.0)
    divided, wd = multi_head_logits(x, w_q, w_k, 4, divisor=math.sqrt(d_k))
    assert_allclose(folded, divided, rtol=1e-12, atol=1e-12)
    assert np.max(np.abs(wf - wd)) < 1e-12


def test_dividing_by_c_is_temperature_c(rng):
    s = 5.0 * rng.standard_normal((4, 12))
    for c in (1.0, 8.0, 22.6):
        tempered = np.exp(s / c) / np.exp(s / c).sum(axis=-1, keepdims=True)
        assert_allclose(softmax(s / c), tempered, rtol=1e-12)


# --- cross-attention ----------------------------------------------------------------------


def test_cross_attention_shapes_with_different_feature_sizes(rng):
    n_q, n_kv, d_q, d_kv, d_k = 7, 9, 512, 1024, 64
    x_q, x_kv = rng.standard_normal((n_q, d_q)), rng.standard_normal((n_kv, d_kv))
    w_q = init_projection(d_q, d_k, rng=rng)
    w_k = init_projection(d_kv, d_k, rng=rng)
    logits, weights = cross_attention_logits(x_q, x_kv, w_q, w_k, divisor=math.sqrt(d_k))
    assert logits.shape == weights.shape == (n_q, n_kv)
    assert_allclose(weights.sum(-1), 1.0, rtol=1e-12)
    fast, fast_w = projected_cross_attention_logits(
        x_q, x_kv, 3, d_k, rng=rng, divisor=math.sqrt(d_k)
    )
    assert fast.shape == fast_w.shape == (3, n_q, n_kv)
    with pytest.raises(ValueError, match=re.escape("x_q has shape (7, 512), w_q has shape")):
        cross_attention_logits(x_q, x_kv, w_k, w_k, divisor=1.0)


def test_fast_cross_attention_variance_matches_theory(rng):
    n_q, n_kv, d_q, d_kv, d_k, n_heads, n_draws = 12, 10, 40, 200, 16, 2, 800
    sigma_wq, sigma_wk = 0.2, 0.05
    draws = np.empty((n_draws, n_heads))
    for t in range(n_draws):
        x_q, x_kv = rng.standard_normal((n_q, d_q)), rng.standard_normal((n_kv, d_kv))
        logits, _ = projected_cross_attention_logits(
            x_q, x_kv, n_heads, d_k, rng=rng, divisor=1.0, sigma_wq=sigma_wq, sigma_wk=sigma_wk
        )
        draws[t] = (logits**2).mean(axis=(1, 2))  # queries and keys are different tokens
    _assert_within_4_se(draws, score_variance(d_k, d_q, d_kv, sigma_wq, sigma_wk))


# --- QK LayerNorm -------------------------------------------------------------------------


def test_qk_layernorm_logits_are_invariant_to_input_scale(rng):
    x = rng.standard_normal((12, 32))
    w_q, w_k = rng.standard_normal((32, 32)), rng.standard_normal((32, 32))
    base, base_w = multi_head_logits(x, w_q, w_k, 4, divisor=math.sqrt(8), qk_layernorm=True)
    raw, _ = multi_head_logits(x, w_q, w_k, 4, divisor=math.sqrt(8))
    for c in (1.0, 10.0, 1000.0):
        scaled, scaled_w = multi_head_logits(
            c * x, w_q, w_k, 4, divisor=math.sqrt(8), qk_layernorm=True
        )
        # Var(q_i) ≥ ~1 here, so LayerNorm's eps = 1e-5 changes logits by < 1e-4 relative
        assert_allclose(scaled, base, rtol=1e-4, atol=1e-6)
        assert_allclose(scaled_w, base_w, rtol=1e-4, atol=1e-6)
        unnormed, _ = multi_head_logits(c * x, w_q, w_k, 4, divisor=math.sqrt(8))
        assert_allclose(unnormed, c**2 * raw, rtol=1e-10, atol=1e-9)  # grows like c²


def test_layer_norm_is_exactly_scale_free_as_eps_vanishes(rng):
    q = rng.standard_normal((3, 5, 16))
    for c in (1e-3, 1.0, 1e4):
        assert_allclose(layer_norm(c * q, eps=1e-300), layer_norm(q, eps=1e-300), rtol=1e-10)


def test_input_scale_sweep(rng):
    x = rng.standard_normal((32, 128))
    scales = np.array([0.125, 1.0, 8.0, 64.0])
    out = input_scale_sweep(x, 4, 32, scales, rng=rng, divisor=math.sqrt(32))
    assert set(out) == {"scale", "std_raw", "std_ln", "entropy_raw", "entropy_ln"}
    assert_allclose(out["std_raw"], out["std_raw"][1] * scales**2, rtol=1e-12)
    assert_allclose(out["std_ln"], out["std_ln"][1], rtol=1e-3)  # eps matters < 1e-3 at 1/8
    assert np.all(np.diff(out["entropy_raw"]) < 0)  # growing logits: attention sharpens
    assert abs(out["std_raw"][1] - 1.0) < 0.15 and abs(out["std_ln"][1] - 1.0) < 0.15
    with pytest.raises(ValueError, match="scales"):
        input_scale_sweep(x, 4, 32, [1.0, -2.0], rng=rng, divisor=1.0)
    with pytest.raises(ValueError, match="divisor"):
        input_scale_sweep(x, 4, 32, [1.0], rng=rng, divisor=0.0)


# --- the fast projection sampler ----------------------------------------------------------


@pytest.mark.parametrize("shape", [(10, 300), (20, 5)])  # d_model > n_tokens and <
def test_gram_root(rng, shape):
    x = rng.standard_normal(shape)
    root = gram_root(x)
    assert root.shape == (shape[0], shape[0])
    assert_allclose(root, root.T, rtol=0, atol=0)
    scale = np.abs(x @ x.T).max()
    assert_allclose(root @ root.T, x @ x.T, rtol=0, atol=1e-10 * scale)
    assert_allclose(gram_root(3.0 * x), 3.0 * root, rtol=0, atol=1e-9 * math.sqrt(scale))
    with pytest.raises(ValueError, match="x must be a 2-D array"):
        gram_root(np.ones(4))


def test_projected_qk_has_the_covariance_of_x_w(rng):
    """Given x, each column of x W is N(0, σ² x xᵀ): the sample covariance over many
    columns matches entry by entry within 4 s.e."""
    n_tokens, d_model, width, sigma = 5, 7, 40_000, 0.4
    x = rng.standard_normal((n_tokens, d_model))
    q, k = projected_qk(x, width, rng=rng, sigma_wq=sigma, sigma_wk=sigma)
    assert q.shape == k.shape == (n_tokens, width)
    cov = sigma**2 * (x @ x.T)
    for sample in (q, k):
        est = sample @ sample.T / width
        # Var(q_i q_j) for a Gaussian pair = C_ii C_jj + C_ij²
        se = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov**2) / width)
        assert np.all(np.abs(est - cov) < 4 * se)
    cross = q @ k.T / width  # q and k independent given x
    se = np.sqrt(np.outer(np.diag(cov), np.diag(cov)) / width)
    assert np.all(np.abs(cross) < 4 * se)


def test_projected_defaults_and_zero_init(rng):
    x = rng.standard_normal((8, 256))
    q, _ = projected_qk(x, 20_000, rng=rng)  # default fan-in: Var(q_i) = Σ_j x_ij² / d_model
    assert_allclose(q.var(axis=1), (x**2).mean(axis=1), rtol=0.1)
    logits, weights = projected_multi_head_logits(x, 2, 16, rng=rng, divisor=4.0, sigma_wq=0.0)
    assert np.all(logits == 0)
    assert_allclose(weights, 1 / 8, rtol=1e-12)
    with pytest.raises(ValueError, match="sigma_wq"):
        projected_qk(x, 4, rng=rng, sigma_wq=-1.0)
    with pytest.raises(ValueError, match="rng"):
        projected_qk(x, 4, rng=None)
    with pytest.raises(ValueError, match="width"):
        projected_qk(x, 0, rng=rng)


# --- small helpers ------------------------------------------------------------------------


def test_score_variance():
    assert score_variance(64, 512, 512, 512**-0.5, 512**-0.5) == pytest.approx(64.0)
    assert score_variance(8, 4, 4, 0.7, 0.7, 1.3) == pytest.approx(
        projected_score_variance(8, 4, 0.7, 1.3)
    )
    # cross-attention, fan-in: the feature sizes cancel
    assert score_variance(64, 512, 1024, 512**-0.5, 1024**-0.5) == pytest.approx(64.0)
    # std-1 weights: d_k · d_q · d_kv
    assert score_variance(64, 512, 1024, 1.0, 1.0) == pytest.approx(64 * 512 * 1024)
    assert score_variance(64, 512, 512, 0.0, 1.0) == 0.0
    for name, args in (
        ("d_k", (0, 4, 4, 1.0, 1.0)),
        ("d_q", (1, 0, 4, 1.0, 1.0)),
        ("sigma_wk", (1, 4, 4, 1.0, -1.0)),
        ("sigma_x", (1, 4, 4, 1.0, 1.0, math.nan)),
    ):
        with pytest.raises(ValueError, match=name):
            score_variance(*args)


def test_init_stds_and_divisor_values():
    assert INITS == ("fan_in", "one", "zero_q")
    assert init_stds("fan_in", 256, 1024) == (1 / 16, 1 / 32)
    assert init_stds("one", 256, 1024) == (1.0, 1.0)
    assert init_stds("zero_q", 256, 1024) == (0.0, 1 / 32)
    with pytest.raises(ValueError, match="init"):
        init_stds("xavier", 4, 4)
    assert DIVISORS_SELF == ("d_k", "d_model", "none")
    assert DIVISORS_CROSS == ("d_k", "d_q", "d_kv")
    values = {d: divisor_value(d, d_k=64, d_q=512, d_kv=1024) for d in DIVISORS_SELF}
    assert values == {"d_k": 8.0, "d_model": math.sqrt(512), "none": 1.0}
    assert divisor_value("d_kv", d_k=64, d_q=512, d_kv=1024) == 32.0
    with pytest.raises(ValueError, match="divisor"):
        divisor_value("d_v", d_k=1, d_q=1, d_kv=1)


def test_divisors():
    assert divisors(512) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    assert divisors(97) == [1, 97]
    assert divisors(1) == [1]
    assert divisors(36) == [1, 2, 3, 4, 6, 9, 12, 18, 36]
    assert all(4096 % h == 0 for h in divisors(4096)) and len(divisors(4096)) == 13
    with pytest.raises(ValueError, match="n"):
        divisors(0)


def test_head_statistics(rng):
    zero = np.zeros((2, 3, 8))
    stats = head_statistics(zero)
    assert_allclose(stats["std"], 0.0)
    assert_allclose(stats["entropy"], math.log(8), rtol=1e-12)
    assert_allclose(stats["max_weight"], 1 / 8, rtol=1e-12)
    logits = rng.standard_normal((3, 4, 6))
    stats = head_statistics(logits)
    p = softmax(logits)
    assert_allclose(stats["std"], logits.reshape(3, -1).std(axis=1), rtol=1e-12)
    assert_allclose(stats["entropy"], (-(p * np.log(p)).sum(-1)).mean(-1), rtol=1e-10)
    assert_allclose(stats["max_weight"], p.max(-1).mean(-1), rtol=1e-12)
    with pytest.raises(ValueError, match="logits"):
        head_statistics(np.zeros((3, 4)))


def test_layernorm_logit_std_exact_at_two_dimensions():
    # LN of two numbers is ±(1, −1): every logit is ±2/√2, so the std is exactly √2
    assert layernorm_logit_std(2) == math.sqrt(2)
    rng = np.random.default_rng(3)
    q, k = (
        layer_norm(rng.standard_normal((1000, 2)), eps=1e-300),
        layer_norm(rng.standard_normal((1000, 2)), eps=1e-300),
    )
    logits = (q * k).sum(axis=1) / math.sqrt(2)
    assert_allclose(np.abs(logits), math.sqrt(2), rtol=1e-12)


@pytest.mark.parametrize("d_k", [3, 8, 64])
def test_layernorm_logit_std_against_simulation(d_k):
    rng = np.random.default_rng(d_k)
    n = 200_000
    q = layer_norm(rng.standard_normal((n, d_k)), eps=1e-300)
    k = layer_norm(rng.standard_normal((n, d_k)), eps=1e-300)
    logits = (q * k).sum(axis=1) / math.sqrt(d_k)
    var = layernorm_logit_std(d_k) ** 2
    # s.e. of a sample variance: sqrt((m4 − var²)/n), m4 from the sample
    se = math.sqrt((np.mean(logits**4) - np.mean(logits**2) ** 2) / n)
    assert abs(np.mean(logits**2) - var) < 4 * se, (np.mean(logits**2), var, se)


@pytest.mark.parametrize("bad", [1, 0, 2.5, "8"])
def test_layernorm_logit_std_rejects_d_k_below_two(bad):
    with pytest.raises(ValueError, match="d_k"):
        layernorm_logit_std(bad)


@pytest.mark.parametrize("block", [None, 1, 3])
def test_input_scale_sweep_equals_layer_norm_then_matmul_per_scale(block, monkeypatch):
    """The factored LayerNorm (all scales from one product) against the definition:
    layer_norm(s·q) @ layer_norm(s·k)ᵀ / divisor at each scale, in blocks or at once."""
    import core.which_d as which_d
    from core.softmax import softmax_entropy

    if block is not None:
        monkeypatch.setattr(which_d, "_SWEEP_BLOCK", block * 3 * 20 * 20)  # b scales a block
    x = np.random.default_rng(5).standard_normal((20, 48))
    scales = np.array([0.01, 0.125, 1.0, 3.0, 64.0])
    out = input_scale_sweep(x, 3, 16, scales, rng=np.random.default_rng(9), divisor=4.0)
    q, k = which_d.projected_qk(x, 3 * 16, rng=np.random.default_rng(9))
    q_h, k_h = split_heads(q, 3), split_heads(k, 3)
    for i, s in enumerate(scales):
        raw = (s * q_h) @ (s * k_h).transpose(0, 2, 1) / 4.0
        normed = layer_norm(s * q_h) @ layer_norm(s * k_h).transpose(0, 2, 1) / 4.0
        assert_allclose(out["std_raw"][i], raw.std(), rtol=1e-12)
        assert_allclose(out["std_ln"][i], normed.std(), rtol=1e-12)
        assert_allclose(out["entropy_raw"][i], softmax_entropy(raw, axis=-1).mean(), rtol=1e-12)
        assert_allclose(out["entropy_ln"][i], softmax_entropy(normed, axis=-1).mean(), rtol=1e-12)
