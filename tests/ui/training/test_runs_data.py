"""The shipped single runs (data/training_runs.npz): invariants, a regenerated slice,
and the page reading them exactly as it would train them.

The file is written by scripts/precompute_runs.py. Here: it has every (optimizer, d_k)
the page offers with the shapes and settings of ui.training.runs; the per-step records
are what TrainingHistory says they are (accuracy and the dead share are multiples of
1/64 in [0, 1], entropy in [0, ln 16], probe rows sum to 1); the d_k = 16 runs,
recomputed by the script in a process with one BLAS thread, agree with the file (on the
same BLAS bit for bit; 1e-9 relative is allowed for a BLAS that rounds differently,
which these learning runs do not amplify past that); and single_run's frames from the
file equal the frames of a fresh run.
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
    assert list(shipped["d_ks"]) == list(runs.D_K_POWERS)
    assert list(shipped["optimizers"]) == ["sgd", "adam"]
    assert list(shipped["lrs"]) == [DEFAULT_LRS["sgd"], DEFAULT_LRS["adam"]]
    assert list(shipped["snapshot_steps"]) == [*runs.SNAPSHOTS, runs.STEPS - 1]
    assert shipped["probe_target"].shape == (runs.N_PROBE,)
    V = len(runs.BASE_VARIANTS)
    for opt in ("sgd", "adam"):
        for d_k in runs.D_K_POWERS:
            p = f"{opt}/{d_k}/"
            for f in runs.PER_STEP:
                assert shipped[p + f].shape == (runs.STEPS, V), p + f
                assert np.isfinite(shipped[p + f]).all(), p + f  # no run diverged
            assert list(shipped[p + "diverged_at"]) == [-1] * V
            w = shipped[p + "probe_weights"]
            assert w.shape == (len(runs.SNAPSHOTS) + 1, V, runs.N_PROBE, 16)
            assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
            for f in ("accuracy", "dead_fraction"):
                x = shipped[p + f] * 64
                assert (x == np.round(x)).all() and (x >= 0).all() and (x <= 64).all()
            assert (shipped[p + "entropy"] >= 0).all()
            assert (shipped[p + "entropy"] <= math.log(16) + 1e-12).all()
            assert (shipped[p + "loss"] >= 0).all()


def test_d_k_16_runs_regenerate(tmp_path, shipped):
    out = tmp_path / "runs.npz"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "precompute_runs.py"), "--out", str(out),
         "--d-ks", "16"],
        check=True, cwd=ROOT, capture_output=True, timeout=300,
    )  # fmt: skip
    again = runs.load(out)
    for opt in ("sgd", "adam"):
        for f in (*runs.PER_STEP, "probe_weights"):
            key = f"{opt}/16/{f}"
            assert_allclose(again[key], shipped[key], rtol=1e-9, atol=1e-12, err_msg=key)


def test_single_run_reads_what_it_would_train(monkeypatch):
    from_file = data.single_run.__wrapped__(16, "adam", 1e-2, 300, runs.BASE_VARIANTS, 0)
    monkeypatch.setattr(runs, "shipped", lambda *a, **k: None)
    trained = data.single_run.__wrapped__(16, "adam", 1e-2, 300, runs.BASE_VARIANTS, 0)
    for metric in data.METRICS:
        pd.testing.assert_frame_equal(from_file["curves"][metric], trained["curves"][metric])
    pd.testing.assert_frame_equal(from_file["probe"], trained["probe"])
    pd.testing.assert_frame_equal(from_file["summary"], trained["summary"], rtol=1e-9)


@pytest.mark.parametrize(
    "settings",
    [
        dict(d_k=24),  # not a power of two
        dict(lr=3e-2),  # not the default rate
        dict(steps=200),
        dict(seed=1),
        dict(variants=(*runs.BASE_VARIANTS, "folded")),
    ],
)
def test_other_settings_are_not_shipped(shipped, settings):
    args = dict(d_k=64, optimizer="adam", lr=1e-2, steps=300, variants=runs.BASE_VARIANTS, seed=0)
    assert runs.shipped(shipped, **args) is not None
    assert runs.shipped(shipped, **(args | settings)) is None
