"""The shipped single runs (data/training_runs.npz): invariants, the early steps of a
regenerated slice, the verdicts, and the page reading the file as it would train.

The file is written by scripts/precompute_runs.py. Here: it has every (m, optimizer,
d_k) the page offers with the shapes and settings of ui.training.runs; the per-step
records are what TrainingHistory says they are (accuracy and the dead share are
multiples of 1/64 in [0, 1], entropy in [0, ln 16], probe rows sum to 1).

Where the trajectories separate. The runs are deterministic given the seed, but the
last bit of exp/log/sums and of the BLAS products depends on the CPU's kernels, and the
unscaled model (α = 0) amplifies it. Measured (2026-12-02, on the m = 1 runs) under
three kernel settings: at d_k = 16 the first step at which α = 0's records differ by
more than 1e-9 relative is 188–233 with SGD and never with Adam; α = ½ and α = 1 never
separate. So the regenerated d_k = 16 runs are compared with the file over the first
``EARLY`` = 100 steps for every variant and over all 300 steps for α = ½ and α = 1.
The per-step records and probe weights are stored as float32 (the page draws float32),
so the comparison is at float32 precision: 2⁻²³ relative, 1e-12 absolute for
probabilities.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from core.training import DEFAULT_LRS
from ui.training import data, runs

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def shipped() -> dict[str, np.ndarray]:
    return runs.load()


def test_every_offered_run_is_there_with_its_shapes(shipped):
    assert int(shipped["format_version"]) == runs.FORMAT_VERSION
    assert list(shipped["ms"]) == list(runs.M_OPTIONS) == [1, 2, 4]
    assert list(shipped["d_ks"]) == list(runs.D_K_POWERS)
    assert list(shipped["optimizers"]) == ["sgd", "adam"]
    assert list(shipped["lrs"]) == [DEFAULT_LRS["sgd"], DEFAULT_LRS["adam"]]
    assert list(shipped["snapshot_steps"]) == [*runs.SNAPSHOTS, runs.STEPS - 1]
    V = len(runs.BASE_VARIANTS)
    for m in runs.M_OPTIONS:
        targets = shipped[f"m{m}/probe_target"]
        assert targets.shape == (runs.N_PROBE, m)
        assert all(len(set(row)) == m for row in targets.tolist())  # distinct keys
        for opt in ("sgd", "adam"):
            for d_k in runs.D_K_POWERS:
                p = f"m{m}/{opt}/{d_k}/"
                for f in runs.PER_STEP:
                    assert shipped[p + f].shape == (runs.STEPS, V), p + f
                    assert shipped[p + f].dtype == np.float32, p + f
                    assert np.isfinite(shipped[p + f]).all(), p + f  # no run diverged
                assert list(shipped[p + "diverged_at"]) == [-1] * V
                ell0 = shipped[p + "initial_loss"]
                assert ell0.shape == (V,) and ell0.dtype == np.float64 and (ell0 > 0).all()
                w = shipped[p + "probe_weights"]
                assert w.shape == (len(runs.SNAPSHOTS) + 1, V, runs.N_PROBE, 16)
                assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-5)  # float32 sums
                for f in ("accuracy", "dead_fraction"):
                    x = shipped[p + f].astype(np.float64) * 64
                    assert (np.abs(x - np.round(x)) < 1e-4).all(), p + f
                    assert (x >= 0).all() and (x <= 64 + 1e-4).all()
                assert (shipped[p + "entropy"] >= 0).all()
                assert (shipped[p + "entropy"] <= math.log(16) + 1e-6).all()
                assert (shipped[p + "loss"] >= 0).all()


#: Steps of the regenerated runs compared with the file for every variant (see above).
EARLY = 100
#: Variants compared over all their steps: they do not separate (see above).
STEADY = ("alpha_half", "alpha_1")


def test_d_k_16_runs_regenerate(tmp_path, shipped):
    out = tmp_path / "runs.npz"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "precompute_runs.py"), "--out", str(out),
         "--d-ks", "16"],
        check=True, cwd=ROOT, capture_output=True, timeout=300,
    )  # fmt: skip
    again = runs.load(out)
    snapshots = again["snapshot_steps"]
    assert list(snapshots) == list(shipped["snapshot_steps"])
    for m in runs.M_OPTIONS:
        assert np.array_equal(again[f"m{m}/probe_target"], shipped[f"m{m}/probe_target"])
        for opt in ("sgd", "adam"):
            p = f"m{m}/{opt}/16/"
            assert_allclose(again[p + "initial_loss"], shipped[p + "initial_loss"], rtol=1e-12)
            for i, name in enumerate(runs.BASE_VARIANTS):
                steps = runs.STEPS if name in STEADY else EARLY
                for f in (*runs.PER_STEP, "probe_weights"):
                    new, old = again[p + f][:, i], shipped[p + f][:, i]
                    if f == "probe_weights":  # (snapshot, probe row, key): early snapshots
                        new, old = new[snapshots < steps], old[snapshots < steps]
                    else:
                        new, old = new[:steps], old[:steps]
                    assert_allclose(new, old, rtol=2.0**-22, atol=1e-12, err_msg=f"{p}{f} {name}")
                assert again[p + "diverged_at"][i] == shipped[p + "diverged_at"][i] == -1
            assert _verdicts(again, m, opt, 16) == _verdicts(shipped, m, opt, 16)


def _verdicts(arrays: dict, m: int, opt: str, d_k: int) -> list[str]:
    """The one-run table's verdict of each variant, on the task's scale."""
    loss = arrays[f"m{m}/{opt}/{d_k}/loss"].astype(np.float64)  # (steps, variants)
    return [data.verdict(f, m) for f in loss[-data.LAST :].mean(axis=0)]


def test_verdicts_of_the_shipped_runs(shipped):
    """The one-run table's verdicts at every shipped setting, written out: gap left
    g = (final − ℓ*)/(ℓ_u − ℓ*) against 10 % and 90 %, whatever ℓ₀."""
    from core.training import uniform_loss

    for m in runs.M_OPTIONS:
        best, u = data.task_best(m), uniform_loss(m, 16)
        for opt in ("sgd", "adam"):
            for d_k in runs.D_K_POWERS:
                loss = shipped[f"m{m}/{opt}/{d_k}/loss"].astype(np.float64)
                gap = (loss[-data.LAST :].mean(axis=0) - best) / (u - best)
                expected = [
                    "learns" if g <= 0.1 else "fails" if g >= 0.9 else "partly" for g in gap
                ]
                assert _verdicts(shipped, m, opt, d_k) == expected, (m, opt, d_k)


def test_single_run_reads_what_it_would_train(monkeypatch):
    """The frames from the file equal the frames of a fresh run (task m = 2). Adam at
    d_k = 16 does not separate, so the two differ only by the file's float32 storage:
    curves and probe weights, float32 on the page too, by at most one float32 ULP (2⁻²³
    relative; probe weights, probabilities, also by 1e-12 absolute, for the subnormals of
    a saturated row); the summary, a mean of 30 float32-stored steps, by 2⁻²² relative
    (ℓ₀ is stored in float64)."""
    from_file = data.single_run.__wrapped__(16, "adam", 1e-2, 300, runs.BASE_VARIANTS, 0, 2)
    monkeypatch.setattr(runs, "shipped", lambda *a, **k: None)
    trained = data.single_run.__wrapped__(16, "adam", 1e-2, 300, runs.BASE_VARIANTS, 0, 2)
    f32 = {"check_exact": False, "rtol": 2.0**-23, "atol": 0.0}
    for metric in data.METRICS:
        pd.testing.assert_frame_equal(from_file["curves"][metric], trained["curves"][metric], **f32)
    pd.testing.assert_frame_equal(from_file["probe"], trained["probe"], **(f32 | {"atol": 1e-12}))
    # the summary averages float32-stored steps: within float32 rounding of the run's
    pd.testing.assert_frame_equal(
        from_file["summary"], trained["summary"], check_exact=False, rtol=2.0**-22, atol=1e-7
    )


@pytest.mark.parametrize(
    "settings",
    [
        dict(d_k=24),  # not a power of two
        dict(lr=3e-2),  # not the default rate
        dict(steps=200),
        dict(seed=1),
        dict(variants=(*runs.BASE_VARIANTS, "folded")),
        dict(m=3),  # not a task the page offers
    ],
)
def test_other_settings_are_not_shipped(shipped, settings):
    args = dict(d_k=64, optimizer="adam", lr=1e-2, steps=300, variants=runs.BASE_VARIANTS, seed=0)
    assert runs.shipped(shipped, **args) is not None
    assert runs.shipped(shipped, **(args | settings)) is None
