"""Multi-head and cross-attention logits, QK LayerNorm, projected score variance."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from numpy.testing import assert_allclose

from core.heads import (
    cross_attention_logits,
    init_projection,
    layer_norm,
    multi_head_logits,
    projected_score_variance,
    split_heads,
)
from core.softmax import softmax

RTOL = 1e-12


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(99)


def test_multi_head_logits_match_per_head_loop(rng):
    n_tokens, d_model, n_heads, d_k = 6, 16, 4, 3
    x = rng.standard_normal((n_tokens, d_model))
    w_q, w_k = (
        rng.standard_normal((d_model, n_heads * d_k)),
        rng.standard_normal((d_model, n_heads * d_k)),
    )
    logits, weights = multi_head_logits(x, w_q, w_k, n_heads, divisor=math.sqrt(d_k))
    assert logits.shape == weights.shape == (n_heads, n_tokens, n_tokens)
    for h in range(n_heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        q, k = x @ w_q[:, cols], x @ w_k[:, cols]
        for i in range(n_tokens):
            for j in range(n_tokens):
                assert logits[h, i, j] == pytest.approx(
                    float(q[i] @ k[j]) / math.sqrt(d_k), rel=1e-12
                )
    assert_allclose(weights, softmax(logits), rtol=RTOL)
    assert_allclose(weights.sum(-1), 1.0, rtol=RTOL)


def test_split_heads_is_column_blocks(rng):
    a = rng.standard_normal((5, 12))
    heads = split_heads(a, 3)
    assert heads.shape == (3, 5, 4)
    assert_allclose(heads[2], a[:, 8:12], rtol=0)
    with pytest.raises(ValueError, match="n_heads must divide"):
        split_heads(a, 5)


def test_multi_head_shape_errors_name_both_shapes(rng):
    x = rng.standard_normal((4, 8))
    with pytest.raises(ValueError, match=re.escape("x has shape (4, 8), w_q has shape (7, 6)")):
        multi_head_logits(x, np.ones((7, 6)), np.ones((7, 6)), 2, divisor=1.0)
    with pytest.raises(ValueError, match=re.escape("w_q (8, 6), w_k (8, 4)")):
        multi_head_logits(x, np.ones((8, 6)), np.ones((8, 4)), 2, divisor=1.0)
    with pytest.raises(ValueError, match="n_heads must divide"):
        multi_head_logits(x, np.ones((8, 6)), np.ones((8, 6)), 4, divisor=1.0)
    with pytest.raises(ValueError, match="divisor"):
        multi_head_logits(x, np.ones((8, 6)), np.ones((8, 6)), 2, divisor=0.0)
    with pytest.raises(ValueError, match="x must be a 2-D array"):
        multi_head_logits(np.ones(8), np.ones((8, 6)), np.ones((8, 6)), 2, divisor=1.0)


def test_qk_layernorm_bounds_logits(rng):
    n_tokens, d_model, n_heads, d_k = 10, 32, 2, 8
    x = 50.0 * rng.standard_normal((n_tokens, d_model))  # huge activations
    w = rng.standard_normal((d_model, n_heads * d_k))
    w2 = rng.standard_normal((d_model, n_heads * d_k))
    raw, _ = multi_head_logits(x, w, w2, n_heads, divisor=math.sqrt(d_k))
    normed, weights = multi_head_logits(
        x, w, w2, n_heads, divisor=math.sqrt(d_k), qk_layernorm=True
    )
    assert np.abs(raw).max() > 100
    # Cauchy–Schwarz: |q·k| ≤ ‖q‖‖k‖ ≤ d_k after LayerNorm.
    assert np.abs(normed).max() <= d_k / math.sqrt(d_k) + 1e-9
    assert_allclose(weights.sum(-1), 1.0, rtol=RTOL)


def test_layer_norm(rng):
    x = rng.normal(3.0, 5.0, size=(7, 64))
    y = layer_norm(x, eps=1e-12)
    assert_allclose(y.mean(axis=-1), 0.0, atol=1e-12)
    assert_allclose(y.var(axis=-1), 1.0, rtol=1e-10)
    assert_allclose(layer_norm(4.0 * x + 2.0, eps=1e-12), y, rtol=1e-9, atol=1e-12)
    assert_allclose(layer_norm(x.T, axis=0, eps=1e-12), y.T, rtol=RTOL)
    assert_allclose(layer_norm(np.full((2, 3), 7.0)), 0.0)  # constant rows: eps avoids 0/0
    with pytest.raises(ValueError, match="eps"):
        layer_norm(x, eps=0.0)


def test_cross_attention_logits(rng):
    x_q, x_kv = rng.standard_normal((3, 10)), rng.standard_normal((5, 24))
    w_q, w_k = rng.standard_normal((10, 8)), rng.standard_normal((24, 8))
    logits, weights = cross_attention_logits(x_q, x_kv, w_q, w_k, divisor=math.sqrt(8))
    assert logits.shape == (3, 5)
    assert_allclose(logits, (x_q @ w_q) @ (x_kv @ w_k).T / math.sqrt(8), rtol=RTOL)
    assert_allclose(weights, softmax(logits), rtol=RTOL)
    with pytest.raises(
        ValueError, match=re.escape("x_kv has shape (5, 24), w_k has shape (10, 8)")
    ):
        cross_attention_logits(x_q, x_kv, w_q, w_q, divisor=1.0)
    with pytest.raises(ValueError, match=re.escape("x_q has shape (3, 10), w_q has shape (24, 8)")):
        cross_attention_logits(x_q, x_kv, w_k, w_k, divisor=1.0)
    with pytest.raises(ValueError, match=re.escape("w_q (10, 8), w_k (24, 6)")):
        cross_attention_logits(x_q, x_kv, w_q, w_k[:, :6], divisor=1.0)


def test_init_projection(rng):
    w = init_projection(256, 64, rng=rng)
    assert w.shape == (256, 64)
    n = w.size
    # Sample variance vs 1/d_model within 4 s.e. (s.e. of a normal variance: σ² √(2/n)).
    assert abs(w.var() - 1 / 256) < 4 * (1 / 256) * math.sqrt(2 / n)
    assert init_projection(4, 3, rng=rng, std=2.0).shape == (4, 3)
    with pytest.raises(ValueError, match="std"):
        init_projection(4, 3, rng=rng, std=-1.0)
    with pytest.raises(ValueError, match="d_model"):
        init_projection(0, 3, rng=rng)
    with pytest.raises(ValueError, match="rng"):
        init_projection(4, 3, rng=None)


def test_projected_score_variance_closed_form():
    assert projected_score_variance(64, 512, 512**-0.5, 1.0) == pytest.approx(64.0, rel=RTOL)
    assert projected_score_variance(8, 4, 0.7, 1.3) == pytest.approx(8 * (4 * 0.49 * 1.69) ** 2)
    assert projected_score_variance(8, 4, 0.7, 1.3, same_token=True) == pytest.approx(
        1.5 * projected_score_variance(8, 4, 0.7, 1.3)
    )
    with pytest.raises(ValueError, match="d_k"):
        projected_score_variance(0, 4, 1.0, 1.0)
    with pytest.raises(ValueError, match="sigma_w"):
        projected_score_variance(1, 4, 0.0, 1.0)


def _projected_square_means(rng, d_model, d_k, sigma_w, sigma_x, n_tokens, n_draws):
    """Per draw (fresh W_q, W_k and tokens): mean s² over pairs i ≠ j and over i = j."""
    off, diag = np.empty(n_draws), np.empty(n_draws)
    off_mask = ~np.eye(n_tokens, dtype=bool)
    for t in range(n_draws):
        x = rng.normal(0.0, sigma_x, size=(n_tokens, d_model))
        w_q = init_projection(d_model, d_k, rng=rng, std=sigma_w)
        w_k = init_projection(d_model, d_k, rng=rng, std=sigma_w)
        logits, _ = multi_head_logits(x, w_q, w_k, 1, divisor=1.0)
        sq = logits[0] ** 2
        off[t], diag[t] = sq[off_mask].mean(), np.diag(sq).mean()
    return off, diag


def test_projected_score_variance_monte_carlo(rng):
    # E[s] = 0, so Var(s) = E[s²]; draws are independent, so their spread gives the s.e.
    d_model, d_k, sigma_w, sigma_x = 4, 3, 0.7, 1.3
    off, diag = _projected_square_means(rng, d_model, d_k, sigma_w, sigma_x, 32, 3000)
    theory = projected_score_variance(d_k, d_model, sigma_w, sigma_x)
    theory_same = projected_score_variance(d_k, d_model, sigma_w, sigma_x, same_token=True)
    se_off, se_diag = off.std(ddof=1) / math.sqrt(off.size), diag.std(ddof=1) / math.sqrt(diag.size)
    assert abs(off.mean() - theory) < 4 * se_off
    assert abs(diag.mean() - theory_same) < 4 * se_diag
    assert diag.mean() - theory > 4 * se_diag  # the same-token case really differs
