"""core/char_lm.py: the NumPy forward pass and sampler on the shipped weights.

Identities, in float32 (d_model = 64: a dot product sums ≤ 256 products, so rounding is
~1e-6 relative; 1e-4 absolute on logits of size ≤ ~20 leaves a 10× margin):

* the KV cache: position-by-position logits equal the full causal pass;
* batching: M models in one call equal each model alone;
* the scale is one line: ``none`` with W_q, b_q multiplied by 1/√d_h is ``sqrt``;
* causality: changing a later character leaves earlier logits unchanged (exact);
* sampling: the same seed gives the same text; a tiny temperature is the arg-max.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from core import char_lm

WEIGHTS = Path(__file__).resolve().parents[2] / "data" / "char_lm_weights.npz"
ATOL = 1e-4
TEXT = (
    "Shall I compare thee to a summer's day?\nThou art more lovely and more temperate:\n"
    "Rough winds do shake the darling buds of May,\n"
)


@pytest.fixture(scope="module")
def shipped():
    with np.load(WEIGHTS) as z:
        meta = json.loads(str(z["meta"]))
        weights = {k: z[k] for k in z.files if k != "meta"}
    return weights, meta


def _sizes(meta):
    return sorted({m["d_h"] for m in meta["models"]})


def _ids(n):
    ids, dropped = char_lm.encode(TEXT)
    assert dropped == 0
    return ids[:n]


def test_the_cache_gives_the_full_pass(shipped):
    weights, meta = shipped
    for d_h in _sizes(meta):
        m = char_lm.models_for_head_size(weights, meta, d_h)
        run = {k: m[k] for k in ("n_heads", "scales", "qk_norm")}
        C = m["params"]["wpe"].shape[1]
        tokens = _ids(C)[None]
        full = char_lm.forward(m["params"], tokens, **run)
        cache = char_lm.empty_cache(m["params"], m["n_heads"], 1)
        first = char_lm.forward(m["params"], tokens[:, :10], cache=cache, **run)
        steps = [first] + [
            char_lm.forward(m["params"], tokens[:, t : t + 1], cache=cache, **run)
            for t in range(10, C)
        ]
        np.testing.assert_allclose(np.concatenate(steps, axis=2), full, rtol=0, atol=ATOL)
        assert cache["length"] == C
        with pytest.raises(ValueError, match="context"):
            char_lm.forward(m["params"], tokens[:, :1], cache=cache, **run)


def test_batched_models_equal_each_alone(shipped):
    weights, meta = shipped
    d_h = _sizes(meta)[0]
    m = char_lm.models_for_head_size(weights, meta, d_h)
    tokens = np.stack([_ids(40), _ids(41)[1:]])
    together = char_lm.forward(
        m["params"], tokens, n_heads=m["n_heads"], scales=m["scales"], qk_norm=m["qk_norm"]
    )
    for i in range(len(m["variants"])):
        alone = char_lm.forward(
            {k: a[i : i + 1] for k, a in m["params"].items()},
            tokens,
            n_heads=m["n_heads"],
            scales=m["scales"][i : i + 1],
            qk_norm=m["qk_norm"][i : i + 1],
        )
        np.testing.assert_allclose(together[i], alone[0], rtol=0, atol=ATOL)


def test_the_scale_is_one_line(shipped):
    weights, meta = shipped
    d_h = _sizes(meta)[-1]
    m = char_lm.models_for_head_size(weights, meta, d_h)
    i = m["variants"].index("sqrt")
    params = {k: a[i : i + 1].copy() for k, a in m["params"].items()}
    d = params["wte"].shape[-1]
    tokens = _ids(48)[None]
    ref = char_lm.forward(
        params, tokens, n_heads=m["n_heads"], scales=[1 / math.sqrt(d_h)], qk_norm=[False]
    )
    params["w_qkv"][..., :d] /= np.float32(math.sqrt(d_h))
    params["b_qkv"][..., :d] /= np.float32(math.sqrt(d_h))
    folded = char_lm.forward(params, tokens, n_heads=m["n_heads"], scales=[1.0], qk_norm=[False])
    np.testing.assert_allclose(folded, ref, rtol=0, atol=ATOL)


def test_later_characters_do_not_change_earlier_logits(shipped):
    weights, meta = shipped
    m = char_lm.models_for_head_size(weights, meta, _sizes(meta)[0])
    run = {k: m[k] for k in ("n_heads", "scales", "qk_norm")}
    a = _ids(30)[None]
    b = a.copy()
    b[0, 20:] = char_lm.VOCAB.index("z")
    la = char_lm.forward(m["params"], a, **run)
    lb = char_lm.forward(m["params"], b, **run)
    np.testing.assert_array_equal(la[:, :, :20], lb[:, :, :20])
    assert np.abs(la[:, :, 20:] - lb[:, :, 20:]).max() > 1e-3


def test_sampling_is_seeded_and_cold_sampling_is_greedy(shipped):
    weights, meta = shipped
    m = char_lm.models_for_head_size(weights, meta, _sizes(meta)[0])
    run = {k: m[k] for k in ("n_heads", "scales", "qk_norm")}
    prompt = _ids(20)
    C = m["params"]["wpe"].shape[1]
    n = C + 10  # past the context: the cache restarts once
    a = char_lm.generate(
        m["params"], prompt, n, temperature=1.0, rng=np.random.default_rng(5), **run
    )
    b = char_lm.generate(
        m["params"], prompt, n, temperature=1.0, rng=np.random.default_rng(5), **run
    )
    np.testing.assert_array_equal(a, b)
    assert a.shape == (len(m["variants"]), n) and a.min() >= 0 and a.max() < len(char_lm.VOCAB)
    # Greedy by hand, a full pass per character over the last C (≥ C // 2) characters.
    cold = char_lm.generate(
        m["params"], prompt, 12, temperature=1e-6, rng=np.random.default_rng(0), **run
    )
    hist = np.tile(prompt, (len(m["variants"]), 1))
    for t in range(12):
        logits = char_lm.forward(m["params"], hist[:, None, -C:], **run)[:, 0, -1]
        nxt = logits.argmax(-1)
        np.testing.assert_array_equal(cold[:, t], nxt)
        hist = np.concatenate([hist, nxt[:, None]], axis=1)


def test_encode_drops_what_the_models_do_not_know():
    ids, dropped = char_lm.encode("To be, 或不 to be\t#")
    assert char_lm.decode(ids) == "To be,  to be"
    assert dropped == 4
    ids, dropped = char_lm.encode("莎士比亚")
    assert ids.size == 0 and dropped == 4
    assert char_lm.decode(char_lm.encode(char_lm.VOCAB)[0]) == char_lm.VOCAB
    assert len(char_lm.VOCAB) == 84


def test_lr_sensitivity_follows_the_definition():
    loss = np.array([[3.0, 3.2], [2.0, 2.2], [np.nan, 6.0]])
    s, clipped = char_lm.lr_sensitivity(loss, 5.0)
    np.testing.assert_allclose(clipped, [3.1, 2.1, 5.0])
    assert s == pytest.approx(((3.1 - 2.1) + 0 + (5.0 - 2.1)) / 3)
    assert char_lm.lr_sensitivity(np.full((3, 2), 2.5), 5.0)[0] == 0.0


def test_bad_arguments_raise(shipped):
    weights, meta = shipped
    m = char_lm.models_for_head_size(weights, meta, _sizes(meta)[0])
    run = {k: m[k] for k in ("n_heads", "scales", "qk_norm")}
    with pytest.raises(ValueError, match="tokens"):
        char_lm.forward(m["params"], np.array([[0, 99]]), **run)
    with pytest.raises(ValueError, match="temperature"):
        char_lm.generate(m["params"], [1], 5, temperature=0.0, rng=np.random.default_rng(), **run)
    with pytest.raises(ValueError, match="n_new"):
        char_lm.generate(m["params"], [1], 0, temperature=1.0, rng=np.random.default_rng(), **run)
    with pytest.raises(ValueError, match="prompt"):
        char_lm.generate(m["params"], [], 5, temperature=1.0, rng=np.random.default_rng(), **run)
    with pytest.raises(ValueError, match="rng"):
        char_lm.generate(m["params"], [1], 5, temperature=1.0, rng=3, **run)
    with pytest.raises(ValueError, match="d_h"):
        char_lm.models_for_head_size(weights, meta, 7)
    with pytest.raises(ValueError, match="text"):
        char_lm.encode(b"bytes")
