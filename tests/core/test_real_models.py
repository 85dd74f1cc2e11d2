"""core.real_models against plain loops, and the summaries of the shipped MiniLM file."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose

from core import real_models as rm

DATA = Path(__file__).resolve().parents[2] / "data" / "minilm_attention.npz"


def _row_stats(row: np.ndarray) -> tuple[float, float]:
    """Entropy (nats) and largest weight of softmax(row), one element at a time."""
    top = max(row)
    e = [math.exp(v - top) for v in row]
    total = sum(e)
    p = [v / total for v in e]
    return -sum(x * math.log(x) for x in p if x > 0), max(p)


def test_divisors_and_multipliers():
    assert rm.divisor_value("none", 32) == 1.0
    assert rm.divisor_value("sqrt_d_k", 32) == math.sqrt(32)
    assert rm.divisor_value("d_k", 32) == 32.0
    assert rm.logit_multiplier("none", 32) == math.sqrt(32)
    assert rm.logit_multiplier("sqrt_d_k", 32) == 1.0
    assert rm.logit_multiplier("d_k", 32) == pytest.approx(1 / math.sqrt(32), rel=1e-15)
    with pytest.raises(ValueError, match="divisor"):
        rm.divisor_value("d_model", 32)
    with pytest.raises(ValueError, match="d_k"):
        rm.logit_multiplier("none", 0)


def test_head_summaries_match_a_loop():
    rng = np.random.default_rng(1)
    z = rng.normal(0, 3, size=(2, 3, 5, 5))
    mult = (4.0, 1.0, 0.25)
    out = rm.head_summaries(z, mult)
    assert out["std"].shape == out["mean"].shape == (2, 3)
    assert out["entropy"].shape == out["max_weight"].shape == (2, 3, 3)
    for i in range(2):
        for j in range(3):
            vals = z[i, j].ravel().tolist()
            mean = sum(vals) / len(vals)
            assert out["mean"][i, j] == pytest.approx(mean, rel=1e-12)
            std = math.sqrt(sum((v - mean) ** 2 for v in vals) / len(vals))
            assert out["std"][i, j] == pytest.approx(std, rel=1e-12)
            for k, m in enumerate(mult):
                stats = [_row_stats([m * v for v in row]) for row in z[i, j].tolist()]
                h = sum(s[0] for s in stats) / len(stats)
                top = sum(s[1] for s in stats) / len(stats)
                assert out["entropy"][i, j, k] == pytest.approx(h, rel=1e-10, abs=1e-12)
                assert out["max_weight"][i, j, k] == pytest.approx(top, rel=1e-12)


def test_head_summaries_extremes_and_errors():
    uniform = np.zeros((1, 4, 4))
    out = rm.head_summaries(uniform, [1.0])
    assert out["entropy"][0, 0] == pytest.approx(math.log(4), rel=1e-15)
    assert out["max_weight"][0, 0] == 0.25
    one_hot = np.where(np.eye(3, dtype=bool), 1e3, 0.0)
    assert rm.head_summaries(one_hot, [1.0])["entropy"][0] < 1e-300
    with pytest.raises(ValueError, match="T, T"):
        rm.head_summaries(np.zeros((2, 3)), [1.0])
    with pytest.raises(ValueError, match="multipliers"):
        rm.head_summaries(uniform, [0.0])
    with pytest.raises(ValueError, match="logits"):
        rm.head_summaries(np.full((2, 2), np.nan), [1.0])


def test_split_logits_and_corpus_summaries():
    rng = np.random.default_rng(2)
    tokens = np.array([3, 5, 2])
    blocks = [rng.normal(size=(2, 4, t, t)) for t in tokens]
    flat = np.concatenate([b.ravel() for b in blocks]).astype(np.float16)
    offsets = np.concatenate([[0], np.cumsum([b.size for b in blocks])])
    parts = rm.split_logits(flat, offsets, tokens, 2, 4)
    for part, block in zip(parts, blocks, strict=True):
        assert part.dtype == np.float64
        assert_allclose(part, block.astype(np.float16), rtol=0, atol=0)
    out = rm.corpus_summaries(parts, (1.0, 2.0))
    assert out["entropy"].shape == (3, 2, 4, 2)
    assert out["n_tokens"].tolist() == tokens.tolist()
    assert_allclose(out["std"][1], parts[1].reshape(2, 4, -1).std(-1), rtol=1e-15)
    with pytest.raises(ValueError, match="logit_offsets"):
        rm.split_logits(flat, offsets[:-1], tokens, 2, 4)
    with pytest.raises(ValueError, match="logit_offsets"):
        rm.split_logits(flat[:-1], offsets, tokens, 2, 4)
    with pytest.raises(ValueError, match="n_layers"):
        rm.corpus_summaries([parts[0], parts[1][:1]], (1.0,))


def test_collapsed_share_counts_cells():
    h = np.full((2, 3, 4, 2), 1.0)
    h[0, 0, 0, 0] = 0.05
    h[1, 2, 3, 0] = 0.0999
    h[1, 2, 3, 1] = 0.1  # not below
    assert rm.collapsed_share(h).tolist() == [2 / 24, 0.0]
    assert rm.collapsed_share(h, threshold=0.2).tolist() == [2 / 24, 1 / 24]
    with pytest.raises(ValueError, match="entropy"):
        rm.collapsed_share(h[0])


def test_pooled_histogram_matches_counts():
    a = np.array([-3.0, -0.5, 0.2, 0.7])
    b = np.array([[1.5, 9.0], [-0.1, 0.4]])
    edges = np.array([-2.0, 0.0, 1.0, 2.0])
    out = rm.pooled_histogram([a, b], edges)
    n = 8
    assert out["n"] == n
    assert out["density"].tolist() == pytest.approx([2 / (n * 2), 3 / n, 1 / n])
    assert out["below"] == 1 / n and out["above"] == 1 / n
    values = np.concatenate([a, b.ravel()])
    assert out["mean"] == pytest.approx(values.mean()) and out["std"] == pytest.approx(values.std())
    assert (out["min"], out["max"]) == (-3.0, 9.0)
    inside = float(np.sum(out["density"] * np.diff(edges)))
    assert inside + out["below"] + out["above"] == pytest.approx(1.0, rel=1e-15)
    with pytest.raises(ValueError, match="edges"):
        rm.pooled_histogram([a], np.array([1.0, 0.0]))


def test_standard_normal_pdf():
    x = np.linspace(-6, 6, 12_001)
    pdf = rm.standard_normal_pdf(x)
    assert pdf[6000] == pytest.approx(1 / math.sqrt(2 * math.pi), rel=1e-15)
    assert float(np.sum(pdf) * (x[1] - x[0])) == pytest.approx(1.0, abs=1e-8)


def test_head_attention_rows():
    z = np.array([[0.0, 1.0, 2.0], [5.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    out = rm.head_attention(z, 2.0)
    assert_allclose(out["logits"], 2 * z, rtol=0)
    assert_allclose(out["weights"].sum(-1), 1.0, rtol=1e-15)
    for i, row in enumerate((2 * z).tolist()):
        h, top = _row_stats(row)
        assert out["entropy"][i] == pytest.approx(h, rel=1e-12)
        assert out["max_weight"][i] == pytest.approx(top, rel=1e-15)
    assert out["argmax"].tolist() == [2, 0, 0]
    with pytest.raises(ValueError, match="T, T"):
        rm.head_attention(np.zeros((2, 3)), 1.0)


# --- the shipped file -------------------------------------------------------------------
@pytest.fixture(scope="module")
def shipped():
    with np.load(DATA, allow_pickle=False) as f:
        data = {name: f[name] for name in f.files}
    parts = rm.split_logits(
        data["logits"], data["logit_offsets"], data["n_tokens"], 6, int(data["n_heads"])
    )
    mult = [rm.logit_multiplier(name, int(data["d_k"])) for name in rm.DIVISORS]
    return data, parts, rm.corpus_summaries(parts, mult)


def test_live_summaries_agree_with_the_float64_ones_in_the_file(shipped):
    """The file stores summaries from the float64 forward; the float16 logits give the same
    to float16 rounding (relative 2⁻¹¹ per logit, at most ~33·2⁻¹¹ ≈ 0.02 on a logit
    multiplied by √32, so well under 0.01 after averaging rows)."""
    data, _, live = shipped
    assert_allclose(live["std"], data["logit_std"], rtol=2e-3)
    assert_allclose(live["entropy"], data["entropy"], atol=5e-3)
    assert_allclose(live["max_weight"], data["max_weight"], atol=5e-3)


def test_the_figures_the_page_reports(shipped):
    """Per-layer mean logit std, mean entropy, max weight and collapsed share, to the
    digits the page prints: within half a unit of the last one (a tolerance, so that a
    value computed with other rounding cannot flip a digit at …5). The collapsed share
    is a count of heads (over the sentences) below 0.1 nats: the closest entropy lies 0.18 %
    from that threshold."""
    data, _, live = shipped
    layer_std = live["std"].mean(axis=(0, 2))
    assert_allclose(layer_std, [1.90, 2.15, 1.97, 1.47, 1.50, 1.21], rtol=0, atol=0.005)
    assert live["std"].mean() == pytest.approx(1.70, abs=0.005)
    assert_allclose(live["entropy"].mean(axis=(0, 1, 2)), [0.22, 1.56, 2.66], rtol=0, atol=0.005)
    assert_allclose(
        live["max_weight"].mean(axis=(0, 1, 2)), [0.918, 0.533, 0.127], rtol=0, atol=0.0005
    )
    share = rm.collapsed_share(live["entropy"])
    cells = live["entropy"][..., 0].size  # sentences × layers × heads
    assert_allclose(share * cells, [435, 17, 0], rtol=0, atol=1e-9)  # 35.5 %, 1.4 %, 0 %
    # the one collapsed head with √d_k: layer 0, head 2, in every sentence
    collapsed = live["entropy"][..., 1] < rm.COLLAPSE_NATS
    assert np.argwhere(collapsed.all(axis=0)).tolist() == [[0, 2]]
    assert collapsed.sum() == len(data["sentences"])
    assert math.log(data["n_tokens"].mean()) == pytest.approx(2.74, abs=0.005)
