"""Real-browser test harness: a live ``streamlit run app.py`` driven by Chromium.

Fixtures
--------
``app_server``  (session) base URL of a ``streamlit run app.py`` process on a free
                loopback port; its output goes to ``artifacts/streamlit-server.log``.
``browser``     (session) headless Chromium launched through Playwright.
``app``         (function) an :class:`AppDriver` on a fresh 1400x1000 page. It
                records browser console errors and uncaught page errors; the test
                fails at teardown if any were seen, and a screenshot of the final
                state is saved under ``artifacts/``.
``make_app``    (function) a factory of AppDrivers on contexts of other options.
``page_pass``   (session) ``page_pass(url_path, screen, lang)``: one pass over a page,
                measured for the narrow-screen, readable-chart and accessibility
                suites (``tests/e2e/screens.py``), run once and shared.

Without the Playwright package or a Chromium binary the tests are skipped with the
reason; with ``REQUIRE_E2E=1`` (CI) they fail instead.

Environment
-----------
``CHROMIUM_PATH``   Chromium binary to use (default: searched, see ``find_chromium``).
``REQUIRE_E2E=1``   Missing Playwright/Chromium is a failure, not a skip.
``E2E_APP_ROOT``    Directory holding the ``app.py`` to serve (default: the repo root).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
APP_ROOT = Path(os.environ.get("E2E_APP_ROOT", REPO_ROOT)).resolve()
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

VIEWPORT = {"width": 1400, "height": 1000}
SERVER_START_TIMEOUT_S = 60.0
LOAD_TIMEOUT_MS = 60_000
RERUN_TIMEOUT_MS = 30_000
SETTLE_MS = 300

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")

APP_SELECTOR = "[data-testid='stApp']"
IDLE_SELECTOR = "[data-testid='stApp'][data-test-script-state='notRunning']"
CHART_SELECTOR = "[data-testid='stVegaLiteChart']"
EXCEPTION_SELECTOR = "[data-testid='stException']"

# Console errors that are not app errors: (message regex, resource-URL regex, reason).
# Both must match. Add an entry only for noise that is understood.
IGNORED_CONSOLE_ERRORS: list[tuple[re.Pattern[str], re.Pattern[str], str]] = [
    (
        re.compile(r"status of 404"),
        re.compile(r"^https?://[^/]+/.+/_stcore/(health|host-config)$"),
        # Opened at a page URL such as /variance, Streamlit's frontend first probes
        # /variance/_stcore/{health,host-config} in case the app is served under that
        # base path, gets 404, and falls back to /_stcore/...; Chromium logs each 404.
        "Streamlit base-path probing on deep links",
    ),
]


def _require_e2e() -> bool:
    return os.environ.get("REQUIRE_E2E", "") == "1"


def _unavailable(reason: str) -> None:
    """Skip, or fail when REQUIRE_E2E=1 says the browser suite must run."""
    if _require_e2e():
        pytest.fail(f"REQUIRE_E2E=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def find_chromium() -> str | None:
    """Chromium binary: $CHROMIUM_PATH, the Debian paths, then $PATH."""
    env_path = os.environ.get("CHROMIUM_PATH")
    if env_path:
        return env_path if os.access(env_path, os.X_OK) else None
    for candidate in CHROMIUM_CANDIDATES:
        if os.access(candidate, os.X_OK):
            return candidate
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now (for a Streamlit server under test)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _log_tail(path: Path, n: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "<no log>"


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def app_server(artifacts_dir: Path) -> Iterator[str]:
    """Start ``streamlit run app.py`` on a free loopback port; yield its base URL."""
    if not (APP_ROOT / "app.py").is_file():
        pytest.fail(f"no app.py in {APP_ROOT}", pytrace=False)
    port = free_port()
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # one server per parallel worker
    log_path = artifacts_dir / f"streamlit-server{'-' + worker if worker else ''}.log"
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.headless",
        "true",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
        # Other edits to the tree during a run must not put a "source changed"
        # banner into screenshots or trigger reruns.
        "--server.fileWatcherType",
        "none",
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            cmd,
            cwd=APP_ROOT,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(
                    f"streamlit exited with code {proc.returncode} before becoming healthy; "
                    f"log {log_path}:\n{_log_tail(log_path)}",
                    pytrace=False,
                )
            try:
                with urllib.request.urlopen(f"{base_url}/_stcore/health", timeout=2) as resp:
                    if resp.status == 200 and resp.read().strip() == b"ok":
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(
                    f"streamlit not healthy after {SERVER_START_TIMEOUT_S:.0f} s; "
                    f"log {log_path}:\n{_log_tail(log_path)}",
                    pytrace=False,
                )
            time.sleep(0.25)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Headless Chromium through Playwright (skip or fail when unavailable)."""
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright Python package is not installed (pip install playwright)")
    executable = find_chromium()
    env_path = os.environ.get("CHROMIUM_PATH")
    if executable is None and env_path:
        _unavailable(f"CHROMIUM_PATH={env_path} is not an executable file")
    if executable is None:
        _unavailable(
            "no Chromium binary found (set CHROMIUM_PATH or apt-get install chromium); "
            f"looked at $CHROMIUM_PATH, {', '.join(CHROMIUM_CANDIDATES)} and $PATH"
        )
    pw = sync_playwright().start()
    try:
        try:
            browser = pw.chromium.launch(
                executable_path=executable, headless=True, args=CHROMIUM_ARGS
            )
        except PlaywrightError as exc:
            _unavailable(f"Chromium at {executable} failed to launch: {exc}")
        yield browser
        browser.close()
    finally:
        pw.stop()


# Counts script-state transitions of the stApp element and notes the time of the last
# DOM change. A MutationObserver sees every attribute change, so a rerun shorter than
# any polling interval is still counted.
RUN_OBSERVER_JS = """
(() => {
  window.__e2e = {started: 0, finished: 0, lastMutation: performance.now()};
  const watch = () => {
    new MutationObserver((records) => {
      for (const r of records) {
        const el = r.target;
        if (el.getAttribute('data-testid') !== 'stApp') continue;
        const state = el.getAttribute('data-test-script-state');
        if (state === 'running' && r.oldValue !== 'running') window.__e2e.started += 1;
        if (state === 'notRunning' && r.oldValue !== 'notRunning') window.__e2e.finished += 1;
      }
    }).observe(document, {
      subtree: true, attributes: true, attributeOldValue: true,
      attributeFilter: ['data-test-script-state'],
    });
    new MutationObserver(() => { window.__e2e.lastMutation = performance.now(); })
      .observe(document, {subtree: true, childList: true, characterData: true});
  };
  if (document.documentElement) watch();
  else document.addEventListener('readystatechange', watch, {once: true});
})();
"""

_SETTLED_JS = """
([sel, quietMs]) => !!document.querySelector(sel) && !!window.__e2e &&
  performance.now() - window.__e2e.lastMutation >= quietMs
"""

# True when every chart holds a canvas with at least one pixel unlike its corner
# pixel, or an svg with drawn marks.
_CHARTS_RENDERED_JS = """
(sel) => {
  const charts = Array.from(document.querySelectorAll(sel));
  return charts.every((chart) => {
    const canvas = chart.querySelector('canvas');
    if (canvas) {
      if (!canvas.width || !canvas.height) return false;
      const ctx = canvas.getContext('2d');
      if (!ctx) return false;
      const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      for (let i = 4; i < data.length; i += 4) {
        if (data[i] !== data[0] || data[i + 1] !== data[1] ||
            data[i + 2] !== data[2] || data[i + 3] !== data[3]) return true;
      }
      return false;
    }
    const svg = chart.querySelector('svg');
    return !!svg && svg.querySelectorAll('path, rect, line, text').length > 0;
  });
}
"""

# One short fingerprint per chart (hash of the canvas pixels or the svg markup).
CHART_SIGNATURES_JS = """
(sel) => Array.from(document.querySelectorAll(sel)).map((chart) => {
  const canvas = chart.querySelector('canvas');
  let s = '';
  if (canvas) s = canvas.width + 'x' + canvas.height + ':' + canvas.toDataURL();
  else { const svg = chart.querySelector('svg'); s = svg ? svg.outerHTML : ''; }
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return s.length + ':' + (h >>> 0).toString(16);
})
"""


# Installed before any page script (``make_app(init_script=SENT_JS)``): time-stamps every
# message the page sends to the server (``window.__sent``).
SENT_JS = """
(() => {
  window.__sent = [];
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (...args) {
    window.__sent.push(performance.now());
    return send.apply(this, args);
  };
})();
"""


# Installed before any page script (``make_app(init_script=CANVAS_TEXT_JS)``): records
# the text Vega draws on each canvas, with its fill, as ``canvas.__e2eTexts``; the
# ``clearRect`` that starts each redraw resets it.
CANVAS_TEXT_JS = """
(() => {
  const proto = CanvasRenderingContext2D.prototype;
  const fillText = proto.fillText, clearRect = proto.clearRect;
  proto.clearRect = function (...args) {
    this.canvas.__e2eTexts = [];
    return clearRect.apply(this, args);
  };
  proto.fillText = function (text, ...rest) {
    const c = this.canvas;
    (c.__e2eTexts = c.__e2eTexts || []).push({text: String(text), fill: String(this.fillStyle)});
    return fillText.call(this, text, ...rest);
  };
})();
"""


class AppDriver:
    """One browser page on the app, with helpers to load, interact and check it."""

    def __init__(self, page, base_url: str, artifacts_dir: Path) -> None:
        self.page = page
        self.base_url = base_url
        self.artifacts_dir = artifacts_dir
        self.console_errors: list[str] = []
        self.ignored_console: list[str] = []
        self.frames_received = 0
        page.add_init_script(RUN_OBSERVER_JS)
        page.on("websocket", self._on_websocket)
        page.on("console", self._on_console)
        page.on("pageerror", lambda exc: self.console_errors.append(f"pageerror: {exc}"))

    def _on_console(self, msg) -> None:
        if msg.type != "error":
            return
        text = msg.text
        location = msg.location.get("url", "") if msg.location else ""
        for text_re, url_re, _reason in IGNORED_CONSOLE_ERRORS:
            if text_re.search(text) and url_re.search(location):
                self.ignored_console.append(text)
                return
        self.console_errors.append(f"console.error: {text} ({location})")

    def _on_websocket(self, ws) -> None:
        # every message from the server counts: a rerun that is quick enough can finish
        # without its "running" state ever reaching the DOM, but not without messages
        def count(_frame) -> None:
            self.frames_received += 1

        ws.on("framereceived", count)

    def url(self, path: str = "", query: str = "") -> str:
        url = f"{self.base_url}/{path.lstrip('/')}"
        return f"{url}?{query.lstrip('?')}" if query else url

    # -- loading and waiting ---------------------------------------------------------

    def open(self, path: str = "", query: str = "") -> AppDriver:
        """Navigate to ``/<path>?<query>`` and wait until the script is idle and every
        chart has rendered."""
        self.page.goto(self.url(path, query), wait_until="domcontentloaded")
        self.page.wait_for_selector(APP_SELECTOR, state="attached", timeout=LOAD_TIMEOUT_MS)
        # the app shows "notRunning" before it has connected, so wait for a finished run
        # (on a loaded machine the DOM can sit quiet for longer than SETTLE_MS before it)
        self.page.wait_for_function(
            "() => window.__e2e && window.__e2e.finished >= 1", timeout=LOAD_TIMEOUT_MS, polling=50
        )
        self.wait_idle(timeout_ms=LOAD_TIMEOUT_MS)
        return self

    def wait_idle(self, timeout_ms: int = RERUN_TIMEOUT_MS) -> None:
        """Wait for script state notRunning and a quiet DOM, then for every chart to be
        drawn.

        Streamlit flips the state to notRunning slightly before the last elements
        (e.g. page links) are in the DOM, so the state alone is not enough: we also
        wait until no node was added or removed for ``SETTLE_MS``.
        """
        self.page.wait_for_function(
            _SETTLED_JS, arg=[IDLE_SELECTOR, SETTLE_MS], timeout=timeout_ms, polling=50
        )
        self.wait_charts_rendered(timeout_ms)

    def wait_charts_rendered(self, timeout_ms: int = RERUN_TIMEOUT_MS) -> None:
        self.page.wait_for_function(
            _CHARTS_RENDERED_JS, arg=CHART_SELECTOR, timeout=timeout_ms, polling=100
        )

    def assert_charts_drawn(self, expected: int, *, min_px: int, timeout_ms: int) -> None:
        """Exactly ``expected`` charts within ``timeout_ms`` (the last ones can land after
        the run ends), each drawn and, scrolled into view, more than ``min_px`` wide and
        tall."""
        from playwright.sync_api import expect

        charts = self.page.locator(CHART_SELECTOR)
        expect(charts).to_have_count(expected, timeout=timeout_ms)
        self.wait_charts_rendered()
        for i in range(expected):
            charts.nth(i).scroll_into_view_if_needed()
            box = charts.nth(i).bounding_box()
            assert box and box["width"] > min_px and box["height"] > min_px, (
                f"chart {i} is tiny: {box}"
            )

    def wait_placeholders_gone(self, timeout_ms: int = LOAD_TIMEOUT_MS) -> None:
        """Wait until no element is still a grey placeholder (``stSkeleton``): Streamlit
        draws one until an element's code has reached the browser, which on a busy
        machine can be after the DOM has settled."""
        self.page.wait_for_function(
            "() => !document.querySelector(\"[data-testid='stSkeleton']\")",
            timeout=timeout_ms,
            polling=200,
        )

    def draw_every_chart(self) -> None:
        """Reveal every prediction and scroll each chart into view, so that every chart
        is drawn (Vega draws a canvas once it has a size)."""
        self.wait_placeholders_gone()
        self.reveal_predictions()
        self.wait_placeholders_gone()
        for chart in self.page.locator(CHART_SELECTOR).all():
            chart.scroll_into_view_if_needed()
        self.wait_charts_rendered()

    def run_counts(self) -> tuple[int, int]:
        counts = self.page.evaluate("() => window.__e2e || {started: 0, finished: 0}")
        return counts["started"], counts["finished"]

    def chart_signatures(self) -> list[str]:
        return self.page.evaluate(CHART_SIGNATURES_JS, CHART_SELECTOR)

    def interact(
        self,
        action: Callable[[], object],
        *,
        expect_chart_change: bool = True,
        timeout_ms: int = RERUN_TIMEOUT_MS,
    ) -> tuple[list[str], list[str]]:
        """Run ``action`` and wait for the rerun it triggers to finish.

        The rerun is detected by the script-state observer (a finished-run counter
        that moves past its value before the action). A rerun quick enough that its
        "running" state never reached the DOM is detected by a server message after the
        action followed by an idle, quiet page; a change of any chart's fingerprint is
        also accepted. With ``expect_chart_change`` the call also waits until some chart
        differs from before. Returns chart signatures (before, after).
        """
        before = self.chart_signatures()
        _, finished_before = self.run_counts()
        frames_before = self.frames_received
        action()
        deadline = time.monotonic() + timeout_ms / 1000
        after = before
        while time.monotonic() < deadline:
            _, finished = self.run_counts()
            idle = self.page.locator(IDLE_SELECTOR).count() == 1
            after = self.chart_signatures()
            changed = after != before
            answered = self.frames_received > frames_before and self.page.evaluate(
                _SETTLED_JS, [IDLE_SELECTOR, SETTLE_MS]
            )
            rerun_done = (finished > finished_before or answered) and idle
            if (rerun_done or (changed and idle)) and (changed or not expect_chart_change):
                break
            time.sleep(0.05)
        else:
            pytest.fail(
                f"no finished rerun{' with a chart change' if expect_chart_change else ''} "
                f"within {timeout_ms} ms after the interaction (finished runs "
                f"{finished_before} -> {self.run_counts()[1]}, server messages "
                f"{frames_before} -> {self.frames_received}, idle {idle})",
                pytrace=False,
            )
        self.wait_idle(timeout_ms)
        return before, self.chart_signatures()

    def reveal_predictions(self, first: str | None = None) -> None:
        """Press "Just show me" on every open predict-first question, one rerun each.

        ``first``: the key of a question known to be on the page; its skip button is
        waited for, since on a loaded machine the DOM can settle before the lower part of
        the page is drawn.
        """
        if first is not None:
            self.button(f"{first}_skip").wait_for(state="visible", timeout=30_000)
        for _ in range(6):
            skip = self.page.locator("[class*='st-key-'][class*='_skip'] button:visible")
            if not skip.count():
                return
            key = skip.first.evaluate(
                "b => b.closest('[class*=\"st-key-\"]').className.match(/st-key-\\S+_skip/)[0]"
            )
            # no chart need change (the recap's self-check reveals text; callers count
            # charts), but this card's skip button must be gone before the next is looked for
            self.interact(skip.first.click, expect_chart_change=False)
            self.page.locator(f".{key} button").wait_for(state="detached", timeout=RERUN_TIMEOUT_MS)

    # -- locators -----------------------------------------------------------------

    def widget(self, key: str):
        """Element container of the widget with this Streamlit key (``.st-key-<key>``)."""
        return self.page.locator(f".st-key-{key}")

    def csv_button(self, chart: str):
        """The CSV button under the chart of element key ``chart``: its "Data and code"
        panel (``<chart>_code``) is opened first (closed, it draws nothing inside), and the
        button scrolled into view."""
        panel = self.widget(f"{chart}_code")
        panel.scroll_into_view_if_needed()
        self.interact(lambda: panel.locator("summary").click(), expect_chart_change=False)
        button = self.button(f"{chart}_csv")
        button.wait_for(state="visible", timeout=RERUN_TIMEOUT_MS)
        button.scroll_into_view_if_needed()
        return button

    def button(self, key: str):
        """The visible button of ``st.button(key=...)``. A button with ``help=`` is in
        the DOM twice (one copy hidden, used for layout), hence ``:visible``."""
        return self.widget(key).locator("button:visible")

    # -- checks ---------------------------------------------------------------------

    def assert_no_exception(self) -> None:
        exceptions = self.page.locator(EXCEPTION_SELECTOR)
        if exceptions.count():
            text = "\n---\n".join(exceptions.all_inner_texts())
            pytest.fail(f"Streamlit exception on the page:\n{text}", pytrace=False)

    def assert_no_console_errors(self) -> None:
        if self.console_errors:
            joined = "\n".join(self.console_errors)
            pytest.fail(f"browser console errors:\n{joined}", pytrace=False)

    def assert_healthy(self) -> None:
        self.assert_no_exception()
        self.assert_no_console_errors()

    def screenshot(self, name: str, *, full_page: bool = True) -> Path:
        """Save a PNG under artifacts/. With ``full_page`` the viewport is stretched to
        the height of Streamlit's scrolling main area, which a plain full-page
        screenshot would cut at the window height."""
        path = self.artifacts_dir / f"{name}.png"
        if not full_page:
            self.page.screenshot(path=str(path))
            return path
        size = self.page.viewport_size or VIEWPORT
        height = self.page.evaluate(
            """() => Math.max(document.documentElement.scrollHeight,
                ...Array.from(document.querySelectorAll(
                    "[data-testid='stMain'], [data-testid='stAppViewContainer'], section.main"
                )).map((el) => el.scrollHeight))"""
        )
        height = int(min(max(height, size["height"]), 20_000))
        try:
            if height > size["height"]:
                self.page.set_viewport_size({"width": size["width"], "height": height})
                self.wait_charts_rendered()
            self.page.screenshot(path=str(path), full_page=True)
        finally:
            self.page.set_viewport_size(size)
        return path


def _safe_name(nodeid: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid.split("::", 1)[-1])[:120]


@pytest.fixture
def app(browser, app_server: str, artifacts_dir: Path, request) -> Iterator[AppDriver]:
    """An :class:`AppDriver` on a fresh browser context (1400x1000 viewport).

    At teardown: a screenshot of the last state goes to artifacts/<test>.png, and a
    Streamlit exception box on the page or any console error or uncaught page error
    recorded during the test fails it.
    """
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
    context.set_default_timeout(RERUN_TIMEOUT_MS)
    page = context.new_page()
    driver = AppDriver(page, app_server, artifacts_dir)
    try:
        yield driver
        try:
            page.screenshot(path=str(artifacts_dir / f"{_safe_name(request.node.nodeid)}.png"))
        except Exception as exc:  # a screenshot failure must not mask the test result
            print(f"screenshot failed: {exc}", file=sys.stderr)
        driver.assert_no_exception()
        driver.assert_no_console_errors()
    finally:
        context.close()


@pytest.fixture
def make_app(browser, app_server: str, artifacts_dir: Path) -> Iterator[Callable[..., AppDriver]]:
    """A factory of :class:`AppDriver` s on fresh contexts with other options than ``app``'s:
    ``make_app(viewport=..., is_mobile=True, has_touch=True, color_scheme="dark",
    init_script=js)``. Each driver is checked like ``app``'s at teardown (no Streamlit
    exception, no console error)."""
    contexts: list[tuple[object, AppDriver]] = []

    def make(*, init_script: str | None = None, **options) -> AppDriver:
        options.setdefault("viewport", VIEWPORT)
        options.setdefault("device_scale_factor", 1)
        context = browser.new_context(**options)
        context.set_default_timeout(RERUN_TIMEOUT_MS)
        if init_script:
            context.add_init_script(init_script)
        driver = AppDriver(context.new_page(), app_server, artifacts_dir)
        contexts.append((context, driver))
        return driver

    try:
        yield make
        for _, driver in contexts:
            driver.assert_no_exception()
            driver.assert_no_console_errors()
    finally:
        for context, _ in contexts:
            context.close()


@pytest.fixture(scope="session")
def canvas_text_js() -> str:
    """:data:`CANVAS_TEXT_JS`, for ``make_app(init_script=...)``."""
    return CANVAS_TEXT_JS


@pytest.fixture(scope="session")
def page_pass(browser, app_server: str, artifacts_dir: Path) -> Callable[..., object]:
    """``page_pass(url_path, screen, lang="en") -> screens.PagePass``: the session's one
    pass over a page on a screen of :data:`screens.SCREENS` in a language, run on first
    use (in a fresh context, light theme) and then shared by the narrow-screen,
    readable-chart and accessibility suites (see tests/e2e/screens.py)."""
    from tests.e2e import screens

    passes: dict[tuple[str, str, str], object] = {}

    def get(url_path: str, screen: str, lang: str = screens.DEFAULT_LANG):
        key = (url_path, screen, lang)
        if key not in passes:
            options = {"device_scale_factor": 1, **screens.SCREENS[screen]}
            context = browser.new_context(color_scheme="light", **options)
            context.set_default_timeout(RERUN_TIMEOUT_MS)
            context.add_init_script(CANVAS_TEXT_JS)
            try:
                driver = AppDriver(context.new_page(), app_server, artifacts_dir)
                passes[key] = screens.run_pass(driver, *key)
            finally:
                context.close()
        return passes[key]

    return get
