"""Exact ``core.sampling.dot_products`` vs the direct ``(q * k).sum(-1)`` at d_k = 4096.

Both sides produce the same number of q·k samples. The direct side is timed two ways:

* ``sample+sum``: draw q, k with ``core.sampling.sample_qk`` and compute
  ``(q * k).sum(-1)`` -- the fair comparison, "produce n samples of q·k";
* ``sum only``: the arithmetic ``(q * k).sum(-1)`` alone, on pre-drawn q, k.

The direct path runs in chunks of rows so its memory stays bounded (a full
20,000 x 4096 float64 pair would take 1.3 GB). Each figure is the median of
``--repeats`` timings. Budget (DESIGN.md): exact >= 100x faster than the direct path.
Exit status 1 if a budget is missed.

Usage (from the repo root)::

    python benchmarks/dot_products.py
    python benchmarks/dot_products.py --n 50000 --dists normal,rademacher,uniform
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from core.sampling import dot_products, sample_qk

D = 4096
BUDGET = 100.0
CHUNK_ROWS = 1024  # 1024 x 4096 float64 = 32 MiB per operand
# "uniform" has no O(1) form: dot_products takes the direct path by design.
EXACT_DISTS = ("normal", "rademacher")


def time_exact(d: int, n: int, dist: str, repeats: int) -> float:
    rng = np.random.default_rng(1)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        dot_products(d, n, rng=rng, dist=dist)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def time_direct(d: int, n: int, dist: str, repeats: int) -> tuple[float, float]:
    """Median seconds for (sample + sum, sum only) over n rows in chunks."""
    rng = np.random.default_rng(2)
    with_sampling, arithmetic = [], []
    for _ in range(repeats):
        total = arith = 0.0
        for start in range(0, n, CHUNK_ROWS):
            rows = min(CHUNK_ROWS, n - start)
            t0 = time.perf_counter()
            q, k = sample_qk(rows, d, rng=rng, dist=dist)
            t1 = time.perf_counter()
            (q * k).sum(-1)
            t2 = time.perf_counter()
            total += t2 - t0
            arith += t2 - t1
        with_sampling.append(total)
        arithmetic.append(arith)
    return statistics.median(with_sampling), statistics.median(arithmetic)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000, help="samples per call (default 20000)")
    parser.add_argument("--d", type=int, default=D, help=f"d_k (default {D})")
    parser.add_argument(
        "--dists", default=",".join(EXACT_DISTS), help="comma-separated distributions"
    )
    parser.add_argument("--repeats", type=int, default=3, help="direct-path timings (default 3)")
    args = parser.parse_args(argv)
    dists = [x.strip() for x in args.dists.split(",") if x.strip()]

    print(f"dot_products exact vs direct (q*k).sum(-1): d_k={args.d}, n={args.n}")
    header = (
        f"{'dist':<11} {'exact ms':>9} {'direct ms':>10} {'sum-only ms':>12} "
        f"{'ratio':>8} {'ratio sum-only':>15}  budget >= {BUDGET:.0f}"
    )
    print(header)
    print("-" * len(header))
    ok = True
    for dist in dists:
        # The exact path is fast; time more calls so the median is stable.
        exact = time_exact(args.d, args.n, dist, repeats=max(args.repeats, 21))
        direct, arith = time_direct(args.d, args.n, dist, args.repeats)
        ratio, ratio_arith = direct / exact, arith / exact
        if dist in EXACT_DISTS:
            verdict = "pass" if ratio >= BUDGET else "FAIL"
            ok &= ratio >= BUDGET
        else:
            verdict = "n/a (direct path by design)"
        print(
            f"{dist:<11} {exact * 1e3:9.2f} {direct * 1e3:10.1f} {arith * 1e3:12.1f} "
            f"{ratio:8.0f} {ratio_arith:15.0f}  {verdict}"
        )
    print("ratio = (sample_qk + (q*k).sum(-1)) / dot_products; the budget applies to it.")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
