"""Server-side rerun cost of every page, measured with AppTest in one process.

The rows are derived from the app: for every page of ``ui/common/pages.py``, its main
control (``PageSpec.main``), or with ``--all`` every control it draws (the page's
parameters, its table in the registry). For
each row the script loads the page through ``app.py`` and times ``AppTest.run()`` (CPU
of the process, every thread: ``time.process_time``); each timed iteration does, in turn,

* a rerun after the control moves to a value never used before in this process
  (so every ``st.cache_data`` lookup that depends on it misses),
* a rerun after the control moves to a value already seen (cache hits), and
* a rerun of ``benchmarks/minimal_page.py`` (one 50-row chart, one slider).

Interleaving the three keeps them comparable on a machine whose load drifts. It
prints medians and these ratios against the budgets of DESIGN.md:

(a) median(new value) / median(minimal page)                    budget <= 12
    (a new learning rate on ``training`` trains a model: budget 1 s of CPU instead; a
    new text of 20 tokens on ``real-models`` runs all-MiniLM-L6-v2: budget 150 ms of
    CPU, its weights loaded by the first text, whose rerun is given as a note; a new
    prompt, temperature or length on ``language-model`` writes 200 characters (100, 400)
    with each of its four models: budget 300 ms of CPU)
(b) median(seen value) / median(minimal page) / charts on page  budget <= 1.5
KB  chart data the page sends (Vega-Lite spec + Arrow datasets),
    the largest over every value visited                        budget <= 200 KB

and at the end the peak RSS of the process after visiting every page (budget
<= 400 MB). Exit status 1 if a budget is missed.

Usage (from the repo root)::

    python benchmarks/rerun.py                       # every page's main control
    python benchmarks/rerun.py --all                 # every control of every page
    python benchmarks/rerun.py --pages variance --reruns 40
    python benchmarks/rerun.py --pages real-models --controls text   # your own sentence
    python benchmarks/rerun.py --app-root ../other-checkout          # another version
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
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks.sentences import SEEN_TEXT, long_text, new_text

APP = REPO_ROOT / "app.py"
MINIMAL = Path(__file__).resolve().parent / "minimal_page.py"

BUDGET_A = 12.0
#: A new value that trains a model, or runs one (page, control): CPU budget in ms instead
#: of (a). A new text of 20 tokens runs all-MiniLM-L6-v2 (its weights already loaded).
TRAINS = {
    ("training", "lr"): 1000.0,
    ("real-models", "text"): 150.0,
    # a new prompt, temperature or length: 200 characters from each of the four models
    ("language-model", "prompt"): 300.0,
    ("language-model", "temperature"): 300.0,
    ("language-model", "length"): 300.0,
}
BUDGET_B = 1.5
BUDGET_KB = 200.0
BUDGET_RSS_MB = 400.0
MIN_RERUNS = 20
WARMUP = 3


@dataclass(frozen=True)
class Bench:
    """One page and one of its controls.

    ``kind`` is the AppTest accessor for the widget (``number_input``, ``slider``,
    ``select_slider``, ``radio``, ...). ``fresh`` are values never used before in this
    process; ``seen`` are values the timed "seen" reruns alternate between (they are
    computed once during warm-up). ``probe`` values (the control's extremes) are visited
    after the timing only, to find the largest amount of chart data the page sends.
    """

    page: str  # url path (as in ui/common/pages.py), used by --pages
    script: str
    key: str
    kind: str
    fresh: tuple[Any, ...]
    seen: tuple[Any, ...]
    probe: tuple[Any, ...] = ()


#: AppTest accessors a control's widget may be found under.
KINDS = ("number_input", "slider", "select_slider", "selectbox", "radio", "toggle", "text_area")
#: Controls of every page (the sidebar's and the presenter's), not benchmarked.
APP_WIDE = {"lang", "seed", "present", "step"}

#: A text past the 64 tokens the model reads: the probe of a text control (the largest
#: chart data a text gives).
LONG_TEXT = long_text(0)


def control_values(control) -> tuple[tuple, tuple, tuple]:
    """(seen, fresh, probe) values of a control (:class:`ui.common.params.Param`):
    its default and a neighbour are the seen ones, every other value it takes (at most
    a few hundred, nearest the default first) the fresh ones, its extremes the probes."""
    if control.kind == "flag":
        return (False, True), (), ()
    if control.kind == "text":  # the empty box and a text seen; new texts of 20 tokens
        return (control.default, SEEN_TEXT), tuple(new_text(i) for i in range(400)), (LONG_TEXT,)
    if control.options:
        options = [int(o) if control.kind == "int" else o for o in control.options]
        if control.kind == "choice":
            options = list(control.options)
        i = options.index(control.default) if control.default in options else 0
        seen = (options[i], options[i + 1] if i + 1 < len(options) else options[i - 1])
        rest = sorted(
            (o for o in options if o not in seen), key=lambda o: abs(options.index(o) - i)
        )
        return seen, tuple(rest), (options[0], options[-1])
    lo, hi, default = control.lo, control.hi, control.default
    if control.kind == "int":
        second = default * 2 if default * 2 <= hi else max(lo, default // 2)
        seen = (default, second)
        rest = sorted(
            (v for v in range(int(lo), int(hi) + 1) if v not in seen),
            key=lambda v: abs(v - default),
        )
        return seen, tuple(rest[:400]), (int(lo), int(hi))
    second = round(lo + (hi - lo) * 0.75, 4) if default != round(lo + (hi - lo) * 0.75, 4) else lo
    seen = (default, second)
    fresh = []
    for i in range(1, 400):  # a golden-ratio sequence, 4 decimals
        v = round(lo + (hi - lo) * ((i * 0.6180339887) % 1.0), 4)
        if v not in seen and v not in fresh:
            fresh.append(v)
    return seen, tuple(fresh), (lo, hi)


def page_controls(spec, at) -> dict:
    """The controls of page ``spec`` by key: its parameter table (a table's ``snap`` to
    powers of two: those powers are its options); in an app without tables (an older
    root given by ``--app-root``), the controls one run of the page registered or, where
    it kept no register, the number inputs that run ``at`` drew (range and value)."""
    from dataclasses import replace

    params = getattr(spec, "params", None)
    if params is not None and not any(isinstance(p, str) for p in params):  # a table
        out = {}
        for p in params:
            if p.snap is not None:
                powers = sorted({p.snap(v) for v in range(int(p.lo), int(p.hi) + 1)})
                p = replace(p, options=tuple(map(str, powers)))
            out[p.key] = p
        return out
    from ui.common import controls

    if hasattr(controls, "PAGE_CONTROLS"):
        return controls.PAGE_CONTROLS.get(spec.url_path, {})
    return {
        w.key: SimpleNamespace(
            key=w.key, kind="int", lo=w.min, hi=w.max, default=int(w.value), options=()
        )
        for w in at.number_input
        if w.key
    }


#: Whether pages open with "Go deeper" open (``--short``: closed, as a learner arrives).
GO_DEEPER = True


def _open_go_deeper(at) -> None:
    """Open "Go deeper" on the page about to run, so that every chart is drawn (as the
    pages of versions without it draw them); nothing on an app that has no such
    parameter."""
    from ui.common import pages

    if GO_DEEPER and any(p.key == "deeper" for p in getattr(pages, "APP_TABLE", ())):
        at.query_params["deeper"] = "true"


def derived_benches(
    pages: set[str],
    every_control: bool,
    only: frozenset[str] = frozenset(),
    mains: dict[str, str] | None = None,
) -> list[Bench]:
    """The rows: per page, its main control or (``every_control``) every control it
    draws, as one run of the page with every question answered finds them; with
    ``only``, the controls of those keys. ``mains``: the main control by url path, for
    an app whose registry names none (an older root)."""
    from streamlit.testing.v1 import AppTest

    from tests.app.helpers import reveal_all
    from ui.common.pages import PAGES

    out = []
    for spec in PAGES:
        if not spec.url_path or (pages and spec.url_path not in pages):
            continue
        at = AppTest.from_file(str(APP), default_timeout=120)
        at.run()
        _open_go_deeper(at)
        at.switch_page(spec.script)
        at.run()
        reveal_all(at)
        controls = page_controls(spec, at)
        main = getattr(spec, "main", None) or (mains or {}).get(spec.url_path)
        keys = [k for k in controls if k not in APP_WIDE] if every_control else [main]
        if only:
            keys = [k for k in controls if k in only]
        for key in keys:
            control = controls.get(key)
            kind = next((k for k in KINDS if _widget(at, k, key) is not None), None)
            if control is None or kind is None or control.kind == "flag":
                continue
            seen, fresh, probe = control_values(control)
            out.append(Bench(spec.url_path, spec.script, key, kind, fresh, seen, probe))
    return out


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
        return self.new_ms / self.minimal_ms

    @property
    def ratio_b(self) -> float:
        return self.seen_ms / self.minimal_ms / max(self.charts, 1)

    @property
    def missed(self) -> list[str]:
        """Names of the budgets this row misses (NaN counts as missed)."""
        trains = TRAINS.get((self.bench.page, self.bench.key))
        checks = (
            ("(a)", self.ratio_a <= BUDGET_A if trains is None else self.new_ms <= trains),
            ("(b)", self.ratio_b <= BUDGET_B),
            ("KB", self.kb <= BUDGET_KB),
        )
        return [name for name, ok in checks if not ok]

    @property
    def ok(self) -> bool:
        return not self.missed


class BenchError(RuntimeError):
    pass


def _timed_run(at) -> float:
    t0 = time.process_time()
    at.run()
    elapsed = time.process_time() - t0
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
    _open_go_deeper(at)
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

    first = [set_and_run(value) for value in bench.seen]  # imports, first cache fills
    if bench.kind == "text_area":  # the first text loads the model's weights
        result.note = f"first text {1000 * max(first):.0f} ms, weights loaded"
    for _ in range(WARMUP - 1):
        for value in bench.seen:
            set_and_run(value)
        _timed_run(minimal)
    _timed_run(minimal)
    result.charts, nbytes = chart_bytes(at)
    result.kb = nbytes / 1000

    new_values = iter(bench.fresh)
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
    parser.add_argument("--all", action="store_true", help="every control, not the main one")
    parser.add_argument(
        "--app-root",
        default=str(REPO_ROOT),
        help="the app to measure: a checkout of this repository (default: this one)",
    )
    parser.add_argument(
        "--controls", default="", help="comma-separated control keys (e.g. text), not the main one"
    )
    parser.add_argument(
        "--short",
        action="store_true",
        help='pages with "Go deeper" closed, as a learner arrives (default: open, every chart)',
    )
    args = parser.parse_args(argv)
    if args.reruns < 1:
        parser.error("--reruns must be >= 1")

    global APP, GO_DEEPER
    GO_DEEPER = not args.short
    from ui.common.pages import PAGES as PAGES_HERE

    # this checkout's main controls, for an older root whose registry names none
    mains = {p.url_path: p.main for p in PAGES_HERE if p.main}
    root = Path(args.app_root).resolve()
    APP = root / "app.py"
    os.chdir(root)
    sys.path.insert(0, str(root))  # its ui/ and core/, before this checkout's
    for name in [m for m in sys.modules if m.split(".")[0] in ("ui", "core", "rooms", "tests")]:
        del sys.modules[name]
    from streamlit.testing.v1 import AppTest

    from ui.common.pages import PAGES

    wanted = {p.strip() for p in args.pages.split(",") if p.strip()}
    known = {p.url_path for p in PAGES if p.url_path}
    if wanted - known:
        parser.error(f"unknown page(s) {sorted(wanted - known)}; known: {sorted(known)}")

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
    only = frozenset(k.strip() for k in args.controls.split(",") if k.strip())
    for bench in derived_benches(wanted, args.all, only, mains):
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
        f"\nbudgets: (a) <= {BUDGET_A} (a new rate that trains: <= 1 s of CPU), "
        f"(b) <= {BUDGET_B} per chart, "
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
