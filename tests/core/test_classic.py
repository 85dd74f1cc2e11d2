"""The toy experiment's exact fast sampler against a direct Q Kᵀ simulation and theory.

Statistical checks use 4 standard errors; seeds are fixed, so runs are deterministic.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from core.classic import (
    ROWMAX_HIGH,
    classic_rowmax,
    classic_scores,
    printout_chance,
    printout_rowmax,
    rowmax_summary,
)
from core.experiments import classic_experiment_rowmax, saturation_stats
from core.softmax import softmax


def rng_for(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def mean_se(x: np.ndarray) -> tuple[float, float]:
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def test_scores_shape_and_moments():
    d = 64
    s = classic_scores(4, 10, d, 4000, rng=rng_for(1))
    assert s.shape == (4000, 4, 10, 10)
    # one entry per batch element: independent draws of q·k, mean 0, variance d
    x = s[:, :, 3, 7].ravel()
    mean, se = mean_se(x)
    assert abs(mean) < 4 * se
    var, var_se = mean_se(x**2)
    assert abs(var - d) < 4 * var_se


@pytest.mark.parametrize("d", [3, 10, 64])  # d < seq_len (direct path), d = seq_len, d > seq_len
def test_scores_dependence_matches_shared_keys(d):
    """Rows sharing key k_j: Cov(S_ij², S_lj²) = Var(‖k_j‖²) = 2d; Cov(S_ij, S_lj) = 0."""
    s = classic_scores(1, 10, d, 20_000, rng=rng_for(2 + d))[:, 0]  # (rep, n, n)
    a, b = s[:, 0, 4], s[:, 5, 4]  # two queries, the same key
    prod, prod_se = mean_se(a * b)
    assert abs(prod) < 4 * prod_se
    cov_sq, cov_se = mean_se(a**2 * b**2 - d * d)
    assert abs(cov_sq - 2 * d) < 4 * cov_se
    # two keys, the same query: ‖q‖² shared, Cov(S_ij², S_ik²) = 2d as well
    c, e = s[:, 2, 1], s[:, 2, 8]
    cov_sq, cov_se = mean_se(c**2 * e**2 - d * d)
    assert abs(cov_sq - 2 * d) < 4 * cov_se


@pytest.mark.parametrize(("batch", "seq_len", "d"), [(2, 8, 3), (4, 10, 10), (4, 10, 64)])
def test_rowmax_matches_direct_simulation(batch, seq_len, d):
    n = 3000
    fast = classic_rowmax(batch, seq_len, d, n, rng=rng_for(10 + d), alphas=(0.0, 0.5))
    assert fast.shape == (2, n, batch, seq_len)
    for i, alpha in enumerate((0.0, 0.5)):
        direct = classic_experiment_rowmax(batch, seq_len, d, n, rng=rng_for(20 + d), alpha=alpha)
        f, g = rowmax_summary(fast[i]), rowmax_summary(direct)
        assert abs(f["mean"] - g["mean"]) < 4 * math.hypot(f["se"], g["se"])
        # one row per replicate is an iid sample: the laws agree (two-sample KS)
        ks = stats.ks_2samp(fast[i, :, 0, 0], direct[:, 0, 0])
        assert ks.pvalue > 1e-3
        # the per-tensor maximum too (it depends on the dependence between rows)
        ks = stats.ks_2samp(fast[i].max(axis=(1, 2)), direct.max(axis=(1, 2)))
        assert ks.pvalue > 1e-3


def test_rowmax_equals_softmax_of_the_same_scores():
    scores = classic_scores(2, 6, 32, 5, rng=rng_for(30))
    rowmax = classic_rowmax(2, 6, 32, 5, rng=rng_for(30), alphas=(0.0, 0.5, 1.0))
    for i, alpha in enumerate((0.0, 0.5, 1.0)):
        expected = softmax(scores * 32.0**-alpha).max(axis=-1)
        np.testing.assert_allclose(rowmax[i], expected, rtol=1e-12)


def test_figures_at_the_quoted_shape():
    """Unscaled mean row max ≈ 0.86, only the tensor max is ≈ 1 (docs/mathematics.md §3.6).

    A row of the toy experiment has the one-row law of core.experiments (ρ = 0): its mean
    row max is recomputed there, by another exact sampler (χ² instead of Bartlett).
    """
    rowmax = classic_rowmax(4, 10, 64, 4000, rng=rng_for(40))
    unscaled, scaled = rowmax_summary(rowmax[0]), rowmax_summary(rowmax[1])
    one_row = [saturation_stats(64, 10, a, rng=rng_for(41), n_rows=100_000) for a in (0.0, 0.5)]
    for summary, other in zip((unscaled, scaled), one_row, strict=True):
        gap = abs(summary["mean"] - other.max_weight_mean)
        assert gap < 4 * math.hypot(summary["se"], other.max_weight_se)
    # the saturation page quotes "about 0.86" and "about 0.32": within one unit of the last digit
    assert unscaled["mean"] == pytest.approx(0.86, abs=0.01)
    assert scaled["mean"] == pytest.approx(0.32, abs=0.01)
    assert unscaled["tensor_max_median"] > 0.9999
    assert unscaled["tensor_high_share"] > 0.99
    assert unscaled["q10"] < 0.7  # one row in ten is far from one-hot
    assert 0.2 < unscaled["high_share"] < 0.5
    # scaled rows are rarely one-hot
    assert scaled["high_share"] < 0.01


def test_summary_fields_and_order():
    rowmax = classic_rowmax(3, 5, 16, 500, rng=rng_for(50))[0]
    s = rowmax_summary(rowmax)
    assert s["q10"] <= s["q25"] <= s["median"] <= s["q75"] <= s["q90"] <= 1.0
    assert s["n_replicates"] == 500 and s["n_rows"] == 500 * 15
    assert s["high_share"] == pytest.approx(np.mean(rowmax >= ROWMAX_HIGH))
    assert s["tensor_max_median"] >= s["median"]


def test_one_key_is_one_hot():
    rowmax = classic_rowmax(2, 1, 8, 10, rng=rng_for(60))
    assert (rowmax == 1.0).all()


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"batch": 0}, "batch"),
        ({"seq_len": 0}, "seq_len"),
        ({"d_k": 0}, "d_k"),
        ({"d_k": 2.5}, "d_k"),
        ({"n_replicates": 0}, "n_replicates"),
        ({"alphas": (5.0,)}, "alpha"),
        ({"alphas": (float("nan"),)}, "alpha"),
        ({"alphas": ()}, "alphas"),
        ({"batch": 4096, "seq_len": 1024, "n_replicates": 10}, "n_replicates"),
    ],
)
def test_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        classic_rowmax(**{"n_replicates": 2, **kwargs}, rng=rng_for(0))


def test_bad_rng_and_summary_input():
    with pytest.raises(ValueError, match="rng"):
        classic_scores(rng=np.random.default_rng)
    with pytest.raises(ValueError, match="rowmax"):
        rowmax_summary(np.ones((4, 10)))
    with pytest.raises(ValueError, match="rowmax"):
        rowmax_summary(np.ones((0, 4, 10)))


# --- the printout np.max(attn, axis=-1)[0]: its first values, and the quoted output's chance ---
PRINTOUT = Path(__file__).resolve().parents[2] / "data" / "classic_printout.json"


def direct_printout(n_printed, seq_len, d, n, rng, chunk=20_000):
    """First printed row maxima with Q and K drawn explicitly, shape (n, n_printed)."""
    out = []
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        q = rng.standard_normal((m, n_printed, d))
        k = rng.standard_normal((m, seq_len, d))
        s = q @ np.swapaxes(k, -1, -2)  # (m, n_printed, seq_len)
        out.append(1.0 / np.exp(s - s.max(axis=-1, keepdims=True)).sum(axis=-1))
    return np.concatenate(out)


@pytest.mark.parametrize(("n_printed", "seq_len", "d", "threshold"),
                         [(4, 10, 64, 0.99), (4, 6, 3, 0.6), (1, 10, 64, 0.9997)])  # fmt: skip
def test_printout_sampler_matches_direct_simulation(n_printed, seq_len, d, threshold):
    """The Gram-factor sampler (d ≥ n_printed) and its direct path (d < n_printed) against
    Q, K drawn explicitly: the chance of a printout all ≥ threshold within 4 s.e., and the
    law of one printed row (two-sample KS)."""
    n = 60_000
    fast = printout_rowmax(n_printed, seq_len, d, n, rng=rng_for(70 + d))
    assert fast.shape == (n, n_printed)
    direct = direct_printout(n_printed, seq_len, d, n, rng_for(80 + d))
    f, g = printout_chance(fast, threshold), printout_chance(direct, threshold)
    assert f["hits"] > 100 and g["hits"] > 100  # enough for a binomial s.e.
    assert abs(f["chance"] - g["chance"]) < 4 * math.hypot(f["se"], g["se"])
    assert stats.ks_2samp(fast[:, -1], direct[:, -1]).pvalue > 1e-3


def test_printout_rows_equal_the_toy_experiments_rows():
    """Row i of a printout has the law of row i of the whole toy experiment (KS), and the
    rows of one printout are dependent the same way: the share of printouts whose two
    first rows are both ≥ 0.99 agrees within 4 s.e."""
    n = 40_000
    fast = printout_rowmax(2, 10, 64, n, rng=rng_for(90))
    whole = classic_rowmax(1, 10, 64, n, rng=rng_for(91), alphas=(0.0,))[0, :, 0, :2]
    assert stats.ks_2samp(fast[:, 0], whole[:, 0]).pvalue > 1e-3
    f, g = printout_chance(fast, 0.99), printout_chance(whole, 0.99)
    assert abs(f["chance"] - g["chance"]) < 4 * math.hypot(f["se"], g["se"])


def test_the_shipped_chance_of_the_quoted_printout():
    """data/classic_printout.json (scripts/printout_chance.py): its counts add up, chunk 0
    regenerates, and the chance agrees with an explicit simulation within 4 s.e."""
    from scripts import printout_chance as script

    doc = json.loads(PRINTOUT.read_text(encoding="utf-8"))
    assert doc["setting"] == {"batch": 4, "seq_len": 10, "d_k": 64, "n_printed": 4,
                              "threshold": 0.9997, "alpha": 0.0}  # fmt: skip
    n = doc["n_printouts"]
    assert n == doc["chunk"] * len(doc["chunk_hits"]) >= 10_000_000
    p = sum(doc["chunk_hits"]) / n
    assert doc["chance"] == pytest.approx(p, rel=1e-12)
    assert doc["se"] == pytest.approx(math.sqrt(p * (1 - p) / n), rel=1e-12)
    assert doc["row_share"] == pytest.approx(sum(doc["chunk_rows"]) / (4 * n), rel=1e-12)
    assert doc["se"] < 0.03 * doc["chance"]  # a precise number to quote
    # integer counts: another CPU changes one only for a row within an ulp of 0.9997
    assert script.chunk_counts(0) == (doc["chunk_hits"][0], doc["chunk_rows"][0])
    # Q (4 printed rows × 64) and K (10 × 64) drawn explicitly: 200,000 printouts
    direct = printout_chance(direct_printout(4, 10, 64, 200_000, rng_for(100)), 0.9997)
    assert direct["hits"] > 50
    assert abs(doc["chance"] - direct["chance"]) < 4 * math.hypot(doc["se"], direct["se"])
    # rows share their keys, yet the chance is close to row_share ** 4 (within 10 %)
    assert doc["chance"] == pytest.approx(doc["row_share"] ** 4, rel=0.1)


def test_printout_bad_arguments():
    with pytest.raises(ValueError, match="n_printed"):
        printout_rowmax(11, 10, 64, 10, rng=rng_for(0))
    with pytest.raises(ValueError, match="n_printouts"):
        printout_rowmax(4, 10, 64, 0, rng=rng_for(0))
    with pytest.raises(ValueError, match="alpha"):
        printout_rowmax(4, 10, 64, 10, rng=rng_for(0), alpha=-1.0)
    with pytest.raises(ValueError, match="rowmax"):
        printout_chance(np.ones(4), 0.9)
    with pytest.raises(ValueError, match="threshold"):
        printout_chance(np.ones((3, 4)), 1.5)
    one = printout_chance(np.array([[1.0, 0.5], [1.0, 1.0]]), 0.9)
    assert (one["chance"], one["hits"], one["row_share"]) == (0.5, 1.0, 0.75)
