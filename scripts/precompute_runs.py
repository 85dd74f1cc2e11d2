"""Precompute the training lab's single runs at its default settings: data/training_runs.npz.

What
    The page's one-run section (``ui.training.data.single_run``) at the settings a
    workshop starts from — α = 0, ½ and 1 side by side (no folded init, no QK-norm),
    300 steps, seed 0, each optimizer at its default learning rate
    (``core.training.DEFAULT_LRS``) — for every task m ∈ {1, 2, 4} and every d_k the
    page offers (16, 32, …, 1024).
    A new run trains a model on the server; shipped, the ÷2 / ×2 buttons answer at once
    even on a cold server shared by a room of learners.

    Stored per (m, optimizer, d_k), under ``m<m>/<optimizer>/<d_k>/<field>``, the
    fields of ``core.training.TrainingHistory`` the page reads, stacked over the three
    variants in ``BASE_VARIANTS`` order: the per-step records (``loss``, ``accuracy``,
    ``entropy``, ``dead_fraction``, ``grad_norm``, ``logit_std``; float32 — the page
    draws float32 and averages 30 steps, and it keeps the file near 0.8 MB for three
    tasks — shape (300, 3)), ``initial_loss`` (3,) float64 (ℓ₀ on 1024 held-out rows),
    ``diverged_at`` (3,), ``probe_weights`` (snapshots, 3, probe rows, n_keys; float32);
    per m ``m<m>/probe_target`` (probe rows, m); once ``snapshot_steps``. Plus
    ``format_version``, ``ms``, ``d_ks``, ``optimizers``, ``lrs`` and the NumPy version.
    Loadable with ``allow_pickle=False``.

How
    From the repository root::

        python scripts/precompute_runs.py                 # writes data/training_runs.npz
        python scripts/precompute_runs.py --out other.npz --d-ks 16 --optimizers adam

    Deterministic given the CPU's kernels (fixed seed, BLAS on one thread): the same
    NumPy and BLAS kernels write the same arrays. Another CPU rounds the last bit
    otherwise, and the unscaled runs amplify it (they part from the file by 1e-9 from
    step 5 at d_k = 1024 to step ~190 at d_k = 16). The shipped file was written with
    NumPy's AVX2 kernels and OpenBLAS's Haswell kernels; an AVX-512 machine writes it
    again, bit for bit, with
    ``NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" OPENBLAS_CORETYPE=Haswell``.
    ``tests/ui/training/test_runs_data.py`` checks the file's invariants, its verdicts,
    and the early steps of the d_k = 16 runs recomputed.

How long
    About 40 s of CPU on one core (measured 2026-12-02: 36 s for the three tasks, on a
    shared machine; d_k = 1024 is a third of it).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from core.training import DEFAULT_LRS, train_recall_variants  # noqa: E402
from ui.training.runs import (  # noqa: E402
    BASE_VARIANTS,
    D_K_POWERS,
    FORMAT_VERSION,
    M_OPTIONS,
    N_PROBE,
    PER_STEP,
    RUNS_FILE,
    SEED,
    SNAPSHOTS,
    STEPS,
    VARIANTS,
)

OPTIMIZERS = ("sgd", "adam")


def run(optimizer: str, d_k: int, m: int = 1):
    """The histories of α = 0, ½, 1 at one optimizer's default rate, as the page trains them."""
    return train_recall_variants(
        d_k,
        [VARIANTS[v] for v in BASE_VARIANTS],
        [DEFAULT_LRS[optimizer]],
        optimizer=optimizer,
        steps=STEPS,
        seed=SEED,
        snapshot_steps=SNAPSHOTS,
        n_probe=N_PROBE,
        m=m,
    )


def arrays(histories) -> dict[str, np.ndarray]:
    """The stored fields of one run (three histories, one learning rate each)."""
    out = {
        f: np.stack([getattr(h, f)[:, 0] for h in histories], axis=1).astype(np.float32)
        for f in PER_STEP
    }
    out["initial_loss"] = np.array([h.initial_loss for h in histories])
    out["diverged_at"] = np.array([int(h.diverged_at[0]) for h in histories], dtype=np.int32)
    out["probe_weights"] = np.stack([h.probe_weights[:, 0] for h in histories], axis=1).astype(
        np.float32
    )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=RUNS_FILE)
    ap.add_argument("--d-ks", type=int, nargs="+", default=list(D_K_POWERS))
    ap.add_argument("--optimizers", nargs="+", default=list(OPTIMIZERS), choices=OPTIMIZERS)
    ap.add_argument("--ms", type=int, nargs="+", default=list(M_OPTIONS))
    args = ap.parse_args(argv)
    payload: dict[str, np.ndarray] = {
        "format_version": np.array(FORMAT_VERSION),
        "ms": np.array(args.ms, dtype=np.int32),
        "d_ks": np.array(args.d_ks, dtype=np.int32),
        "optimizers": np.array(args.optimizers),
        "lrs": np.array([DEFAULT_LRS[o] for o in args.optimizers]),
        "numpy_version": np.array(np.__version__),
    }
    total = 0.0
    for m in args.ms:
        for optimizer in args.optimizers:
            for d_k in args.d_ks:
                t0 = time.process_time()
                histories = run(optimizer, d_k, m)
                for field, value in arrays(histories).items():
                    payload[f"m{m}/{optimizer}/{d_k}/{field}"] = value
                payload["snapshot_steps"] = np.asarray(histories[0].snapshot_steps, np.int32)
                payload[f"m{m}/probe_target"] = np.asarray(histories[0].probe_target, np.int32)
                dt = time.process_time() - t0
                total += dt
                print(f"m={m} {optimizer:>4} d_k={d_k:<5} {dt:5.2f} s CPU", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "wb") as f:
        np.savez_compressed(f, **payload)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KB) in {total:.0f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
