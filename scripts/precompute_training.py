"""Precompute the training lab's default learning-rate sweep: data/training_sweep.json.

What
    Associative recall with one attention layer (core/training.py) at the issue's
    defaults — n_keys = 16, d_in = 32, d_v = 8, batch = 64, noise = 0.5, 300 steps — for

    * optimizer ∈ {sgd, adam}, each on its own fixed 9-point log grid of learning rates
      (``LRS`` below, half-decade steps; the same grid for every d_k and variant);
    * d_k ∈ {16, 64, 256, 1024};
    * variant ∈ {α = 0, α = ½, α = 1, α = 0 with the scale folded into W_q's init (T5),
      QK-norm with α = ½ and a learnable gain};
    * seed ∈ {0, 1, 2}.

    Stored per run: the final loss (mean of the last 30 steps; null if the run diverged),
    the final retrieval accuracy (same window), the step of divergence (−1 if none), and
    per (optimizer, d_k, variant, seed) the initial loss ℓ₀; plus the grids, the task
    parameters and the Python/NumPy versions. Arrays are nested lists in the order of
    ``dims``. Floats are written with 7 significant digits.

How
    From the repository root::

        python scripts/precompute_training.py            # writes data/training_sweep.json
        python scripts/precompute_training.py --out other.json
        python scripts/precompute_training.py --cells sgd:16:0 adam:16:0   # print cells

    Each (optimizer, d_k, seed) is one ``core.training.train_recall_variants`` call over
    all five variants and nine learning rates (45 configurations sharing one data
    stream). The result is deterministic given the CPU's kernels (fixed seeds, BLAS on
    one thread): the JSON is byte-identical between runs with the same NumPy and BLAS
    kernels. Another CPU rounds the last bit of exp/log and of the BLAS products
    otherwise, and runs at large rates amplify that (a seed's final loss can move by tens
    of per cent, at times far more). The shipped file was written with NumPy's AVX2 kernels and OpenBLAS's
    Haswell kernels; an AVX-512 machine writes it again, byte for byte, with
    ``NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" OPENBLAS_CORETYPE=Haswell``.
    So the tests check what does not depend on the last bit: every cell's ℓ₀, and with
    ``--cells`` the runs that do not separate (``tests/core/test_training_data.py``), and
    the conclusions the page draws (``tests/ui/training/test_sweep_data.py``).

How long
    About 4–5 minutes of CPU on one core (d_k = 1024 is about half of it); the script
    prints the CPU time of each call.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

# One BLAS thread (as app.py): the products are small, and the result must not depend
# on how a multithreaded BLAS splits them. Set before NumPy loads.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from core.training import LR_GRIDS, final_loss, train_recall_variants  # noqa: E402
from ui.training.runs import VARIANTS  # noqa: E402  (the page's variants, in the file's order)

OUT = REPO_ROOT / "data" / "training_sweep.json"
OPTIMIZERS = ("sgd", "adam")
#: 9-point grids, half a decade apart (core.training.LR_GRIDS says how they were chosen).
LRS = {opt: np.asarray(LR_GRIDS[opt]) for opt in OPTIMIZERS}
D_KS = (16, 64, 256, 1024)
SEEDS = (0, 1, 2)
PARAMS = {"n_keys": 16, "d_in": 32, "d_v": 8, "batch": 64, "noise": 0.5, "steps": 300}
LAST = 30  # final loss = mean of the last 30 steps


def run_cell(optimizer: str, d_k: int, seed: int):
    """The histories of every variant (in ``VARIANTS`` order) for one optimizer, d_k, seed."""
    return train_recall_variants(
        d_k,
        list(VARIANTS.values()),
        LRS[optimizer],
        optimizer=optimizer,
        seed=seed,
        snapshot_steps=(),
        n_probe=1,
        **PARAMS,
    )


def cell_summary(histories) -> dict[str, list]:
    """Final loss, final accuracy, divergence step (variant × lr) and ℓ₀ (variant)."""
    return {
        "final_loss": [final_loss(h, last=LAST) for h in histories],
        "final_accuracy": [h.accuracy[-LAST:].mean(axis=0) for h in histories],
        "diverged_at": [h.diverged_at for h in histories],
        "initial_loss": [h.initial_loss for h in histories],
    }


def _round(x):
    """Nested lists with 7 significant digits; NaN (a diverged run) becomes null."""
    if isinstance(x, np.ndarray | list | tuple):
        return [_round(v) for v in x]
    if isinstance(x, np.integer | int):
        return int(x)
    x = float(x)
    return None if np.isnan(x) else float(f"{x:.7g}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--cells",
        nargs="+",
        metavar="OPT:D_K:SEED",
        help="print these cells (e.g. sgd:16:0) as JSON on stdout instead of writing the file",
    )
    args = parser.parse_args(argv)
    if args.cells:
        out = {}
        for cell in args.cells:
            optimizer, d_k, seed = cell.split(":")
            summary = cell_summary(run_cell(optimizer, int(d_k), int(seed)))
            out[cell] = {k: _round(v) for k, v in summary.items()}
        print(json.dumps(out))
        return 0

    fields = ("final_loss", "final_accuracy", "diverged_at", "initial_loss")
    table: dict[str, list] = {k: [] for k in fields}
    total = 0.0
    for optimizer in OPTIMIZERS:
        rows = {k: [] for k in fields}
        for d_k in D_KS:
            per_seed = {k: [] for k in fields}
            for seed in SEEDS:
                t0 = time.process_time()
                summary = cell_summary(run_cell(optimizer, d_k, seed))
                dt = time.process_time() - t0
                total += dt
                print(f"{optimizer:4s} d_k={d_k:5d} seed={seed}  {dt:6.1f} s CPU", flush=True)
                for k in fields:
                    per_seed[k].append(summary[k])
            # (seed, variant, ...) -> (variant, seed, ...)
            for k in fields:
                rows[k].append([list(v) for v in zip(*per_seed[k], strict=True)])
        for k in fields:
            table[k].append(rows[k])

    doc = {
        "description": (
            "Training lab, default LR sweep: associative recall, one attention layer "
            "(core/training.py). final_loss = mean loss of the last 30 of 300 steps "
            "(null: diverged); initial_loss = loss at step 0 before any update."
        ),
        "script": "scripts/precompute_training.py",
        "dims": ["optimizer", "d_k", "variant", "seed", "lr"],
        "optimizers": list(OPTIMIZERS),
        "d_k": list(D_KS),
        "variants": [
            {"name": name, "alpha": v.alpha, "init": v.init, "qk_norm": v.qk_norm}
            for name, v in VARIANTS.items()
        ],
        "seeds": list(SEEDS),
        "lrs": {opt: _round(LRS[opt]) for opt in OPTIMIZERS},
        "params": PARAMS | {"last": LAST},
        "versions": {"python": platform.python_version(), "numpy": np.__version__},
        **{k: _round(table[k]) for k in fields},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")
    size = args.out.stat().st_size
    print(f"wrote {args.out} ({size / 1024:.1f} KB) in {total:.0f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
