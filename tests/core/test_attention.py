"""Scaled dot-product attention: forward against a loop, backward against finite differences."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from core.attention import (
    attention_backward,
    attention_logits,
    attention_weights,
    scaled_dot_product_attention,
)

RTOL = 1e-12


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(7)


def loop_weights(q: np.ndarray, k: np.ndarray, alpha: float) -> np.ndarray:
    """Reference for one head: explicit dot products and softmax, row by row."""
    d_k = q.shape[-1]
    out = np.zeros((q.shape[0], k.shape[0]))
    for i in range(q.shape[0]):
        logits = [
            d_k**-alpha * sum(q[i, t] * k[j, t] for t in range(d_k)) for j in range(k.shape[0])
        ]
        top = max(logits)
        exps = [math.exp(z - top) for z in logits]
        out[i] = [e / sum(exps) for e in exps]
    return out


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
def test_weights_match_loop(rng, alpha):
    q, k = rng.standard_normal((4, 16)), rng.standard_normal((6, 16))
    p = attention_weights(q, k, alpha=alpha)
    assert p.shape == (4, 6)
    assert_allclose(p, loop_weights(q, k, alpha), rtol=1e-10)
    assert_allclose(p.sum(-1), 1.0, rtol=RTOL)


def test_default_alpha_is_inverse_sqrt(rng):
    q, k = rng.standard_normal((3, 64)), rng.standard_normal((5, 64))
    assert_allclose(attention_logits(q, k), q @ k.T / 8.0, rtol=RTOL)


def test_quarter_power_on_q_and_k_equals_sqrt_scaling(rng):
    d_k = 64
    q, k = rng.standard_normal((3, d_k)), rng.standard_normal((5, d_k))
    split = attention_weights(q * d_k**-0.25, k * d_k**-0.25, alpha=0.0)
    assert_allclose(split, attention_weights(q, k, alpha=0.5), rtol=1e-12)


def test_batch_dimensions_broadcast(rng):
    q = rng.standard_normal((2, 3, 4, 8))  # (batch, heads, n_q, d_k)
    k = rng.standard_normal((3, 5, 8))  # shared over batch
    p = attention_weights(q, k)
    assert p.shape == (2, 3, 4, 5)
    assert_allclose(p[1, 2], loop_weights(q[1, 2], k[2], 0.5), rtol=1e-10)


def test_shape_mismatch_names_both_shapes(rng):
    q, k = rng.standard_normal((5, 8)), rng.standard_normal((7, 4))
    with pytest.raises(ValueError, match=re.escape("q has shape (5, 8), k has shape (7, 4)")):
        attention_weights(q, k)
    with pytest.raises(ValueError, match="batch dimensions"):
        attention_weights(rng.standard_normal((2, 5, 8)), rng.standard_normal((3, 7, 8)))
    with pytest.raises(ValueError, match="q must have shape"):
        attention_weights(np.ones(8), np.ones((3, 8)))


@pytest.mark.parametrize("alpha", [-0.1, 4.5, math.nan, "0.5"])
def test_bad_alpha(rng, alpha):
    with pytest.raises(ValueError, match="alpha"):
        attention_weights(np.ones((2, 3)), np.ones((2, 3)), alpha=alpha)


def test_sdpa_output_is_weighted_values(rng):
    q, k, v = rng.standard_normal((4, 8)), rng.standard_normal((6, 8)), rng.standard_normal((6, 3))
    out, weights = scaled_dot_product_attention(q, k, v, alpha=0.5)
    assert out.shape == (4, 3)
    assert_allclose(weights, attention_weights(q, k), rtol=RTOL)
    assert_allclose(out, weights @ v, rtol=RTOL)
    with pytest.raises(ValueError, match=re.escape("k has shape (6, 8), v has shape (5, 3)")):
        scaled_dot_product_attention(q, k, v[:5])


def test_mask_equals_dropping_keys(rng):
    q, k, v = rng.standard_normal((4, 8)), rng.standard_normal((6, 8)), rng.standard_normal((6, 3))
    keep = np.array([True, False, True, True, False, True])
    out, weights = scaled_dot_product_attention(q, k, v, mask=keep)
    out_ref, weights_ref = scaled_dot_product_attention(q, k[keep], v[keep])
    assert_array_equal(weights[:, ~keep], 0.0)
    assert_allclose(weights[:, keep], weights_ref, rtol=RTOL)
    assert_allclose(out, out_ref, rtol=1e-12)


def test_causal_mask_and_fully_masked_row(rng):
    n = 5
    q, k, v = rng.standard_normal((n, 4)), rng.standard_normal((n, 4)), rng.standard_normal((n, 2))
    causal = np.tril(np.ones((n, n), dtype=bool))
    _, weights = scaled_dot_product_attention(q, k, v, mask=causal)
    assert_array_equal(weights[~causal], 0.0)
    assert_allclose(weights.sum(-1), 1.0, rtol=RTOL)
    causal[0, 0] = False  # query 0 now sees no key
    out, weights = scaled_dot_product_attention(q, k, v, mask=causal)
    assert_array_equal(weights[0], 0.0)
    assert_array_equal(out[0], 0.0)


def test_mask_validation(rng):
    q, k, v = np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 1))
    with pytest.raises(ValueError, match="mask must be a boolean array"):
        scaled_dot_product_attention(q, k, v, mask=np.ones((2, 4)))
    with pytest.raises(ValueError, match="mask of shape"):
        scaled_dot_product_attention(q, k, v, mask=np.ones((3, 4), dtype=bool))


# --------------------------------------------------------------------------- backward


def _loss(q, k, v, g, alpha, mask=None):
    out, _ = scaled_dot_product_attention(q, k, v, alpha=alpha, mask=mask)
    return float(np.sum(out * g))


def _finite_difference(loss, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        orig = x[idx]
        x[idx] = orig + h
        up = loss()
        x[idx] = orig - h
        down = loss()
        x[idx] = orig
        grad[idx] = (up - down) / (2 * h)
    return grad


def _rel_err(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
def test_backward_matches_finite_differences(rng, alpha):
    q = rng.standard_normal((2, 3, 4))  # (batch, n_q, d_k)
    k = rng.standard_normal((2, 5, 4))
    v = rng.standard_normal((2, 5, 3))
    g = rng.standard_normal((2, 3, 3))
    grads = attention_backward(q, k, v, g, alpha=alpha)
    for x, grad in zip((q, k, v), grads, strict=True):
        assert grad.shape == x.shape
        numeric = _finite_difference(lambda: _loss(q, k, v, g, alpha), x)
        assert _rel_err(grad, numeric) < 1e-6


def test_backward_with_broadcast_keys_and_mask(rng):
    q = rng.standard_normal((2, 3, 4))
    k = rng.standard_normal((1, 5, 4))  # shared by both batch entries: gradients are summed
    v = rng.standard_normal((5, 2))
    g = rng.standard_normal((2, 3, 2))
    mask = np.tril(np.ones((3, 5), dtype=bool), k=1)
    grads = attention_backward(q, k, v, g, alpha=0.5, mask=mask)
    for x, grad in zip((q, k, v), grads, strict=True):
        assert grad.shape == x.shape
        numeric = _finite_difference(lambda: _loss(q, k, v, g, 0.5, mask), x)
        assert _rel_err(grad, numeric) < 1e-6


def test_backward_saturated_softmax_passes_tiny_gradient_to_typical_query(rng):
    # 400 independent one-query heads at d_k = 1024: the median ‖∂L/∂q‖ collapses
    # without scaling (individual near-tied rows can still get large gradients).
    d_k = 1024
    q, k = rng.standard_normal((400, 1, d_k)), rng.standard_normal((400, 8, d_k))
    v, g = rng.standard_normal((400, 8, 4)), rng.standard_normal((400, 1, 4))
    unscaled = np.linalg.norm(attention_backward(q, k, v, g, alpha=0.0)[0], axis=(1, 2))
    scaled = np.linalg.norm(attention_backward(q, k, v, g, alpha=0.5)[0], axis=(1, 2))
    assert np.median(unscaled) < 1e-2 * np.median(scaled)


def test_backward_bad_grad_out_shape(rng):
    q, k, v = np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 2))
    with pytest.raises(ValueError, match="grad_out of shape"):
        attention_backward(q, k, v, np.ones((3, 2)))
