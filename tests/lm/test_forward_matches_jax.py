"""The NumPy forward pass (core/char_lm.py) equals the training script's JAX forward pass on
every shipped model (data/char_lm_weights.npz, float16 weights read as float32).

Tolerance: both compute in float32; a logit is a sum over ≤ 4·d_model = 256 products per
matrix product, with two LayerNorms and a softmax per layer, so the two orders of summation
differ by ~1e-6 relative. Logits reach ~20 in size: 1e-4 absolute is a 10× margin over
the differences measured (≤ 7e-6 on logits up to 12 in size), and far below what changes a sampled character.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core import char_lm

WEIGHTS = Path(__file__).resolve().parents[2] / "data" / "char_lm_weights.npz"
ATOL = 1e-4


@pytest.fixture(scope="module")
def shipped():
    with np.load(WEIGHTS) as z:
        meta = json.loads(str(z["meta"]))
        weights = {k: z[k] for k in z.files if k != "meta"}
    return weights, meta


def test_numpy_forward_matches_jax(shipped, train_script):
    import jax.numpy as jnp

    weights, meta = shipped
    text = (Path(__file__).resolve().parent / "fixtures" / "sonnets_b_gut.txt").read_text()
    ids, _ = char_lm.encode(text)
    C = meta["config"]["context"]
    tokens = np.stack([ids[i * C : (i + 1) * C] for i in range(3)])
    for d_h in sorted({m["d_h"] for m in meta["models"]}):
        m = char_lm.models_for_head_size(weights, meta, d_h)
        ours = char_lm.forward(
            m["params"], tokens, n_heads=m["n_heads"], scales=m["scales"], qk_norm=m["qk_norm"]
        )
        for i, variant in enumerate(m["variants"]):
            params = {k: jnp.asarray(a[i]) for k, a in m["params"].items()}
            ref = np.asarray(
                train_script.forward(params, jnp.asarray(tokens), variant, m["n_heads"])
            )
            assert ref.shape == ours[i].shape
            np.testing.assert_allclose(ours[i], ref, rtol=0, atol=ATOL, err_msg=f"{variant} {d_h}")
