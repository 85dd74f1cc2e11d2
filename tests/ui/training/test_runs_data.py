"""The shipped single runs (data/training_runs.npz): invariants, the early steps of a
regenerated slice, the verdicts, and the page reading the file as it would train.

The file is written by scripts/precompute_runs.py. Here: it has every (optimizer, d_k)
the page offers with the shapes and settings of ui.training.runs; the per-step records
are what TrainingHistory says they are (accuracy and the dead share are multiples of
1/64 in [0, 1], entropy in [0, ln 16], probe rows sum to 1).

Where the trajectories separate. The runs are deterministic given the seed, but the
last bit of exp/log/sums and of the BLAS products depends on the CPU's kernels, and the
unscaled model (α = 0) amplifies it. Measured (2026-12-02) by regenerating the whole
file under the machine's default (AVX-512 kernels, OpenBLAS SkylakeX), AVX2 kernels
(``NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR"``) and baseline kernels with
``OPENBLAS_CORETYPE=Sandybridge``, and comparing each with the file (which none of the
three reproduces bit for bit; AVX2 kernels with ``OPENBLAS_CORETYPE=Haswell`` do): the
first step at which α = 0's loss, entropy, gradient norm or logit std differs by more
than 1e-9 relative from the file is

    d_k            16         32           64         128       256       512     1024
    SGD   188/189/233  105/73/48     16/21/23    11/11/11     8/8/8     6/6/6    5/5/5
    Adam        never      never  242/242/248    69/59/46  26/26/24  17/17/17    8/8/9

(default/AVX2/baseline; the three settings among themselves separate as early). At
d_k = 16 SGD passes 1e-12 at step 64–93, and the difference grows ~20× every 50 steps
from there (1.4e-12 by step 100, 2.6e-11 by 150, 2.2e-7 by 300). α = ½ and α = 1 never
separate: at every d_k their records stay within 1e-9 of the file for all 300 steps
(within 7e-14 at d_k = 16). Accuracy and the dead share, counts, change only after the
records have separated (at step 13 at the earliest).

So the regenerated d_k = 16 runs are compared with the file at 1e-9 relative (atol 1e-12:
shares and probe weights are probabilities) over the first ``EARLY`` = 100 steps for
every variant — about half the earliest separation, where the measured difference,
1.4e-12, is 700× inside the tolerance — and over all 300 steps for α = ½ and α = 1. The
verdict of each run (final / ℓ₀ against 10 % and 90 %) never changed, over the whole
file and the three settings: the closest to a threshold are SGD, d_k = 1024, α = 1 at
84.1 % against 90 % (a run that does not separate) and, of those that do, Adam,
d_k = 1024, α = 0 at 3.2–7.8 % against 10 %; at d_k = 16 the ratios are 5.5, 6.0, 18 %
(SGD) and 4.8, 6.1, 6.5 % (Adam).
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
    for opt in ("sgd", "adam"):
        for i, name in enumerate(runs.BASE_VARIANTS):
            steps = runs.STEPS if name in STEADY else EARLY
            for f in (*runs.PER_STEP, "probe_weights"):
                key = f"{opt}/16/{f}"
                new, old = again[key][:, i], shipped[key][:, i]
                if f == "probe_weights":  # (snapshot, probe row, key): the early snapshots
                    new, old = new[snapshots < steps], old[snapshots < steps]
                else:
                    new, old = new[:steps], old[:steps]
                assert_allclose(new, old, rtol=1e-9, atol=1e-12, err_msg=f"{key} {name}")
            assert again[f"{opt}/16/diverged_at"][i] == shipped[f"{opt}/16/diverged_at"][i] == -1
    for opt in ("sgd", "adam"):
        assert _verdicts(again, opt, 16) == _verdicts(shipped, opt, 16)


def _verdicts(arrays: dict, opt: str, d_k: int) -> list[str]:
    """The one-run table's verdict of each variant (final / ℓ₀ against 10 % and 90 %)."""
    loss = arrays[f"{opt}/{d_k}/loss"]  # (steps, variants)
    finals = loss[-data.LAST :].mean(axis=0)
    return [data.verdict(f, i) for f, i in zip(finals, loss[0], strict=True)]


def test_verdicts_of_the_shipped_runs(shipped):
    """What the one-run table concludes at every shipped setting (margins above): α = 0
    and α = ½ learn; α = 1 learns with Adam, and with SGD only partly."""
    for d_k in runs.D_K_POWERS:
        assert _verdicts(shipped, "adam", d_k) == ["learns"] * 3, d_k
        assert _verdicts(shipped, "sgd", d_k) == ["learns", "learns", "partly"], d_k


def test_single_run_reads_what_it_would_train(monkeypatch):
    """The frames from the file equal the frames of a fresh run. Adam at d_k = 16 does
    not separate (within 7e-14 relative of the file over all 300 steps, on the three CPU
    settings above), so the float64 summary agrees to 1e-9. Curves and probe weights are
    float32: a last-bit difference before the cast can move a value by one float32 ULP
    (2⁻²³ relative; probe weights, probabilities, also by 1e-12 absolute, for the
    subnormals of a saturated row)."""
    from_file = data.single_run.__wrapped__(16, "adam", 1e-2, 300, runs.BASE_VARIANTS, 0)
    monkeypatch.setattr(runs, "shipped", lambda *a, **k: None)
    trained = data.single_run.__wrapped__(16, "adam", 1e-2, 300, runs.BASE_VARIANTS, 0)
    f32 = {"check_exact": False, "rtol": 2.0**-23, "atol": 0.0}
    for metric in data.METRICS:
        pd.testing.assert_frame_equal(from_file["curves"][metric], trained["curves"][metric], **f32)
    pd.testing.assert_frame_equal(from_file["probe"], trained["probe"], **(f32 | {"atol": 1e-12}))
    pd.testing.assert_frame_equal(
        from_file["summary"], trained["summary"], check_exact=False, rtol=1e-9, atol=1e-12
    )


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
