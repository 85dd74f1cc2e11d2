"""CPU time of the training lab's computations (core.training), one BLAS thread.

Rows:

* ``single run``: the page's default run — α = 0, ½, 1 side by side on one data stream
  (``train_recall_variants``) at the default learning rate, d_k = 64, 300 steps.
  Budget (issue 13): ≤ 1 s of CPU. Also with the two optional variants (folded init,
  QK-norm) switched on, for information.
* ``sweep d_k=256``: one 9-rate sweep at d_k = 256 for 3 scalings × 3 seeds, as the page
  runs it (one call per seed, 27 configurations sharing a data stream).
* ``9 single-rate runs``: the same 9 rates for one scaling and seed run one at a time,
  against one vectorised call, to show what the vectorisation saves.

Each figure is the median of ``--repeats`` measurements of ``time.process_time`` (CPU of
every thread of the process). Other load on the machine moves the figures. Exit status 1
if the single-run budget is missed.

Usage (from the repo root)::

    python benchmarks/training.py
    python benchmarks/training.py --repeats 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from core.training import DEFAULT_LRS, LR_GRIDS, Variant, train_recall, train_recall_variants

BUDGET_SINGLE = 1.0  # s CPU
SCALINGS = [Variant(0.0), Variant(0.5), Variant(1.0)]
EXTRAS = [Variant(0.0, "folded"), Variant(0.5, "fan_in", True)]


def cpu_seconds(repeats: int, fn, *args, **kwargs) -> float:
    """Median CPU seconds of ``fn(*args, **kwargs)`` over ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn(*args, **kwargs)
        times.append(time.process_time() - t0)
    return statistics.median(times)


def sweep(d_k: int, optimizer: str, seeds=(0, 1, 2)) -> None:
    """The page's sweep: one call per seed, 3 scalings × 9 rates sharing a data stream."""
    for seed in seeds:
        train_recall_variants(d_k, SCALINGS, LR_GRIDS[optimizer], optimizer=optimizer, seed=seed)


def one_at_a_time(d_k: int, optimizer: str) -> None:
    for lr in LR_GRIDS[optimizer]:
        train_recall(d_k, 0.5, [lr], optimizer=optimizer)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    r = args.repeats
    rows: list[tuple[str, str, float, str]] = []
    ok = True
    for opt in ("sgd", "adam"):
        lr = [DEFAULT_LRS[opt]]
        t = cpu_seconds(r, train_recall_variants, 64, SCALINGS, lr, optimizer=opt)
        ok &= t <= BUDGET_SINGLE
        rows.append(("single run, 3 scalings, d_k=64", opt, t, f"budget {BUDGET_SINGLE:g} s"))
        t = cpu_seconds(r, train_recall_variants, 64, SCALINGS + EXTRAS, lr, optimizer=opt)
        rows.append(("single run, 5 variants, d_k=64", opt, t, ""))
    for opt in ("sgd", "adam"):
        rows.append(
            (
                "sweep d_k=256, 3 scalings x 3 seeds x 9 LRs",
                opt,
                cpu_seconds(1, sweep, 256, opt),
                "",
            )
        )
        one = cpu_seconds(1, train_recall, 256, 0.5, LR_GRIDS[opt], optimizer=opt)
        sep = cpu_seconds(1, one_at_a_time, 256, opt)
        rows.append(("  alpha=1/2, seed 0: 9 LRs in one call", opt, one, ""))
        rows.append(
            ("  alpha=1/2, seed 0: 9 single-LR calls", opt, sep, f"{sep / one:.1f}x slower")
        )

    print(f"core.training CPU time (median of {r} for single runs), numpy {np.__version__}")
    print(f"{'case':48s} {'opt':5s} {'CPU s':>7s}  note")
    for name, opt, t, note in rows:
        print(f"{name:48s} {opt:5s} {t:7.2f}  {note}")
    if not ok:
        print(f"FAIL: a default single run exceeds {BUDGET_SINGLE:g} s of CPU")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
