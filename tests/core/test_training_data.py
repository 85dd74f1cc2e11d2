"""The shipped LR sweep (data/training_sweep.json): invariants, and a regenerated slice.

The file is written by scripts/precompute_training.py. Here: its shapes, grids and
parameters match the script and core.training; a run has a final loss exactly when it
did not diverge; ℓ₀ does not depend on the optimiser, and the folded initialisation
starts from α = ½'s loss; and the d_k = 16, seed 0 cells, recomputed with the script's own
function for both optimisers, agree with the file to its 7 significant digits.

The recomputation runs the script itself (the same calls, in a process with one BLAS
thread), so on the same BLAS it is bit-for-bit the same run. A BLAS with other kernels
rounds differently in the last place, and in runs that failed (final loss above ℓ₀: the
attention sits on a wrong key) the dynamics amplify that to a few per cent; those runs
are checked to fail again, the others to the file's 7 significant digits.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose

from core.training import DEFAULT_LRS, LR_GRIDS
from scripts import precompute_training as script

ROOT = Path(__file__).resolve().parents[2]
PATH = ROOT / "data" / "training_sweep.json"
SCRIPT = ROOT / "scripts" / "precompute_training.py"
DIGITS_RTOL = 1e-6  # 7 significant digits


@pytest.fixture(scope="module")
def sweep() -> dict:
    return json.loads(PATH.read_text(encoding="utf-8"))


def _array(nested) -> np.ndarray:
    """Nested lists of numbers with null (a diverged run) → float array with NaN."""
    obj = np.array(nested, dtype=object)
    return np.where(obj == None, np.nan, obj).astype(float)  # noqa: E711


def test_file_is_small():
    assert PATH.stat().st_size <= 100 * 1024


def test_layout_grids_and_parameters(sweep):
    assert sweep["dims"] == ["optimizer", "d_k", "variant", "seed", "lr"]
    assert sweep["optimizers"] == list(script.OPTIMIZERS) == ["sgd", "adam"]
    assert sweep["d_k"] == [16, 64, 256, 1024]
    assert sweep["seeds"] == [0, 1, 2]
    assert [v["name"] for v in sweep["variants"]] == list(script.VARIANTS)
    for v in sweep["variants"]:
        ref = script.VARIANTS[v["name"]]
        assert (v["alpha"], v["init"], v["qk_norm"]) == (ref.alpha, ref.init, ref.qk_norm)
    assert sweep["params"] == {
        "n_keys": 16,
        "d_in": 32,
        "d_v": 8,
        "batch": 64,
        "noise": 0.5,
        "steps": 300,
        "last": 30,
    }
    for opt in ("sgd", "adam"):
        grid = np.array(sweep["lrs"][opt])
        assert grid.shape == (9,)
        assert_allclose(grid, LR_GRIDS[opt], rtol=DIGITS_RTOL)
        assert_allclose(np.diff(np.log10(grid)), 0.5, rtol=1e-5)  # half-decade steps
        assert DEFAULT_LRS[opt] in LR_GRIDS[opt]
    assert {"python", "numpy"} <= set(sweep["versions"])


def test_shapes_and_values(sweep):
    shape = (2, 4, 5, 3, 9)
    loss = _array(sweep["final_loss"])
    acc = _array(sweep["final_accuracy"])
    div = np.array(sweep["diverged_at"], dtype=int)
    ell0 = _array(sweep["initial_loss"])
    assert loss.shape == acc.shape == div.shape == shape
    assert ell0.shape == shape[:-1]
    diverged = div >= 0
    assert np.array_equal(np.isnan(loss), diverged)
    assert np.array_equal(np.isnan(acc), diverged)
    assert np.all(div[diverged] < 300)
    ok = ~diverged
    assert np.all(loss[ok] >= 0) and np.all(loss[ok] < 5)
    assert np.all((acc[ok] >= 0) & (acc[ok] <= 1))
    assert np.isfinite(ell0).all() and np.all(ell0 > 0)
    # The same seed gives the same initial weights and first batch for either optimiser.
    assert np.array_equal(ell0[0], ell0[1])
    # Folding 1/√d_k into W_q's initialisation leaves the step-0 logits unchanged.
    names = [v["name"] for v in sweep["variants"]]
    assert_allclose(
        ell0[:, :, names.index("folded")], ell0[:, :, names.index("alpha_half")], rtol=2e-6
    )


def test_regenerated_slice_matches_file(sweep):
    # The script itself, in a fresh process: it caps BLAS at one thread before NumPy
    # loads, as when the file was written (a multithreaded BLAS on a busy machine makes
    # these small products many times slower, without changing a digit).
    cells = ["sgd:16:0", "adam:16:0"]
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--cells", *cells],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    fresh = json.loads(result.stdout)
    d, s = sweep["d_k"].index(16), sweep["seeds"].index(0)
    for cell in cells:
        o = sweep["optimizers"].index(cell.split(":")[0])
        ell0 = _array([row[s] for row in sweep["initial_loss"][o][d]])  # (variant,)
        assert_allclose(_array(fresh[cell]["initial_loss"]), ell0, rtol=DIGITS_RTOL)
        stored = _array([row[s] for row in sweep["final_loss"][o][d]])  # (variant, lr)
        new = _array(fresh[cell]["final_loss"])
        assert stored.shape == new.shape == (5, 9)
        assert np.array_equal(np.isnan(stored), np.isnan(new))
        # Runs that learned (final loss below ℓ₀) agree to the file's 7 digits. Runs that
        # failed sit near a wrong key, where the dynamics amplify last-place rounding (a
        # BLAS with other kernels moves them by a few per cent): they must fail again.
        learned = stored < ell0[:, None]
        assert_allclose(new[learned], stored[learned], rtol=DIGITS_RTOL, err_msg=cell)
        failed = ~learned & ~np.isnan(stored)
        assert np.all(new[failed] >= ell0[:, None].repeat(9, 1)[failed]), cell
        assert_allclose(new[failed], stored[failed], atol=0.15, err_msg=cell)
        acc_stored = _array([row[s] for row in sweep["final_accuracy"][o][d]])
        acc_new = _array(fresh[cell]["final_accuracy"])
        assert_allclose(acc_new[learned], acc_stored[learned], rtol=DIGITS_RTOL, err_msg=cell)
        stored_div = [row[s] for row in sweep["diverged_at"][o][d]]
        assert fresh[cell]["diverged_at"] == stored_div
