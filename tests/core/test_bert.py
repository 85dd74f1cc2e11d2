"""core.bert: the encoder forward against an explicit loop-based float64 computation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from core.bert import (
    BertConfig,
    bert_forward,
    bert_weights_from_state_dict,
    erf,
    gelu,
    layer_norm,
)

TINY = BertConfig(
    vocab_size=13,
    hidden_size=8,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=12,
    max_position_embeddings=10,
    type_vocab_size=2,
    layer_norm_eps=1e-3,  # large enough that using the wrong eps would show
)


def random_state(config: BertConfig, rng: np.random.Generator, prefix: str = "") -> dict:
    """A Hugging Face-style BertModel state dict with random float32 parameters."""
    h, i = config.hidden_size, config.intermediate_size

    def draw(*shape: int, scale: float = 0.5) -> np.ndarray:
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    state = {
        "embeddings.word_embeddings.weight": draw(config.vocab_size, h),
        "embeddings.position_embeddings.weight": draw(config.max_position_embeddings, h),
        "embeddings.token_type_embeddings.weight": draw(config.type_vocab_size, h),
        "embeddings.LayerNorm.weight": 1.0 + draw(h, scale=0.1),
        "embeddings.LayerNorm.bias": draw(h, scale=0.1),
    }
    for layer in range(config.num_hidden_layers):
        p = f"encoder.layer.{layer}."
        state |= {
            p + "attention.self.query.weight": draw(h, h),
            p + "attention.self.query.bias": draw(h),
            p + "attention.self.key.weight": draw(h, h),
            p + "attention.self.key.bias": draw(h),
            p + "attention.self.value.weight": draw(h, h),
            p + "attention.self.value.bias": draw(h),
            p + "attention.output.dense.weight": draw(h, h),
            p + "attention.output.dense.bias": draw(h),
            p + "attention.output.LayerNorm.weight": 1.0 + draw(h, scale=0.1),
            p + "attention.output.LayerNorm.bias": draw(h, scale=0.1),
            p + "intermediate.dense.weight": draw(i, h),
            p + "intermediate.dense.bias": draw(i),
            p + "output.dense.weight": draw(h, i),
            p + "output.dense.bias": draw(h),
            p + "output.LayerNorm.weight": 1.0 + draw(h, scale=0.1),
            p + "output.LayerNorm.bias": draw(h, scale=0.1),
        }
    return {prefix + name: arr for name, arr in state.items()}


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(14)


@pytest.fixture
def state(rng) -> dict:
    return random_state(TINY, rng)


@pytest.fixture
def weights(state):
    return bert_weights_from_state_dict(state, TINY)


# --- loop references (float64, one token and one head at a time) ----------------------


def loop_layer_norm(row, gamma, beta, eps):
    n = len(row)
    mean = sum(row) / n
    var = sum((v - mean) ** 2 for v in row) / n
    return [
        (row[j] - mean) / math.sqrt(var + eps) * float(gamma[j]) + float(beta[j]) for j in range(n)
    ]


def loop_linear(row, w, b):
    """y_o = Σ_j w[o, j] x_j + b_o, with w in (out, in) layout."""
    return [
        sum(float(w[o, j]) * row[j] for j in range(len(row))) + float(b[o]) for o in range(len(b))
    ]


def loop_embeddings(ids, types, state, eps):
    rows = []
    for pos, (tok, typ) in enumerate(zip(ids, types, strict=True)):
        x = [
            float(state["embeddings.word_embeddings.weight"][tok, j])
            + float(state["embeddings.position_embeddings.weight"][pos, j])
            + float(state["embeddings.token_type_embeddings.weight"][typ, j])
            for j in range(TINY.hidden_size)
        ]
        rows.append(
            loop_layer_norm(
                x,
                state["embeddings.LayerNorm.weight"],
                state["embeddings.LayerNorm.bias"],
                eps,
            )
        )
    return rows


def loop_layer(x, state, layer, config):
    """One encoder layer, token by token and head by head, with explicit sums."""
    p = f"encoder.layer.{layer}."
    n_heads, d_k, t = config.num_attention_heads, config.head_dim, len(x)

    def lin(row, name):
        return loop_linear(row, state[p + name + ".weight"], state[p + name + ".bias"])

    q_full = [lin(x[i], "attention.self.query") for i in range(t)]
    k_full = [lin(x[i], "attention.self.key") for i in range(t)]
    v_full = [lin(x[i], "attention.self.value") for i in range(t)]
    q = np.zeros((n_heads, t, d_k))
    k = np.zeros((n_heads, t, d_k))
    logits = np.zeros((n_heads, t, t))
    weights = np.zeros((n_heads, t, t))
    context = [[0.0] * config.hidden_size for _ in range(t)]
    for h in range(n_heads):
        cols = range(h * d_k, (h + 1) * d_k)
        for i in range(t):
            q[h, i] = [q_full[i][c] for c in cols]
            k[h, i] = [k_full[i][c] for c in cols]
        for i in range(t):
            z = [sum(q_full[i][c] * k_full[j][c] for c in cols) / math.sqrt(d_k) for j in range(t)]
            top = max(z)
            e = [math.exp(zj - top) for zj in z]
            s = sum(e)
            logits[h, i] = z
            weights[h, i] = [ej / s for ej in e]
            for c in cols:
                context[i][c] = sum(weights[h, i, j] * v_full[j][c] for j in range(t))
    out = []
    for i in range(t):
        attn = lin(context[i], "attention.output.dense")
        a = loop_layer_norm(
            [x[i][j] + attn[j] for j in range(config.hidden_size)],
            state[p + "attention.output.LayerNorm.weight"],
            state[p + "attention.output.LayerNorm.bias"],
            config.layer_norm_eps,
        )
        inter = [
            0.5 * u * (1.0 + math.erf(u / math.sqrt(2.0))) for u in lin(a, "intermediate.dense")
        ]
        ff = lin(inter, "output.dense")
        out.append(
            loop_layer_norm(
                [a[j] + ff[j] for j in range(config.hidden_size)],
                state[p + "output.LayerNorm.weight"],
                state[p + "output.LayerNorm.bias"],
                config.layer_norm_eps,
            )
        )
    return np.array(out), q, k, logits, weights


# --- the forward against the loops ---------------------------------------------------


def test_embeddings_and_every_layer_match_the_loop(state, weights):
    ids = np.array([[3, 7, 1, 12, 0, 5]])
    types = np.array([[0, 0, 0, 1, 1, 1]])
    out = bert_forward(ids, weights, TINY, token_type_ids=types)
    x = loop_embeddings(ids[0], types[0], state, TINY.layer_norm_eps)
    assert_allclose(out.hidden_states[0, 0], x, rtol=0, atol=1e-12)
    for layer in range(TINY.num_hidden_layers):
        # each layer is checked on the forward's own input, so errors cannot compound
        nxt, q, k, logits, attn = loop_layer(
            out.hidden_states[layer, 0].tolist(), state, layer, TINY
        )
        assert_allclose(out.q[layer, 0], q, rtol=0, atol=1e-12)
        assert_allclose(out.k[layer, 0], k, rtol=0, atol=1e-12)
        assert_allclose(out.logits[layer, 0], logits, rtol=0, atol=1e-12)
        assert_allclose(out.weights[layer, 0], attn, rtol=0, atol=1e-13)
        assert_allclose(out.hidden_states[layer + 1, 0], nxt, rtol=0, atol=1e-11)


def test_logits_are_scaled_q_dot_k(weights):
    out = bert_forward(np.array([[1, 2, 3, 4]]), weights, TINY)
    d_k = TINY.head_dim
    assert_allclose(
        out.logits, out.q @ out.k.swapaxes(-1, -2) / math.sqrt(d_k), rtol=1e-14, atol=1e-14
    )


def test_shapes_and_dtype(weights):
    n_batch, t = 3, 7
    ids = np.arange(n_batch * t).reshape(n_batch, t) % TINY.vocab_size
    out = bert_forward(ids, weights, TINY)
    n_l, n_h, d_k = TINY.num_hidden_layers, TINY.num_attention_heads, TINY.head_dim
    assert out.hidden_states.shape == (n_l + 1, n_batch, t, TINY.hidden_size)
    assert out.q.shape == out.k.shape == (n_l, n_batch, n_h, t, d_k)
    assert out.logits.shape == out.weights.shape == (n_l, n_batch, n_h, t, t)
    for arr in (out.hidden_states, out.q, out.k, out.logits, out.weights):
        assert arr.dtype == np.float64
    assert_allclose(out.weights.sum(axis=-1), 1.0, rtol=1e-14)
    out32 = bert_forward(ids, weights, TINY, dtype=np.float32)
    assert out32.logits.dtype == np.float32
    assert_allclose(out32.logits, out.logits, rtol=1e-4, atol=1e-4)


def test_batch_rows_are_independent(weights):
    ids = np.array([[1, 2, 3, 4, 5], [9, 8, 7, 6, 5]])
    both = bert_forward(ids, weights, TINY)
    for b in range(2):
        alone = bert_forward(ids[b : b + 1], weights, TINY)
        assert_allclose(both.hidden_states[:, b], alone.hidden_states[:, 0], rtol=0, atol=1e-13)


def test_padded_keys_get_zero_weight_and_leave_real_tokens_unchanged(weights):
    real = np.array([4, 9, 2])
    alone = bert_forward(real[None, :], weights, TINY)
    ids = np.array([[4, 9, 2, 0, 0], [4, 9, 2, 11, 6]])  # same real tokens, different padding
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 0, 0]])
    out = bert_forward(ids, weights, TINY, attention_mask=mask)
    assert_array_equal(out.weights[..., 3:], 0.0)
    assert_allclose(out.weights.sum(axis=-1), 1.0, rtol=1e-14)
    for b in range(2):
        assert_allclose(out.hidden_states[:, b, :3], alone.hidden_states[:, 0], rtol=0, atol=1e-13)
        assert_allclose(out.logits[:, b, :, :3, :3], alone.logits[:, 0], rtol=0, atol=1e-13)
        assert_allclose(out.weights[:, b, :, :3, :3], alone.weights[:, 0], rtol=0, atol=1e-14)
    bool_mask = bert_forward(ids, weights, TINY, attention_mask=mask.astype(bool))
    assert_array_equal(bool_mask.hidden_states, out.hidden_states)
    # without the mask the padding does change the real tokens
    unmasked = bert_forward(ids[:1], weights, TINY)
    assert np.abs(unmasked.hidden_states[-1, 0, :3] - alone.hidden_states[-1, 0]).max() > 1e-3


def test_layer_norm_uses_eps(rng):
    x = rng.standard_normal((4, 8))
    g, b = rng.standard_normal(8), rng.standard_normal(8)
    for eps in (1e-12, 0.5):
        expected = [loop_layer_norm(row, g, b, eps) for row in x.tolist()]
        assert_allclose(layer_norm(x, g, b, eps), expected, rtol=1e-13, atol=1e-14)


# --- erf and GELU ---------------------------------------------------------------------


def test_erf_matches_math_erf(rng):
    x = np.concatenate(
        [
            rng.standard_normal(500) * 3,
            [0.0, -0.0, 1e-300, -1e-300, 5e-324, 0.5, 1.0, 6.0, -6.0, 27.0, 1e300, -1e300],
            [np.inf, -np.inf],
        ]
    )
    got = erf(x.reshape(2, -1))
    assert got.shape == (2, x.size // 2)
    assert got.dtype == np.float64
    assert_array_equal(got.ravel(), [math.erf(v) for v in x])
    assert math.isnan(float(erf(np.nan)))
    assert erf(0.5).shape == ()
    # erf(1) to 17 significant digits (Abramowitz & Stegun, Table 7.1)
    assert abs(float(erf(1.0)) - 0.84270079294971487) < 1e-16


def test_gelu_exact_values_and_identity(rng):
    # x Φ(x) with Φ(1) = 0.841344746068542948…, Φ(−1) = 0.158655253931457051…
    assert_allclose(
        gelu(np.array([0.0, 1.0, -1.0])),
        [0.0, 0.8413447460685429, -0.15865525393145705],
        rtol=1e-15,
        atol=0,
    )
    x = rng.standard_normal(200) * 4
    assert_allclose(gelu(x) - gelu(-x), x, rtol=1e-14, atol=1e-15)  # x Φ(x) + x Φ(−x) = x
    assert gelu(np.float32(1.5)).dtype == np.float32
    assert gelu(np.array([2])).dtype == np.float64


# --- configuration and weights -----------------------------------------------------------


MINILM_CONFIG = {
    "architectures": ["BertModel"],
    "hidden_act": "gelu",
    "hidden_size": 384,
    "intermediate_size": 1536,
    "layer_norm_eps": 1e-12,
    "max_position_embeddings": 512,
    "num_attention_heads": 12,
    "num_hidden_layers": 6,
    "position_embedding_type": "absolute",
    "type_vocab_size": 2,
    "vocab_size": 30522,
}


def test_config_from_dict():
    cfg = BertConfig.from_dict(MINILM_CONFIG)
    assert cfg.head_dim == 32
    assert (cfg.num_hidden_layers, cfg.num_attention_heads, cfg.layer_norm_eps) == (6, 12, 1e-12)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"hidden_act": "gelu_new"}, "hidden_act"),
        ({"position_embedding_type": "relative_key"}, "position_embedding_type"),
        ({"num_attention_heads": 10}, "divisible"),
        ({"hidden_size": 0}, "hidden_size"),
        ({"layer_norm_eps": -1.0}, "layer_norm_eps"),
    ],
)
def test_config_rejects(change, message):
    with pytest.raises(ValueError, match=message):
        BertConfig.from_dict(MINILM_CONFIG | change)


def test_config_missing_field():
    cfg = dict(MINILM_CONFIG)
    del cfg["vocab_size"]
    with pytest.raises(ValueError, match="vocab_size"):
        BertConfig.from_dict(cfg)


def test_state_dict_prefix_and_shape_checks(rng, weights):
    prefixed = bert_weights_from_state_dict(
        random_state(TINY, np.random.default_rng(14), "bert."), TINY
    )
    assert_array_equal(prefixed.layers[1].out_w, weights.layers[1].out_w)
    assert prefixed.layers[1].out_w.dtype == np.float64
    state = random_state(TINY, rng)
    state["encoder.layer.1.intermediate.dense.weight"] = state[
        "encoder.layer.1.intermediate.dense.weight"
    ].T
    with pytest.raises(ValueError, match=r"intermediate\.dense\.weight.*shape"):
        bert_weights_from_state_dict(state, TINY)
    state = random_state(TINY, rng)
    del state["embeddings.LayerNorm.bias"]
    with pytest.raises(ValueError, match=r"missing.*embeddings\.LayerNorm\.bias"):
        bert_weights_from_state_dict(state, TINY)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"input_ids": np.array([1, 2, 3])}, "input_ids"),
        ({"input_ids": np.ones((1, 11), dtype=int)}, "T"),
        ({"input_ids": np.array([[1, 13]])}, "input_ids"),
        ({"input_ids": np.array([[1.0, 2.0]])}, "input_ids"),
        ({"token_type_ids": np.array([[0, 2]])}, "token_type_ids"),
        ({"attention_mask": np.array([[1, 1, 1]])}, "attention_mask"),
        ({"attention_mask": np.array([[1, 2]])}, "attention_mask"),
        ({"attention_mask": np.array([[0, 0]])}, "at least one"),
        ({"dtype": np.int32}, "dtype"),
    ],
)
def test_forward_rejects(weights, kwargs, message):
    args = {"input_ids": np.array([[1, 2]])} | kwargs
    with pytest.raises(ValueError, match=message):
        bert_forward(args.pop("input_ids"), weights, TINY, **args)
