"""In a real browser: control change to redrawn chart, and cold first visit, per page,
each against the one-chart page (``benchmarks/minimal_page.py``) measured in the same run.

Starts ``streamlit run app.py`` (from ``--app-root``) and ``streamlit run
benchmarks/minimal_page.py`` on free loopback ports and drives Debian's Chromium through
Playwright.

* **Change.** For each page, its main control (``PageSpec.main``, a number input) moves
  to values never used before (the costly case: nothing is cached; the training page's
  d_k has five other values, then they come round again), typed and entered; between two
  changes of the page, the minimal page's number input moves by one, the same way. Each change
  is timed inside the page, on the page's own clock: from the key's ``keydown`` to the
  last redraw of any chart (a Vega canvas cleared for a new frame, a change under an SVG
  chart's ``svg.marks``, or a chart embedded anew), once the rerun has finished and the
  page has been quiet for :data:`QUIET_MS`. While a change is in flight the script only
  runs a cheap check inside the page every :data:`POLL_MS`. Pages open with "Go deeper"
  open (every chart drawn: on the short path alone a new d_k asks the page's question
  again, and its charts wait for the answer). With ``--short`` they open as a learner
  arrives, "Go deeper" closed, with the link's ``reveal=1`` (the answers shown, so the
  short path's charts follow the control); a page whose main control sits under "Go
  deeper" (real-models' ``head``) is then measured with it open, and its row says so.
  Counted: the charts a change redrew (of those on the page: a chart whose spec and data
  did not change should not redraw), the websocket messages the page
  sent per change, and the messages it received before the last redraw (a rerun streams
  one per element it draws) with the time the last of them arrived. Budget: the page's median ≤ :data:`BUDGET_RATIO` × the minimal page's
  median measured alternately with it.
* **Cold first visit.** ``--visits`` times each: a freshly started server, the first
  visit to ``/variance?deeper=true`` (the minimal page's ``/``) until its first chart is drawn.
  Reported: the medians and their ratio (the goal is ≤ 1.5; compare with another commit
  through ``--app-root``, back to back).

* **Drag** (``--drags N``). Each input of a chart computed in the browser
  (``ui/common/live.py``: the tables' ``labelled`` float parameters, drawn as sliders
  under their chart) moves through N values ~30 ms apart, as a drag does, and then
  pauses. Timed inside the page: from each ``input`` event to the animation frame after
  the chart's drawing changed. Counted: the websocket messages the page sent during the
  drag and in the second after it. Budget: median ≤ :data:`DRAG_BUDGET_MS` per input
  event, no message during the drag, at most one after the pause.

Usage (from the repo root)::

    python benchmarks/browser_latency.py [--changes 8] [--visits 10] [--app-root DIR] [--short]
    python benchmarks/browser_latency.py --drags 40 --changes 0 --visits 0
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import itertools
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

# the browser-side observers and launch flags are the e2e suite's own
from tests.e2e.conftest import (
    CHART_SELECTOR,
    CHROMIUM_ARGS,
    IDLE_SELECTOR,
    RUN_OBSERVER_JS,
    SENT_JS,
    find_chromium,
    free_port,
)

#: Budget: a page's median change ≤ this × the one-chart page's.
BUDGET_RATIO = 3.0
#: Goal for the cold first visit, as a ratio to the one-chart page's.
COLD_GOAL_RATIO = 1.5
#: A change is over when the run has finished and no chart has redrawn for this long.
QUIET_MS = 400
#: How often the script reads the page's state while it waits.
POLL_MS = 50
MINIMAL = "benchmarks/minimal_page.py"
#: A predict-first question's "Just show me" button.
SKIP_SELECTOR = "[class*='st-key-'][class*='_skip'] button:visible"
#: Budget of a closed-form chart: median milliseconds from an input event to its redraw.
DRAG_BUDGET_MS = 50.0

#: Moves the slider of input ``name`` through ``values`` (~30 ms apart), timing each
#: redraw; then counts the messages sent during the drag and in the second after it.
DRAG_JS = """
async ({name, values}) => {
  const input = document.querySelector(`.vega-bind input[name="${name}_${name}"]`);
  const root = input.closest('[data-testid="stElementContainer"]');
  const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const times = [];
  const start = performance.now();
  for (const v of values) {
    const marks = root.querySelector('svg.marks, canvas');
    const drawn = new Promise((resolve) => {
      const seen = new MutationObserver(() => { seen.disconnect(); resolve(); });
      seen.observe(marks, {subtree: true, childList: true, attributes: true, characterData: true});
    });
    const t0 = performance.now();
    input.value = String(v);
    input.dispatchEvent(new Event('input', {bubbles: true}));
    await Promise.race([drawn, sleep(2000)]);
    await frame();
    times.push(performance.now() - t0);
    await sleep(Math.max(0, 30 - (performance.now() - t0)));
  }
  const end = performance.now();
  await sleep(1000);
  const sent = window.__sent;
  return {
    times,
    during: sent.filter((t) => t >= start && t <= end).length,
    after: sent.filter((t) => t > end).length,
  };
}
"""


@contextlib.contextmanager
def server(root: Path, script: str):
    """``streamlit run script`` from ``root`` on a free loopback port; yields its URL."""
    port = free_port()
    cmd = [
        sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
        "--server.address", "127.0.0.1", "--server.port", str(port),
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{script} did not become healthy within 60 s") from None
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _wait_idle(page) -> None:
    page.wait_for_function("() => window.__e2e && window.__e2e.finished >= 1", timeout=60_000)
    page.wait_for_selector(IDLE_SELECTOR, timeout=60_000)


#: Installed before the app's scripts: the page records, on its own clock, the ``keydown``
#: of Enter, every chart redraw (Vega's canvas renderer clears the canvas
#: for each frame; its SVG renderer changes the ``svg.marks`` subtree; a chart embedded
#: anew adds a new drawing) and the end of each run.
LATENCY_JS = """
(() => {
  const lat = window.__latency = {press: 0, draws: 0, lastDraw: 0, finishedAt: 0,
                                   redrawn: new Set()};
  const drew = (node) => {
    lat.draws += 1;
    lat.lastDraw = performance.now();
    const chart = node && node.closest && node.closest("[data-testid='stVegaLiteChart']");
    if (chart) lat.redrawn.add(chart);
  };
  const clearRect = CanvasRenderingContext2D.prototype.clearRect;
  CanvasRenderingContext2D.prototype.clearRect = function (...args) {
    drew(this.canvas);
    return clearRect.apply(this, args);
  };
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') lat.press = e.timeStamp;
  }, true);
  const inMarks = (node) => !!(node && node.closest && node.closest('svg.marks'));
  const isDrawing = (node) => node.nodeType === 1 &&
    (node.matches('svg.marks, canvas') || !!node.querySelector('svg.marks, canvas'));
  const watch = () => new MutationObserver((records) => {
    for (const r of records) {
      const el = r.target;
      if (r.attributeName === 'data-test-script-state') {
        const state = el.getAttribute('data-test-script-state');
        if (state === 'notRunning' && r.oldValue !== 'notRunning') {
          lat.finishedAt = performance.now();
        }
      } else if (inMarks(el.nodeType === 1 ? el : el.parentElement)) {
        drew(el.nodeType === 1 ? el : el.parentElement);
      } else {
        const added = Array.from(r.addedNodes).find(isDrawing);
        if (added) drew(added);
      }
    }
  }).observe(document, {subtree: true, childList: true, characterData: true,
                        attributes: true, attributeOldValue: true});
  if (document.documentElement) watch();
  else document.addEventListener('readystatechange', watch, {once: true});
})();
"""


#: Installed before the app's scripts: the time each websocket message from the server
#: arrives, on the page's clock (a rerun streams one message per element it draws).
RECEIVED_JS = """
(() => {
  window.__received = [];
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', () => window.__received.push(performance.now()));
    }
  };
})();
"""


def open_page(browser, url: str):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.add_init_script(RUN_OBSERVER_JS)
    page.add_init_script(LATENCY_JS)
    page.add_init_script(SENT_JS)
    page.add_init_script(RECEIVED_JS)
    page.goto(url)
    _wait_idle(page)
    # a fresh server's first visit can finish a run before the page has drawn its question
    page.wait_for_selector(f"{CHART_SELECTOR}, {SKIP_SELECTOR}", timeout=60_000)
    for _ in range(6):  # "Just show me" on every predict-first question
        skip = page.locator(SKIP_SELECTOR)
        if not skip.count():
            break
        n = page.evaluate("() => window.__e2e.finished")
        skip.first.click()
        page.wait_for_function(f"() => window.__e2e.finished > {n}", timeout=30_000)
        page.wait_for_selector(IDLE_SELECTOR)
    page.wait_for_selector(CHART_SELECTOR, timeout=60_000)
    return page


def timed_change(page, act) -> tuple[float, int, tuple[int, int], tuple[int, float]]:
    """Milliseconds from the key ``act`` presses to the last chart redraw of the rerun
    it starts (on the page's clock), the websocket messages the page sent meanwhile,
    (charts redrawn, charts on the page) and (messages received before the last redraw,
    milliseconds from the key to the last of them; NaN if none came)."""
    finished, draws, sent, received = page.evaluate(
        """() => {
            window.__latency.redrawn = new Set();
            return [window.__e2e.finished, window.__latency.draws, window.__sent.length,
                    window.__received.length];
        }"""
    )
    act()
    page.wait_for_function(
        f"""([idle]) => {{
            const lat = window.__latency, ran = window.__e2e.finished > {finished};
            const last = Math.max(lat.lastDraw, ran ? lat.finishedAt : 0);
            return lat.draws > {draws} && !!document.querySelector(idle)
                && performance.now() - last >= {QUIET_MS};
        }}""",
        arg=[IDLE_SELECTOR],
        polling=POLL_MS,
        timeout=30_000,
    )
    lat, now_sent, redrawn, charts, arrived = page.evaluate(
        """([sel, from]) => [window.__latency, window.__sent.length,
                             window.__latency.redrawn.size,
                             document.querySelectorAll(sel).length,
                             window.__received.slice(from)]""",
        [CHART_SELECTOR, received],
    )
    press = lat["press"]
    # the rerun's messages: those that came before its last redraw
    streamed = [t for t in arrived if t <= lat["lastDraw"]]
    last_message = (max(streamed) - press) if streamed else float("nan")
    return (
        lat["lastDraw"] - press,
        now_sent - sent,
        (redrawn, charts),
        (len(streamed), last_message),
    )


def type_value(page, key: str, value) -> None:
    box = page.locator(f".st-key-{key} input")
    box.fill(str(value))
    box.press("Enter")


def _cold_visits(browser, root: Path, script: str, path: str, visits: int) -> list[float]:
    """Seconds from opening ``path`` on a freshly started server to its first chart."""
    out = []
    for _ in range(visits):
        with server(root, script) as url:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.add_init_script(RUN_OBSERVER_JS)
            t0 = time.perf_counter()
            page.goto(f"{url}/{path}")
            page.wait_for_selector(CHART_SELECTOR + " canvas, " + CHART_SELECTOR + " svg")
            out.append(time.perf_counter() - t0)
            page.close()
    return out


def live_inputs(wanted: set[str]) -> list[tuple[str, str, float, float, float]]:
    """(page, key, lo, hi, step) of every input moved in the browser: a ``labelled``
    float parameter of a page's table (:mod:`ui.common.live`)."""
    from ui.common.pages import PAGES

    return [
        (spec.url_path, p.key, p.lo, p.hi, p.step)
        for spec in PAGES
        if spec.url_path and (not wanted or spec.url_path in wanted)
        for p in spec.params
        if p.labelled and p.kind == "float"
    ]


def _drags(browser, app_url: str, wanted: set[str], n: int) -> list[tuple]:
    """Per closed-form input: (page, key, median ms, max ms, sent during, sent after)."""
    rows = []
    for path, key, lo, hi, step in live_inputs(wanted):
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.add_init_script(RUN_OBSERVER_JS)
        page.add_init_script(SENT_JS)
        page.goto(f"{app_url}/{path}?deeper=true")
        _wait_idle(page)
        slider = page.locator(f".vega-bind input[name='{key}_{key}']")
        slider.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        # n steps up from the low end, by whole steps (a fresh value at each event)
        values = [lo + step * (1 + i % max(1, int((hi - lo) / step))) for i in range(n)]
        got = page.evaluate(DRAG_JS, {"name": key, "values": values})
        rows.append(
            (path, key, statistics.median(got["times"]), max(got["times"]), got["during"],
             got["after"])
        )  # fmt: skip
        page.close()
    return rows


#: The query of a page opened with every chart drawn, and as a learner arrives.
DEEP_QUERY, SHORT_QUERY = "deeper=true", "reveal=1"


def _benches(rerun, wanted: set[str], short: bool) -> list[tuple]:
    """(bench, query) per page whose main control is a number input: opened with "Go
    deeper" open or, ``short``, closed where the main control is drawn without it."""
    rerun.GO_DEEPER = True
    deep = [b for b in rerun.derived_benches(wanted, False) if b.kind == "number_input"]
    if not short:
        return [(b, DEEP_QUERY) for b in deep]
    rerun.GO_DEEPER = False
    on_short = {b.page for b in rerun.derived_benches(wanted, False) if b.kind == "number_input"}
    return [(_shipped_only(b), SHORT_QUERY if b.page in on_short else DEEP_QUERY) for b in deep]


def _shipped_only(bench):
    """``bench``, its values moved among the shipped ones where the short path needs them:
    training's short path is the shipped learning-rate sweep, and at a d_k it does not
    ship it asks before training (the issue's exception, "newly trained runs"), so its
    d_k goes round the shipped values, each a change from the last."""
    if bench.page != "training":
        return bench
    from ui.story.lr_sweep import SHIPPED_CELLS

    shipped = sorted({d_k for _m, _opt, d_k, _seed, _steps in SHIPPED_CELLS})
    start = shipped.index(bench.seen[0]) if bench.seen[0] in shipped else 0
    order = tuple(shipped[start + 1 :] + shipped[: start + 1])  # ends on the default
    return dataclasses.replace(bench, fresh=order, seen=order)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=8, help="control changes per page")
    parser.add_argument("--visits", type=int, default=10, help="cold first visits of each")
    parser.add_argument("--pages", default="", help="comma list of url paths (default: all)")
    parser.add_argument("--app-root", type=Path, default=REPO_ROOT, help="the app to measure")
    parser.add_argument(
        "--drags", type=int, default=0, help="input events per closed-form input (0: none)"
    )
    parser.add_argument(
        "--short",
        action="store_true",
        help='pages open as a learner arrives: "Go deeper" closed, answers shown (reveal=1)',
    )
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import rerun

    executable = find_chromium()
    if executable is None:
        print("no Chromium found (apt-get install chromium, or set CHROMIUM_PATH)")
        return 2
    wanted = {p for p in args.pages.split(",") if p}
    benches = _benches(rerun, wanted, args.short) if args.changes else []
    rows, ok, drags = [], True, []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        with server(args.app_root, "app.py") as app_url, server(REPO_ROOT, MINIMAL) as min_url:
            if args.drags:
                drags = _drags(browser, app_url, wanted, args.drags)
            minimal = open_page(browser, min_url)
            step = itertools.count()
            for bench, query in benches:
                page = open_page(browser, f"{app_url}/{bench.page}?{query}")
                values = itertools.cycle(bench.fresh[: args.changes] or bench.seen)
                mine, theirs, sent, redrawn, streams = [], [], [], [], []
                for _ in range(args.changes):
                    typed = functools.partial(type_value, page, bench.key, next(values))
                    ms, frames, charts, stream = timed_change(page, typed)
                    mine.append(ms)
                    sent.append(frames)
                    redrawn.append(charts)
                    streams.append(stream)
                    points = 51 + next(step) % 400  # the one-chart page's input: 51, 52, …
                    theirs.append(
                        timed_change(minimal, functools.partial(type_value, minimal, "n", points))[
                            0
                        ]
                    )
                median, base = statistics.median(mine), statistics.median(theirs)
                passed = median <= BUDGET_RATIO * base
                ok &= passed
                where = "" if query == SHORT_QUERY or not args.short else " (Go deeper open)"
                # the most charts one change redrew, of those on the page then
                most = max(redrawn)
                # the rerun's stream: messages received, and when the last one came
                times = [t for _, t in streams if t == t]  # none streamed: NaN, left out
                stream = (
                    statistics.median(n for n, _ in streams),
                    statistics.median(times) if times else float("nan"),
                )
                rows.append(
                    (bench.page, bench.key, median, max(mine), base, passed, max(sent), most,
                     stream, where)
                )  # fmt: skip
                page.close()
        if args.visits:
            # /variance opens on its question; its charts follow under "Go deeper"
            cold_app = _cold_visits(
                browser, args.app_root, "app.py", "variance?deeper=true", args.visits
            )
            cold_min = _cold_visits(browser, REPO_ROOT, MINIMAL, "", args.visits)
        browser.close()
    print(
        f"app: {args.app_root}"
        + (" (short path: Go deeper closed, reveal=1)" if args.short else "")
    )
    header = f"{'page':<12}{'control':<9}{'median ms':>10}{'max ms':>8}{'one-chart ms':>13}"
    print(
        header + f"{'ratio':>7}  budget  messages  charts redrawn (most per change)"
        "  received (last at ms)"
    )
    for row in rows:
        page_name, key, median, worst, base, passed, sent, (drawn, charts), stream, where = row
        print(
            f"{page_name:<12}{key:<9}{median:10.0f}{worst:8.0f}{base:13.0f}"
            f"{median / base:7.2f}  {'pass' if passed else 'FAIL'}  {sent:8d}  "
            f"{drawn} of {charts:<29} {stream[0]:4.0f} ({stream[1]:.0f}){where}"
        )
    for path, key, median, worst, during, after in drags:
        passed = median <= DRAG_BUDGET_MS and during == 0 and after <= 1
        ok &= passed
        print(
            f"drag {path:<11}{key:<9}{median:6.1f} ms per input (max {worst:.1f}), messages "
            f"sent: {during} during, {after} after the pause  {'pass' if passed else 'FAIL'}"
        )
    if not args.visits:
        return 0 if ok else 1
    app_s, min_s = statistics.median(cold_app), statistics.median(cold_min)
    print(
        f"\ncold first visit, median of {args.visits} fresh servers: /variance {app_s:.2f} s "
        f"(range {min(cold_app):.2f}–{max(cold_app):.2f}), one-chart page {min_s:.2f} s "
        f"(range {min(cold_min):.2f}–{max(cold_min):.2f}); ratio {app_s / min_s:.2f} "
        f"(goal ≤ {COLD_GOAL_RATIO})"
    )
    print(
        f"budget: a page's median change (Enter to the last chart redraw) ≤ {BUDGET_RATIO} × "
        f"the one-chart page's, measured alternately; "
        f"machine: {os.cpu_count()} cores"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
