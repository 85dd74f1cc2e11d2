"""Server-side rerun cost of every page, measured with AppTest in one process.

For each row of ``BENCHES`` (a page and one of its controls) the script loads the page
through ``app.py`` and times ``AppTest.run()``; each timed iteration does, in turn,

* a rerun after the control moves to a value never used before in this process
  (so every ``st.cache_data`` lookup that depends on it misses),
* a rerun after the control moves to a value already seen (cache hits), and
* a rerun of ``benchmarks/minimal_page.py`` (one 50-row chart, no computation).

Interleaving the three keeps them comparable on a machine whose load drifts. It
prints medians and these ratios against the budgets of DESIGN.md:

(a) median(new value) / median(seen value)                      budget <= 2
(b) median(seen value) / median(minimal page) / charts on page  budget <= 1.5
KB  chart data the page sends (Vega-Lite spec + Arrow datasets),
    the largest over every value visited                        budget <= 200 KB

and at the end the peak RSS of the process after visiting every page (budget
<= 400 MB). Exit status 1 if a budget is missed.

Usage (from the repo root)::

    python benchmarks/rerun.py                       # every page, 20 reruns each
    python benchmarks/rerun.py --pages variance --reruns 40
"""

from __future__ import annotations

import os

# as app.py does, and before anything here loads NumPy
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import gc
import itertools
import logging
import resource
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
APP = REPO_ROOT / "app.py"
MINIMAL = Path(__file__).resolve().parent / "minimal_page.py"

BUDGET_A = 2.0
BUDGET_B = 1.5
BUDGET_KB = 200.0
BUDGET_RSS_MB = 400.0
MIN_RERUNS = 20
WARMUP = 3


def fresh_ints(start: int, *, stop: int, avoid: tuple[int, ...] = ()) -> Callable[[], Iterator]:
    """Integers start, start+1, ... < stop, skipping ``avoid`` (the seen values)."""
    return lambda: (v for v in range(start, stop) if v not in avoid)


def fresh_floats(lo: float, hi: float, *, avoid: tuple[float, ...] = ()) -> Callable[[], Iterator]:
    """Distinct floats in [lo, hi] (a golden-ratio sequence, 4 decimals), skipping ``avoid``."""
    return lambda: (
        v
        for i in range(1, 100_000)
        if (v := round(lo + (hi - lo) * ((i * 0.6180339887) % 1.0), 4)) not in avoid
    )


@dataclass(frozen=True)
class Bench:
    """One page and one of its controls.

    ``kind`` is the AppTest accessor for the widget (``number_input``, ``slider``,
    ``select_slider``, ``radio``, ...). ``new_values()`` yields values never used
    before in this process; ``seen`` are values the timed "seen" reruns alternate
    between (they are computed once during warm-up). ``probe`` values (e.g. the
    control's extremes) are visited after the timing only, to find the largest
    amount of chart data the page sends.
    """

    page: str  # url path (as in ui/common/pages.py), used by --pages
    script: str  # page script relative to the repo root, if ui/common/pages.py does not list it
    n_charts: int  # charts the page is expected to show (cross-checked)
    key: str
    kind: str
    new_values: Callable[[], Iterator[Any]]
    seen: tuple[Any, ...]
    probe: tuple[Any, ...] = ()


# Add a row per page (and per further control worth measuring). The script path comes
# from the app's own page list (ui/common/pages.py) when it has the url path. A row whose
# script does not exist yet, or whose control key is not on the page, is skipped.
BENCHES: tuple[Bench, ...] = (
    Bench(
        "variance", "app_pages/variance.py", 5, "d_k", "number_input",
        fresh_ints(65, stop=4097, avoid=(64, 128)), (64, 128), (1, 4096),
    ),
    Bench(
        "saturation", "app_pages/saturation.py", 9, "d_k", "number_input",
        fresh_ints(65, stop=4097, avoid=(64, 128)), (64, 128), (1, 4096),
    ),
    Bench(
        "saturation", "app_pages/saturation.py", 9, "alpha", "slider",
        fresh_floats(0.0, 1.5, avoid=(0.5, 1.0)), (0.5, 1.0), (0.0, 1.5),
    ),
    Bench(
        "saturation", "app_pages/saturation.py", 9, "n_keys", "number_input",
        fresh_ints(11, stop=513, avoid=(10, 20)), (10, 20), (2, 512),
    ),
    Bench(
        "gradients", "app_pages/gradients.py", 8, "d_k", "number_input",
        fresh_ints(65, stop=4097, avoid=(64, 128)), (64, 128), (1, 4096),
    ),
    Bench(
        "gradients", "app_pages/gradients.py", 8, "alpha", "slider",
        fresh_floats(0.0, 1.5, avoid=(0.5, 1.0)), (0.5, 1.0), (0.0, 1.5),
    ),
    Bench(
        "gradients", "app_pages/gradients.py", 8, "n_keys", "number_input",
        fresh_ints(11, stop=513, avoid=(10, 20)), (10, 20), (2, 512),
    ),
    Bench(
        "sqrt-vs-d", "app_pages/sqrt-vs-d.py", 8, "d_k", "number_input",
        fresh_ints(65, stop=4097, avoid=(64, 128)), (64, 128), (1, 4096),
    ),
    Bench(
        "sqrt-vs-d", "app_pages/sqrt-vs-d.py", 8, "alpha", "slider",
        fresh_floats(0.0, 1.5, avoid=(0.5, 0.75)), (0.5, 0.75), (0.0, 1.5),
    ),
    Bench(
        "sqrt-vs-d", "app_pages/sqrt-vs-d.py", 8, "rho", "slider",
        fresh_floats(0.01, 0.95, avoid=(0.25, 0.5)), (0.25, 0.5), (0.95,),
    ),
    Bench(
        "sqrt-vs-d", "app_pages/sqrt-vs-d.py", 8, "n_keys", "number_input",
        fresh_ints(11, stop=513, avoid=(10, 20)), (10, 20), (2, 512),
    ),
    # a new d_k or learning rate trains a model (~0.6 s of CPU at d_k = 64): (a) cannot
    # meet its budget there; the seen values (shipped sweep at d_k 64 and 256) must
    Bench(
        "training", "app_pages/training.py", 10, "d_k", "number_input",
        fresh_ints(65, stop=1025, avoid=(64, 256)), (64, 256), (16, 1024),
    ),
    Bench(
        "training", "app_pages/training.py", 10, "lr", "select_slider",
        lambda: iter(("0.0001", "0.000178", "0.000316", "0.000562", "0.001", "0.00178",
                      "0.00562", "0.0178", "0.0562", "0.1", "0.178", "0.316", "0.562", "1",
                      "1.78", "3.16", "5.62", "10", "17.8", "31.6", "56.2", "100")),
        ("0.01", "0.0316"), ("1000",),
    ),
    Bench(
        "which-d", "app_pages/which-d.py", 5, "d_model", "number_input",
        fresh_ints(513, stop=4097, avoid=(512, 1024)), (512, 1024), (64, 4096),
    ),
    # real-models: a finite set of values (17 sentences, 12 heads), so fewer than 20 new
    # ones; the page's computation per new value is one head's softmax (≤ 20 × 20)
    Bench(
        "real-models", "app_pages/real-models.py", 6, "sentence", "selectbox",
        fresh_ints(2, stop=17), (0, 1), (8, 9),
    ),
    Bench(
        "real-models", "app_pages/real-models.py", 6, "head", "number_input",
        fresh_ints(0, stop=12, avoid=(5, 6)), (5, 6),
    ),
)  # fmt: skip


@dataclass
class Result:
    bench: Bench
    charts: int = 0
    new_ms: float = float("nan")
    seen_ms: float = float("nan")
    minimal_ms: float = float("nan")
    kb: float = float("nan")
    reruns: int = 0
    note: str = ""

    @property
    def ratio_a(self) -> float:
        return self.new_ms / self.seen_ms

    @property
    def ratio_b(self) -> float:
        return self.seen_ms / self.minimal_ms / max(self.charts, 1)

    @property
    def missed(self) -> list[str]:
        """Names of the budgets this row misses (NaN counts as missed)."""
        checks = (
            ("(a)", self.ratio_a <= BUDGET_A),
            ("(b)", self.ratio_b <= BUDGET_B),
            ("KB", self.kb <= BUDGET_KB),
        )
        return [name for name, ok in checks if not ok]

    @property
    def ok(self) -> bool:
        return not self.missed


class BenchError(RuntimeError):
    pass


def page_scripts() -> dict[str, str]:
    """url path -> script, from the app's page list (empty if it cannot be read)."""
    try:
        from ui.common.pages import PAGES
    except Exception:  # the app's layout changed; fall back to the table's paths
        return {}
    return {spec.url_path: spec.script for spec in PAGES}


def _timed_run(at) -> float:
    t0 = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - t0
    if len(at.exception):
        raise BenchError(f"exception on the page: {at.exception[0].value}")
    return elapsed


def _widget(at, kind: str, key: str):
    accessor = getattr(at, kind)
    try:
        return accessor(key=key)
    except KeyError:
        return None


def chart_bytes(at) -> tuple[int, int]:
    """(number of Vega-Lite charts, bytes of their spec + datasets) on the last run."""
    total = 0
    charts = at.get("vega_lite_chart")
    for chart in charts:
        proto = chart.proto
        total += len(proto.spec.encode())
        total += len(proto.data.data)
        total += sum(len(ds.name.encode()) + len(ds.data.data) for ds in proto.datasets)
    return len(charts), total


def bench_page(bench: Bench, minimal, reruns: int) -> Result:
    from streamlit.testing.v1 import AppTest

    from tests.app.helpers import reveal_all

    result = Result(bench)
    at = AppTest.from_file(str(APP), default_timeout=60)
    _timed_run(at)
    at.switch_page(bench.script)
    _timed_run(at)
    reveal_all(at)  # answer every "predict first" question, so all charts are drawn
    widget = _widget(at, bench.kind, bench.key)
    if widget is None:
        keys = sorted({w.key for w in at.main if getattr(w, "key", None)} - {None})
        result.note = f"no {bench.kind} with key {bench.key!r} on the page (keys: {keys})"
        return result

    def set_and_run(value) -> float:
        _widget(at, bench.kind, bench.key).set_value(value)
        return _timed_run(at)

    for _ in range(WARMUP):  # imports, first cache fills, the seen values
        for value in bench.seen:
            set_and_run(value)
        _timed_run(minimal)
    result.charts, nbytes = chart_bytes(at)
    result.kb = nbytes / 1000
    if result.charts != bench.n_charts:
        result.note = f"expected {bench.n_charts} charts, found {result.charts}"

    new_values = bench.new_values()
    seen_cycle = itertools.cycle(bench.seen)
    new_t, seen_t, min_t = [], [], []
    for _ in range(reruns):
        value = next(new_values, None)
        if value is None:
            result.note = (result.note + "; " if result.note else "") + "ran out of new values"
            break
        gc.collect()
        new_t.append(set_and_run(value))
        seen_t.append(set_and_run(next(seen_cycle)))
        min_t.append(_timed_run(minimal))
        _, nbytes = chart_bytes(at)
        result.kb = max(result.kb, nbytes / 1000)
    result.reruns = len(new_t)
    for value in bench.probe:
        set_and_run(value)
        _, nbytes = chart_bytes(at)
        result.kb = max(result.kb, nbytes / 1000)
    if new_t:
        result.new_ms = 1000 * statistics.median(new_t)
        result.seen_ms = 1000 * statistics.median(seen_t)
        result.minimal_ms = 1000 * statistics.median(min_t)
    return result


def _fmt(x: float, spec: str) -> str:
    return "-" if x != x else format(x, spec)  # NaN -> "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--pages", default="", help="comma-separated url paths (default: every page)"
    )
    parser.add_argument(
        "--reruns", type=int, default=MIN_RERUNS, help=f"timed reruns (default {MIN_RERUNS})"
    )
    args = parser.parse_args(argv)
    if args.reruns < 1:
        parser.error("--reruns must be >= 1")

    wanted = {p.strip() for p in args.pages.split(",") if p.strip()}
    known = {b.page for b in BENCHES}
    if wanted - known:
        parser.error(f"unknown page(s) {sorted(wanted - known)}; known: {sorted(known)}")
    benches = [b for b in BENCHES if not wanted or b.page in wanted]

    os.chdir(REPO_ROOT)
    sys.path.insert(0, str(REPO_ROOT))
    from streamlit.testing.v1 import AppTest

    for name in [n for n in logging.root.manager.loggerDict if n.startswith("streamlit")]:
        logging.getLogger(name).setLevel(logging.ERROR)  # each has its own level

    minimal = AppTest.from_file(str(MINIMAL), default_timeout=60)
    _timed_run(minimal)

    print(f"rerun benchmark: {args.reruns} timed reruns per row, medians; app {APP}")
    if args.reruns < MIN_RERUNS:
        print(f"note: fewer than {MIN_RERUNS} reruns; figures are indicative only")
    header = (
        f"{'page':<11} {'control':<9} {'charts':>6} {'new ms':>8} {'seen ms':>8} "
        f"{'min ms':>7} {'(a)':>5} {'(b)':>5} {'KB':>6}  budget"
    )
    print(header)
    print("-" * len(header))
    results: list[Result] = []
    scripts = page_scripts()
    for bench in benches:
        bench = replace(bench, script=scripts.get(bench.page, bench.script))
        if not (REPO_ROOT / bench.script).is_file():
            print(f"{bench.page:<11} {bench.key:<9} skipped: {bench.script} does not exist yet")
            continue
        try:
            res = bench_page(bench, minimal, args.reruns)
        except BenchError as exc:
            print(f"{bench.page:<11} {bench.key:<9} FAILED: {exc}")
            results.append(Result(bench, note=str(exc)))
            continue
        if not res.reruns:
            print(f"{bench.page:<11} {bench.key:<9} skipped: {res.note}")
            continue
        results.append(res)
        verdict = "pass" if res.ok else "FAIL " + ",".join(res.missed)
        print(
            f"{bench.page:<11} {bench.key:<9} {res.charts:>6} {_fmt(res.new_ms, '8.1f')} "
            f"{_fmt(res.seen_ms, '8.1f')} {_fmt(res.minimal_ms, '7.1f')} "
            f"{_fmt(res.ratio_a, '5.2f')} {_fmt(res.ratio_b, '5.2f')} {_fmt(res.kb, '6.1f')}  "
            f"{verdict}" + (f"  ({res.note})" if res.note else "")
        )
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    rss_ok = rss_mb <= BUDGET_RSS_MB
    print(
        f"\nbudgets: (a) <= {BUDGET_A}, (b) <= {BUDGET_B} per chart, "
        f"chart data <= {BUDGET_KB:.0f} KB per page"
    )
    print(
        f"peak RSS after visiting every page: {rss_mb:.0f} MB "
        f"(budget {BUDGET_RSS_MB:.0f} MB) {'pass' if rss_ok else 'FAIL'}"
    )
    failed = [r for r in results if not r.reruns or not r.ok]
    return 1 if failed or not rss_ok else 0


if __name__ == "__main__":
    sys.exit(main())
