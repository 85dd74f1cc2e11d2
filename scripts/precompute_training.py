"""Precompute the training lab's default learning-rate sweep: data/training_sweep.json.

What
    Associative recall with one attention layer (core/training.py) at the page's
    defaults — n_keys = 16, d_in = 32, d_v = 8, batch = 64, noise = 0.5, 300 steps — for

    * m ∈ {1, 2, 4} targets per row (the answer is one key, or the mean of 2 or 4);
    * optimizer ∈ {sgd, adam}, each on its own fixed log grid of learning rates
      (``core.training.LR_GRIDS``: SGD 0.001 … 10⁴, 15 rates; Adam 1e-6 … 1, 13 rates;
      half-decade steps; the same grid for every m, d_k and variant);
    * d_k ∈ {16, 64, 256, 1024};
    * variant ∈ {α = 0, α = ½, α = 1} (the page computes the folded initialisation and
      QK-norm on demand);
    * seed ∈ {0, 1, 2, 3, 4}.

    Stored per run: the final loss (mean of the last 30 steps; null if the run diverged)
    and the final retrieval accuracy (same window; top-m equal to the targets); per
    (m, optimizer, d_k, variant, seed) the initial loss ℓ₀ (1024 held-out rows,
    ``core.training.N_EVAL``); the diverged runs as a list of [index…, step]; per m the
    loss of uniform attention ½(1/m − 1/16); plus the grids, the task parameters and the
    Python/NumPy versions. Arrays are nested lists in the order of ``dims``. Losses are
    written with 4 significant digits, accuracies with 2 decimals (the seeds spread far
    wider than that), which keeps the file near 150 KB.

How
    From the repository root::

        python scripts/precompute_training.py            # writes data/training_sweep.json
        python scripts/precompute_training.py --out other.json
        python scripts/precompute_training.py --cells 1:sgd:16:0 2:adam:16:0   # print cells

    Each (m, optimizer, d_k, seed) is one ``core.training.train_recall_variants`` call
    over the three variants and the optimizer's grid (45 or 39 configurations sharing one
    data stream). The result is deterministic given the CPU's kernels (fixed seeds, BLAS on
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
    About 13 minutes of CPU on one core: measured 2026-12-02 on the shared 2-core machine
    under load, 748 s of CPU for the whole file (50 s per task and seed on average; the
    two d_k = 1024 cells are about two thirds of it). The script prints the CPU time of
    each cell; with ``--resume DIR`` each finished cell is kept in DIR and a stopped run
    goes on where it stopped, with the same result. Cells run seed by seed, so the cells
    of seeds 0 … k are complete early and ``--seeds 0 … k`` writes a smaller file from
    them.
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

from core.training import LR_GRIDS, final_loss, train_recall_variants, uniform_loss  # noqa: E402
from ui.training.runs import BASE_VARIANTS  # noqa: E402
from ui.training.runs import VARIANTS as ALL_VARIANTS  # noqa: E402

#: The swept variants, in the file's order: α = 0, ½, 1. The folded initialisation and
#: QK-norm, toggles on the page, are computed there on demand.
VARIANTS = {name: ALL_VARIANTS[name] for name in BASE_VARIANTS}

OUT = REPO_ROOT / "data" / "training_sweep.json"
OPTIMIZERS = ("sgd", "adam")
#: Half-decade grids (core.training.LR_GRIDS says how they were chosen).
LRS = {opt: np.asarray(LR_GRIDS[opt]) for opt in OPTIMIZERS}
MS = (1, 2, 4)
D_KS = (16, 64, 256, 1024)
SEEDS = (0, 1, 2, 3, 4)
PARAMS = {"n_keys": 16, "d_in": 32, "d_v": 8, "batch": 64, "noise": 0.5, "steps": 300}
LAST = 30  # final loss = mean of the last 30 steps


def run_cell(m: int, optimizer: str, d_k: int, seed: int):
    """The histories of every variant (in ``VARIANTS`` order) for one m, optimizer, d_k, seed."""
    return train_recall_variants(
        d_k,
        list(VARIANTS.values()),
        LRS[optimizer],
        optimizer=optimizer,
        seed=seed,
        m=m,
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


def _round(x, fmt: str = ".4g"):
    """Nested lists with ``fmt`` (4 significant digits); NaN (a diverged run) becomes null."""
    if isinstance(x, np.ndarray | list | tuple):
        return [_round(v, fmt) for v in x]
    if x is None:  # a diverged run read back from a --resume cell
        return None
    if isinstance(x, np.integer | int):
        return int(x)
    x = float(x)
    return None if np.isnan(x) else float(format(x, fmt))


#: How each stored field is written (``_round``'s format).
FORMATS = {"final_loss": ".4g", "final_accuracy": ".2f", "initial_loss": ".4g"}


def diverged_list(diverged_at) -> list[list[int]]:
    """[indices…, step] of every run that diverged, from ``diverged_at`` nested in the
    order of ``dims`` (−1: did not diverge)."""
    arr = np.asarray(diverged_at)
    return [[*map(int, idx), int(arr[idx])] for idx in zip(*np.nonzero(arr >= 0), strict=True)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--cells",
        nargs="+",
        metavar="M:OPT:D_K:SEED",
        help="print these cells (e.g. 1:sgd:16:0) as JSON on stdout instead of writing the file",
    )
    parser.add_argument(
        "--resume",
        type=Path,
        metavar="DIR",
        help="keep each finished cell in DIR (one small JSON each) and reuse those found there",
    )
    parser.add_argument("--d-ks", type=int, nargs="+", default=list(D_KS), help=argparse.SUPPRESS)
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=list(SEEDS),
        help="write these seeds only (default: 0 1 2 3 4)",
    )
    args = parser.parse_args(argv)
    d_ks, seeds = tuple(args.d_ks), tuple(args.seeds)  # a smaller file, for trying the page
    if args.cells:
        out = {}
        for cell in args.cells:
            m, optimizer, d_k, seed = cell.split(":")
            summary = cell_summary(run_cell(int(m), optimizer, int(d_k), int(seed)))
            out[cell] = {k: _round(v, FORMATS.get(k, ".4g")) for k, v in summary.items()}
        print(json.dumps(out))
        return 0

    fields = ("final_loss", "final_accuracy", "diverged_at", "initial_loss")
    # Seed by seed, so that a --resume directory holds whole seeds first: the cells of
    # seeds 0 … k give a complete, smaller file (--seeds) while the rest still runs.
    summaries, total = {}, 0.0
    for seed in seeds:
        for m in MS:
            for optimizer in OPTIMIZERS:
                for d_k in d_ks:
                    t0 = time.process_time()
                    saved = (
                        args.resume / f"{m}_{optimizer}_{d_k}_{seed}.json" if args.resume else None
                    )
                    if saved is not None and saved.exists():
                        summary = json.loads(saved.read_text(encoding="utf-8"))
                        dt = float(summary.pop("cpu_seconds"))
                    else:
                        summary = cell_summary(run_cell(m, optimizer, d_k, seed))
                        dt = time.process_time() - t0
                        if saved is not None:  # full precision, so a resumed file is the same
                            saved.parent.mkdir(parents=True, exist_ok=True)
                            plain = {k: _round(v, ".17g") for k, v in summary.items()}
                            saved.write_text(json.dumps(plain | {"cpu_seconds": dt}))
                    total += dt
                    print(
                        f"seed={seed} m={m} {optimizer:4s} d_k={d_k:5d}  {dt:6.1f} s CPU "
                        f"(total {total:6.0f} s)",
                        flush=True,
                    )
                    summaries[m, optimizer, d_k, seed] = summary
    # table[field][m][optimizer][d_k][variant][seed](lr)
    table = {
        k: [
            [
                [
                    [list(v) for v in zip(*(summaries[m, o, d, s][k] for s in seeds), strict=True)]
                    for d in d_ks
                ]
                for o in OPTIMIZERS
            ]
            for m in MS
        ]
        for k in fields
    }
    # diverged_at is ragged in the lr axis (two grids): flatten per optimizer
    diverged = []
    for mi in range(len(MS)):
        for oi in range(len(OPTIMIZERS)):
            for idx in diverged_list(table["diverged_at"][mi][oi]):
                diverged.append([mi, oi, *idx])

    doc = {
        "description": (
            "Training lab, default LR sweep: associative recall with m targets, one "
            "attention layer (core/training.py). final_loss = mean loss of the last 30 of "
            "300 steps (null: diverged); initial_loss = loss of the initial weights on "
            "1024 held-out rows; diverged = [m, optimizer, d_k, variant, seed, lr, step] "
            "indices of the runs that diverged; uniform_loss = ½(1/m − 1/n_keys)."
        ),
        "script": "scripts/precompute_training.py",
        "dims": ["m", "optimizer", "d_k", "variant", "seed", "lr"],
        "m": list(MS),
        "uniform_loss": [uniform_loss(m, PARAMS["n_keys"]) for m in MS],
        "optimizers": list(OPTIMIZERS),
        "d_k": list(d_ks),
        "variants": [
            {"name": name, "alpha": v.alpha, "init": v.init, "qk_norm": v.qk_norm}
            for name, v in VARIANTS.items()
        ],
        "seeds": list(seeds),
        "lrs": {opt: _round(LRS[opt], ".7g") for opt in OPTIMIZERS},
        "params": PARAMS | {"last": LAST},
        "versions": {"python": platform.python_version(), "numpy": np.__version__},
        "cpu_seconds": round(total),
        **{k: _round(table[k], FORMATS[k]) for k in ("final_loss", "final_accuracy")},
        "initial_loss": _round(table["initial_loss"], FORMATS["initial_loss"]),
        "diverged": diverged,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")
    size = args.out.stat().st_size
    print(f"wrote {args.out} ({size / 1024:.1f} KB) in {total:.0f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
