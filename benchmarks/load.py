"""A workshop on one server: N learners on one page, over Streamlit's websocket protocol.

Starts ``python -m streamlit run app.py`` on a free loopback port (the app root as its
working directory), waits for ``/_stcore/health`` and then plays N learners, each a
websocket client of ``/_stcore/stream`` speaking the browser's protocol (``BackMsg`` /
``ForwardMsg`` from ``streamlit.proto``):

0. Warm-up. One session (the presenter, ``--warmup``) opens the link and closes again
   before anyone else comes: the app's modules are imported and the link's own values
   computed, as on a server the presenter has just tried. ``--warmup 0``: a cold server.
1. Load. The learner connects and sends a first ``rerun_script`` carrying the page's
   URL path (``page_name``) and the deep link's query string, as the browser does when
   it opens ``http://host/<page>?<query>``. Learners open the page spread evenly over
   ``--ramp`` seconds. Page-load time: from opening the websocket to the end of that
   first run (``script_finished``, successful).
2. Changes. From the ``ForwardMsg`` deltas the learner keeps every widget of the last
   run with its current value (the widget's id embeds its user ``key``), as the
   frontend's widget manager does. Every ``--think`` seconds (±50 %, uniformly) it moves
   the page's main control (the ``PAGES`` table below) and sends ``rerun_script`` with
   the states of all widgets, the page's script hash and the updated query string (the
   control is bound to the URL). About ``--shared`` of the new values come from a short
   list every learner draws from (cache hits once someone has asked), the rest are
   values nobody has asked for yet (cache misses). Latency: from sending the change to
   the end of that run (``script_finished``, successful).

Like the browser, a learner reports the hashes of the large messages it has already
received (``cached_message_hashes``), so the server sends references for repeated
charts, and the websocket client offers per-message compression.

Reported per run (one server per page and learner count, started cold):

* ``reruns`` completed changes; ``p50/p95/max`` their latency, seconds;
* ``load p50/p95/max`` page-load time of the learners' first runs, seconds;
* ``errors``: exception elements in the deltas, compile errors, page-not-found,
  tracebacks in the server's output, timeouts (a run not finished within ``--timeout``);
* ``CPU/rerun``: the server process's CPU time (user + system, every thread, from
  ``/proc/<pid>/stat``) over the change phase, divided by the reruns completed in it;
  ``CPU/load`` the same over the load phase per learner; ``cores`` the server's CPU
  time over the change phase per second of wall time;
* ``RSS`` of the server: at start (healthy, no session), after the warm-up, with all
  sessions loaded, and at the end (in the JSON also the peak, sampled every second);
* in the JSON also ``refs`` (messages the server sent as references to ones a learner
  had already received) and ``client_cpu_s`` (this script's own CPU in the change phase,
  on the same machine).

Budgets (issue 15; checked, exit status 1 if one is missed): p95 ≤ 1.0 s, no errors,
page load p95 ≤ 3.0 s, RSS ≤ 500 MB. Loopback only; the server is always stopped
(also on Ctrl-C or an exception), and the whole run is bounded in time.

Scenarios (``--scenario``) fix a page, a control and a pattern of changes:

* ``own-sentence``: 30 learners on ``real-models`` each submit their own sentence (a
  new text of 20 tokens, ``benchmarks/sentences.py``) once, at a uniformly random
  moment of 10 s; budget p95 ≤ 2 s, no errors. The presenter's warm-up submits a
  sentence first, which loads the model's weights: that first change is reported on its
  own (``warm change``).

Usage (from the repo root)::

    python benchmarks/load.py --page saturation --learners 30 --think 6 --duration 60
    python benchmarks/load.py --page saturation,sqrt-vs-d --learners 1,10,30 --json out.json
    python benchmarks/load.py --scenario own-sentence
"""

from __future__ import annotations

import os

# as app.py does; the benchmark's own process does no array work, but the server
# inherits the environment
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import asyncio
import contextlib
import json
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks.sentences import SEEN_TEXT, new_text

BUDGET_P95_S = 1.0
BUDGET_LOAD_P95_S = 3.0
BUDGET_RSS_MB = 500.0
SERVER_START_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Control:
    """The control a learner moves on a page: an integer ``st.number_input``, or a text
    box (values of type str).

    ``shared`` are the values every learner draws from (after the first ask, cache
    hits); fresh values are drawn without repetition from ``fresh`` minus ``shared``.
    ``query`` is the deep link's query string the learners open the page with.
    """

    key: str
    shared: tuple[int | float | str, ...]
    fresh: Sequence[int | float | str]
    query: str


#: url path -> the values of its main control every learner draws from (cache hits once
#: someone has asked); a page not listed shares half, once and twice its default. The
#: control itself, its range and its default come from the page's table
#: (``ui/common/pages.py``).
SHARED: dict[str, tuple[int, ...]] = {
    "saturation": (16, 32, 64, 128, 256, 512),
    "sqrt-vs-d": (16, 32, 64, 128, 256, 512),
    "training": (16, 32, 64, 128, 256),
    "real-models": (0, 2, 5, 8),
    "which-d": (256, 512, 768, 1024, 2048),
    "variance": (16, 32, 64, 128, 256, 512),
    "gradients": (16, 32, 64, 128, 256, 512),
}


#: The deep link's query beside the main control's value: "Go deeper" open and every
#: question revealed, so every chart of the page is drawn (as ``rerun.py`` and
#: ``browser_latency.py`` measure pages); some main controls live under "Go deeper"
#: (real-models' head, language-model's temperature).
EVERY_CHART = "deeper=true&reveal=1"


def main_control(spec) -> Control:
    """The main control of page ``spec`` (:class:`ui.common.pages.PageSpec`) as the
    learners move it: fresh values are the rest of its range (a page that trains at
    powers of two only: the rest of those powers)."""
    param = spec.param(spec.main)
    if param.kind == "float":  # a slider: the values of its steps
        lo, hi = param.lo, param.hi
        n = round((hi - lo) / param.step)
        fresh = [round(lo + i * param.step, 6) for i in range(n + 1)]
        half, double = param.default / 2, param.default * 2
    else:
        lo, hi = int(param.lo), int(param.hi)
        fresh = range(lo, hi + 1)
        half, double = param.default // 2, param.default * 2
    if param.snap is not None:
        fresh = sorted({param.snap(v) for v in fresh})
    shared = SHARED.get(spec.url_path) or tuple(
        v for v in (half, param.default, double) if lo <= v <= hi
    )
    default = f"{param.default:g}" if param.kind == "float" else param.default
    return Control(param.key, shared, fresh, f"{param.key}={default}&{EVERY_CHART}")


def _pages() -> dict[str, Control]:
    from ui.common.pages import PAGES as SPECS

    return {spec.url_path: main_control(spec) for spec in SPECS if spec.main}


#: The one-chart page (``benchmarks/minimal_page.py``: one number input, one 50-row
#: chart), played as a page of its own to report the CPU a story page's rerun costs
#: against it: ``--page minimal``.
MINIMAL = "minimal"
MINIMAL_SCRIPT = "benchmarks/minimal_page.py"

#: url path -> main control.
PAGES: dict[str, Control] = {
    **_pages(),
    MINIMAL: Control("n", (25, 50, 100, 200), range(2, 501), "n=50"),
}


@dataclass(frozen=True)
class Scenario:
    """A fixed workshop: ``learners`` on ``page`` moving ``control``; with ``once``, each
    changes it once at a uniformly random moment of ``duration`` seconds. ``warm_value``:
    the value the presenter's warm-up session sets once (its run reported on its own);
    ``p95_s``: the budget of the changes' 95th percentile."""

    page: str
    control: Control
    learners: int
    duration: float
    shared: float
    once: bool
    warm_value: int | str | None
    p95_s: float


SCENARIOS: dict[str, Scenario] = {
    "own-sentence": Scenario(
        "real-models",
        Control("text", (), tuple(new_text(i) for i in range(1000)), "head=2&deeper=true"),
        learners=30,
        duration=10.0,
        shared=0.0,
        once=True,
        warm_value=SEEN_TEXT,
        p95_s=2.0,
    ),
}


# --- the server ------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (all its threads), seconds."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # fields from 3 (state) on
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    """Resident set size of process ``pid``, MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


class Server:
    """``streamlit run app.py`` (or ``script``) on a loopback port; a context manager that
    always stops it."""

    def __init__(self, app_root: Path, port: int, script: str = "app.py") -> None:
        self.app_root = app_root
        self.port = port
        self.script = script
        self.log = tempfile.NamedTemporaryFile(
            prefix="streamlit-load-", suffix=".log", delete=False
        )
        self.proc: subprocess.Popen | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def __enter__(self) -> Server:
        cmd = [
            sys.executable, "-m", "streamlit", "run", self.script,
            "--server.headless", "true",
            "--server.address", "127.0.0.1",
            "--server.port", str(self.port),
            "--server.fileWatcherType", "none",
            "--server.runOnSave", "false",
            "--browser.gatherUsageStats", "false",
        ]  # fmt: skip
        self.proc = subprocess.Popen(
            cmd,
            cwd=self.app_root,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C in the terminal reaches us, not the server
        )
        try:
            self._wait_healthy()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _wait_healthy(self) -> None:
        url = f"http://127.0.0.1:{self.port}/_stcore/health"
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"streamlit exited with code {self.proc.returncode}:\n{self.output()[-2000:]}"
                )
            with contextlib.suppress(OSError, urllib.error.URLError):
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        return
            time.sleep(0.2)
        raise RuntimeError(f"streamlit not healthy after {SERVER_START_TIMEOUT_S:.0f} s")

    def output(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text(errors="replace")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.log.close()
        with contextlib.suppress(OSError):
            os.unlink(self.log.name)


def server_errors(output: str) -> list[str]:
    """Tracebacks and logged errors in the server's output (one line each)."""
    lines = output.splitlines()
    errors = []
    for i, line in enumerate(lines):
        if line.startswith("Traceback"):
            # the exception line: the first unindented line after the traceback
            last = next((ln for ln in lines[i + 1 :] if ln and not ln[0].isspace()), line)
            errors.append(f"server traceback: {last[:200]}")
        elif re.search(r"\b(ERROR|CRITICAL)\b", line) and "Traceback" not in line:
            errors.append(f"server log: {line.strip()[:200]}")
    return errors


# --- one learner -----------------------------------------------------------------------


def _protos() -> Any:
    """Streamlit's protobuf modules (imported late: the server must not wait on them)."""
    from streamlit.proto import BackMsg_pb2, ForwardMsg_pb2, NumberInput_pb2, WidgetStates_pb2

    return BackMsg_pb2, ForwardMsg_pb2, NumberInput_pb2, WidgetStates_pb2


#: Element kinds that are widgets with a value state (buttons are triggers: the browser
#: sends them only when clicked).
VALUE_WIDGETS = ("number_input", "slider", "radio", "selectbox", "checkbox", "text_area")
TRIGGER_WIDGETS = ("button", "download_button")
#: Charts with a selection (``ui/common/live.py``: their inputs move in the browser): a
#: learner here never drags them, and the server takes a selection never made as empty.
SELECTION_WIDGETS = ("vega_lite_chart",)


def initial_widget_state(kind: str, proto: Any, prev: Any) -> Any:
    """The state the frontend holds for a widget just drawn: the value the server set
    (``set_value``), else the value the learner already had, else the widget's default."""
    _, _, NumberInput_pb2, WidgetStates_pb2 = _protos()
    if not proto.set_value and prev is not None:
        return prev
    ws = WidgetStates_pb2.WidgetState(id=proto.id)
    if kind == "number_input":
        value = proto.value if proto.set_value else proto.default
        if proto.data_type == NumberInput_pb2.NumberInput.INT:
            ws.int_value = int(value)
        else:
            ws.double_value = value
    elif kind == "slider":
        value = list(proto.value if proto.set_value else proto.default)
        if proto.options:  # select_slider: the values are option indices
            ws.string_array_value.data[:] = [proto.options[int(i)] for i in value]
        else:
            ws.double_array_value.data[:] = value
    elif kind in ("radio", "selectbox"):
        if proto.set_value:
            ws.string_value = proto.raw_value
        elif proto.HasField("default") and proto.options:
            ws.string_value = proto.options[proto.default]
    elif kind == "checkbox":
        ws.bool_value = proto.value if proto.set_value else proto.default
    elif kind == "text_area":
        ws.string_value = proto.value if proto.set_value else proto.default
    return ws


class ConnectionLost(ConnectionError):
    """The server closed a learner's websocket (a replica that died, say)."""


@dataclass
class LearnerStats:
    load_s: float | None = None
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    unknown_widgets: set[str] = field(default_factory=set)
    refs: int = 0  # messages the server sent as a reference to one already received
    fragment_runs: int = 0  # runs that were a fragment's alone (a page's body, a panel)


class Learner:
    """One browser tab: a websocket session on ``page`` opened with ``query``.

    ``headers`` go with the websocket handshake (a balancer's affinity cookie, say);
    ``response_headers`` are the handshake's answer once open. When the server closes the
    connection, ``lost`` is set and a run in flight raises :class:`ConnectionLost`.
    """

    def __init__(
        self,
        base: str,
        page: str,
        query: str,
        timeout: float,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.base = base
        self.page = page
        self.query = query
        self.timeout = timeout
        self.headers = dict(headers or {})
        self.response_headers: Any = None  # websockets' Headers: .get(), .get_all()
        self.lost = asyncio.Event()
        self.stats = LearnerStats()
        self.widgets: dict[str, Any] = {}  # widget id -> WidgetState
        self.drawn: set[str] = set()  # widget ids drawn in the current run
        #: widget id -> the fragment it is drawn in ("" outside any): a change of it
        #: reruns that fragment, as the browser asks (a page's body is one)
        self.fragment_of: dict[str, str] = {}
        self.page_hash = ""
        self.cached: dict[str, int] = {}  # hash of a cacheable message -> run it was last seen
        self.run_index = 0
        self._finished: asyncio.Future | None = None
        self._ws: Any = None
        self._reader: asyncio.Task | None = None

    # messages in ------------------------------------------------------------------------
    def _handle(self, msg: Any) -> None:
        kind = msg.WhichOneof("type")
        if msg.metadata.cacheable and msg.hash:
            self.cached[msg.hash] = self.run_index
        if kind == "ref_hash":
            self.cached[msg.ref_hash] = self.run_index
            self.stats.refs += 1
        elif kind == "new_session":
            self.page_hash = msg.new_session.page_script_hash or self.page_hash
        elif kind == "navigation":
            self.page_hash = msg.navigation.page_script_hash or self.page_hash
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "page_not_found":
            self.stats.errors.append(f"page not found: {msg.page_not_found.page_name}")
        elif kind == "session_event":
            if msg.session_event.HasField("script_compilation_exception"):
                exc = msg.session_event.script_compilation_exception
                self.stats.errors.append(f"compile error: {exc.type}: {exc.message[:200]}")
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            self._element(msg.delta.new_element, msg.delta.fragment_id)
        elif kind == "script_finished":
            self._script_finished(msg.script_finished)
        self.observe(msg)

    def observe(self, msg: Any) -> None:
        """Called with every message from the server, after it is handled (a subclass
        reads more of the page here: texts, buttons, fragments)."""

    def _element(self, element: Any, fragment_id: str = "") -> None:
        kind = element.WhichOneof("type")
        if kind == "exception":
            exc = element.exception
            self.stats.errors.append(f"exception element: {exc.type}: {exc.message[:200]}")
        elif kind in VALUE_WIDGETS:
            proto = getattr(element, kind)
            self.drawn.add(proto.id)
            self.fragment_of[proto.id] = fragment_id
            self.widgets[proto.id] = initial_widget_state(kind, proto, self.widgets.get(proto.id))
        elif kind not in TRIGGER_WIDGETS + SELECTION_WIDGETS and kind is not None:
            proto = getattr(element, kind)
            if hasattr(proto, "id") and hasattr(proto, "form_id") and proto.id:
                self.stats.unknown_widgets.add(kind)

    def _script_finished(self, status: int) -> None:
        _, ForwardMsg_pb2, _, _ = _protos()
        S = ForwardMsg_pb2.ForwardMsg
        if status == S.FINISHED_EARLY_FOR_RERUN:
            return  # st.rerun() or an interrupted run: another run follows
        if status == S.FINISHED_WITH_COMPILE_ERROR:
            self.stats.errors.append("script finished with a compile error")
        # the frontend forgets widgets the finished run did not draw (a fragment's run
        # draws only the fragment: the rest of the page stays)
        if status != S.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:
            self.widgets = {k: v for k, v in self.widgets.items() if k in self.drawn}
        else:
            self.stats.fragment_runs += 1
        self.run_index += 1
        self.cached = {h: r for h, r in self.cached.items() if r >= self.run_index - 2}
        if self._finished is not None and not self._finished.done():
            self._finished.set_result(time.perf_counter())

    async def _read(self) -> None:
        from websockets.exceptions import ConnectionClosed

        _, ForwardMsg_pb2, _, _ = _protos()
        with contextlib.suppress(ConnectionClosed):
            async for data in self._ws:
                msg = ForwardMsg_pb2.ForwardMsg()
                msg.ParseFromString(data)
                self._handle(msg)
        # the server closed the connection (close() cancels this task instead)
        self.lost.set()
        if self._finished is not None and not self._finished.done():
            self._finished.set_exception(ConnectionLost("the server closed the websocket"))
            self._finished.exception()  # retrieved: a run that timed out no longer awaits it

    # messages out -----------------------------------------------------------------------
    def _rerun_msg(
        self, *, first: bool, fragment_id: str = "", triggers: tuple[str, ...] = (), auto=False
    ) -> bytes:
        BackMsg_pb2, _, _, WidgetStates_pb2 = _protos()
        back = BackMsg_pb2.BackMsg()
        cs = back.rerun_script
        cs.query_string = self.query
        if first:
            cs.page_name = self.page
        else:
            cs.page_script_hash = self.page_hash
            states = [*self.widgets.values()]
            states += [WidgetStates_pb2.WidgetState(id=i, trigger_value=True) for i in triggers]
            cs.widget_states.CopyFrom(WidgetStates_pb2.WidgetStates(widgets=states))
            cs.fragment_id, cs.is_auto_rerun = fragment_id, auto
        cs.cached_message_hashes.extend(self.cached)
        ci = cs.context_info
        ci.timezone, ci.timezone_offset, ci.locale = "UTC", 0, "en-US"
        ci.url = f"{self.base}/{self.page}" + (f"?{self.query}" if self.query else "")
        ci.is_embedded, ci.color_scheme = False, "light"
        return back.SerializeToString()

    async def rerun(
        self, *, fragment_id: str = "", triggers: tuple[str, ...] = (), auto: bool = False
    ) -> float | None:
        """Rerun the page as the browser does after an interaction: with every widget's
        state, the ``triggers`` (widget ids of pressed buttons) and, for a widget inside
        a fragment (or the fragment's ``run_every`` timer: ``auto``), its ``fragment_id``.
        The seconds to the end of the run (a fragment's, or the page's when the fragment
        reran the page), or None on timeout; raises :class:`ConnectionLost`."""
        return await self._rerun(first=False, fragment_id=fragment_id, triggers=triggers, auto=auto)

    async def _rerun(self, *, first: bool, **options: Any) -> float | None:
        """Send a rerun; the seconds to the end of the run, or None on timeout.

        Raises :class:`ConnectionLost` if the connection is closed before the run ends.
        """
        from websockets.exceptions import ConnectionClosed

        if self.lost.is_set():
            raise ConnectionLost("the server closed the websocket")
        self.drawn = set()
        self._finished = asyncio.get_running_loop().create_future()
        t0 = time.perf_counter()
        try:
            await self._ws.send(self._rerun_msg(first=first, **options))
        except ConnectionClosed as exc:
            raise ConnectionLost("the server closed the websocket") from exc
        try:
            t1 = await asyncio.wait_for(asyncio.shield(self._finished), self.timeout)
        except TimeoutError:
            self.stats.errors.append(f"timeout: no end of run within {self.timeout:g} s")
            return None
        return t1 - t0

    def control_id(self, key: str) -> str | None:
        return next((wid for wid in self.widgets if wid.endswith(f"-{key}")), None)

    def current(self, key: str) -> int | float | str | None:
        wid = self.control_id(key)
        if wid is None:
            return None
        state = self.widgets[wid]
        kind = state.WhichOneof("value")
        if kind == "double_array_value":  # a slider
            return state.double_array_value.data[0]
        return state.string_value if kind == "string_value" else state.int_value

    # the session ------------------------------------------------------------------------
    async def open(self) -> None:
        from websockets.asyncio.client import connect

        host = self.base.removeprefix("http://")
        t0 = time.perf_counter()
        self._ws = await asyncio.wait_for(
            connect(
                f"ws://{host}/_stcore/stream",
                subprotocols=["streamlit"],
                origin=self.base,
                max_size=None,
                open_timeout=self.timeout,
                additional_headers=self.headers or None,
            ),
            self.timeout,
        )
        self.response_headers = self._ws.response.headers
        self._reader = asyncio.create_task(self._read())
        ran = await self._rerun(first=True)
        if ran is not None:
            self.stats.load_s = time.perf_counter() - t0

    async def change(self, key: str, value: int | float | str) -> float | None:
        """Move the control ``key`` to ``value`` and rerun as the browser does: the fragment
        the control is drawn in (a page's body, ``fragments.page_body``), else the app. The
        seconds to the end of the run, or None on timeout."""
        wid = self.control_id(key)
        if wid is None:
            self.stats.errors.append(f"control {key!r} not on the page")
            return None
        if isinstance(value, str):
            self.widgets[wid].string_value = value
        elif isinstance(value, float):  # a slider
            self.widgets[wid].double_array_value.data[:] = [value]
        else:
            self.widgets[wid].int_value = value
        params = [(k, v) for k, v in urllib.parse.parse_qsl(self.query) if k != key]
        self.query = urllib.parse.urlencode([*params, (key, str(value))])
        latency = await self._rerun(first=False, fragment_id=self.fragment_of.get(wid, ""))
        if latency is not None:
            self.stats.latencies.append(latency)
        return latency

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._ws.close(), 5)


# --- the workshop ----------------------------------------------------------------------


class Values:
    """New values of the control: from the shared list with probability ``shared``,
    else a value no learner has used (drawn without repetition)."""

    def __init__(self, control: Control, shared: float, rng: random.Random) -> None:
        self.control = control
        self.shared = shared
        self.rng = rng
        pool = sorted(set(control.fresh) - set(control.shared))
        rng.shuffle(pool)
        self._fresh: Iterator[int] = iter(pool)

    def next(self, current: int | str | None) -> tuple[int | str, bool]:
        """A value different from ``current``, and whether it came from the shared list."""
        if self.rng.random() < self.shared:
            choices = [v for v in self.control.shared if v != current]
            return self.rng.choice(choices), True
        value = next(self._fresh, None)
        if value is None or value == current:  # pool exhausted: fall back to shared
            return self.next(current) if self.shared > 0 else (self.control.shared[0], True)
        return value, False


@dataclass
class RunResult:
    page: str
    learners: int
    think_s: float
    duration_s: float
    ramp_s: float
    reruns: int = 0
    shared_changes: int = 0
    latency_p50_s: float = float("nan")
    latency_p95_s: float = float("nan")
    latency_max_s: float = float("nan")
    load_p50_s: float = float("nan")
    load_p95_s: float = float("nan")
    load_max_s: float = float("nan")
    loads: int = 0
    errors: list[str] = field(default_factory=list)
    cpu_per_rerun_s: float = float("nan")
    cpu_per_load_s: float = float("nan")
    cores: float = float("nan")
    rss_start_mb: float = float("nan")
    rss_warm_mb: float = float("nan")
    rss_sessions_mb: float = float("nan")
    rss_end_mb: float = float("nan")
    rss_peak_mb: float = float("nan")
    client_cpu_s: float = float("nan")
    window_s: float = float("nan")
    unknown_widgets: list[str] = field(default_factory=list)
    #: the presenter's warm-up change (``Scenario.warm_value``), seconds
    warm_change_s: float = float("nan")
    p95_budget_s: float = BUDGET_P95_S
    #: every change: (seconds into the change phase, value, from the shared list,
    #: latency in s or None when its run did not finish) — where a tail comes from
    changes: list[tuple[float, int | str, bool, float | None]] = field(default_factory=list)
    refs: int = 0
    #: runs that were a fragment's alone: a change of a page's control reruns its body
    fragment_runs: int = 0

    @property
    def missed(self) -> list[str]:
        checks = (
            ("errors", not self.errors),
            ("reruns", self.reruns > 0),
            ("p95", self.latency_p95_s <= self.p95_budget_s),
            ("load p95", self.load_p95_s <= BUDGET_LOAD_P95_S),
            ("RSS", max(self.rss_sessions_mb, self.rss_end_mb) <= BUDGET_RSS_MB),
        )
        return [name for name, ok in checks if not ok]


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by linear interpolation; NaN for no values."""
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


async def _workshop(
    server: Server,
    res: RunResult,
    *,
    control: Control,
    query: str,
    shared: float,
    timeout: float,
    seed: int,
    warmup: int,
    once: bool = False,
    warm_value: int | str | None = None,
) -> None:
    rng = random.Random(seed)
    values = Values(control, shared, random.Random(seed + 1))
    base = f"http://127.0.0.1:{server.port}"
    page_name = "" if res.page == MINIMAL else res.page  # the one-chart page is the app's only page
    learners = [Learner(base, page_name, query, timeout) for _ in range(res.learners)]
    rss_peak = [rss_mb(server.pid)]

    async def sample_rss() -> None:
        while True:
            await asyncio.sleep(1.0)
            rss_peak.append(rss_mb(server.pid))

    sampler = asyncio.create_task(sample_rss())
    try:
        # 0. the presenter opens the link before sharing it (modules imported, the
        #    link's own values computed); that session is closed again
        res.rss_start_mb = rss_mb(server.pid)
        for _ in range(warmup):
            presenter = Learner(base, page_name, query, timeout)
            try:
                await presenter.open()
                if warm_value is not None:
                    latency = await presenter.change(control.key, warm_value)
                    res.warm_change_s = float("nan") if latency is None else latency
            finally:
                await presenter.close()
            res.errors.extend(presenter.stats.errors)
        res.rss_warm_mb = rss_mb(server.pid)

        # 1. everybody opens the page within the ramp
        cpu0 = cpu_seconds(server.pid)
        step = res.ramp_s / max(res.learners - 1, 1)

        async def open_at(i: int, learner: Learner) -> None:
            await asyncio.sleep(i * step)
            try:
                await learner.open()
            except (OSError, TimeoutError) as exc:
                learner.stats.errors.append(f"connect: {exc!r}")

        await asyncio.gather(*(open_at(i, lr) for i, lr in enumerate(learners)))
        loads = [lr.stats.load_s for lr in learners if lr.stats.load_s is not None]
        res.loads = len(loads)
        res.cpu_per_load_s = (cpu_seconds(server.pid) - cpu0) / max(len(loads), 1)
        res.load_p50_s, res.load_p95_s = percentile(loads, 0.5), percentile(loads, 0.95)
        res.load_max_s = max(loads, default=float("nan"))
        res.rss_sessions_mb = rss_mb(server.pid)

        # 2. every learner moves the control every think seconds (±50 %) until the end
        cpu1, client1, t_start = cpu_seconds(server.pid), time.process_time(), time.monotonic()
        end = t_start + res.duration_s
        shared_count = 0

        async def learn(learner: Learner, delay: float) -> None:
            nonlocal shared_count
            if learner._ws is None or learner.stats.load_s is None:
                return
            await asyncio.sleep(delay)
            while time.monotonic() < end:
                value, was_shared = values.next(learner.current(control.key))
                shared_count += was_shared
                at = time.monotonic() - t_start
                try:
                    latency = await learner.change(control.key, value)
                except ConnectionLost as exc:
                    learner.stats.errors.append(f"connection lost: {exc}")
                    return
                res.changes.append((round(at, 3), value, was_shared, latency))
                if once:
                    break
                pause = res.think_s * rng.uniform(0.5, 1.5)
                if time.monotonic() + pause >= end:
                    break
                await asyncio.sleep(pause)

        # the first change of each learner falls anywhere in its first think period (with
        # ``once``, its only change anywhere in the duration)
        first = res.duration_s if once else res.think_s
        await asyncio.gather(*(learn(lr, rng.uniform(0, first)) for lr in learners))
        res.window_s = time.monotonic() - t_start
        cpu2 = cpu_seconds(server.pid)
        res.client_cpu_s = time.process_time() - client1
        lat = [x for lr in learners for x in lr.stats.latencies]
        res.reruns, res.shared_changes = len(lat), shared_count
        res.latency_p50_s, res.latency_p95_s = percentile(lat, 0.5), percentile(lat, 0.95)
        res.latency_max_s = max(lat, default=float("nan"))
        res.cpu_per_rerun_s = (cpu2 - cpu1) / len(lat) if lat else float("nan")
        res.cores = (cpu2 - cpu1) / res.window_s
        res.rss_end_mb = rss_mb(server.pid)
        res.rss_peak_mb = max([*rss_peak, res.rss_end_mb])
    finally:
        sampler.cancel()
        with contextlib.suppress(BaseException):
            await sampler
        await asyncio.gather(*(lr.close() for lr in learners), return_exceptions=True)
        for lr in learners:
            res.errors.extend(lr.stats.errors)
            res.refs += lr.stats.refs
            res.fragment_runs += lr.stats.fragment_runs
            res.unknown_widgets = sorted(set(res.unknown_widgets) | lr.stats.unknown_widgets)


def run_load(
    page: str,
    learners: int,
    *,
    think: float = 6.0,
    duration: float = 60.0,
    ramp: float = 2.0,
    shared: float = 0.5,
    timeout: float = 30.0,
    seed: int = 0,
    app_root: Path = REPO_ROOT,
    query: str | None = None,
    warmup: int = 1,
    control: Control | None = None,
    once: bool = False,
    warm_value: int | str | None = None,
    p95_budget: float = BUDGET_P95_S,
) -> RunResult:
    """One workshop on a freshly started server; see the module docstring. ``control``
    (default: the page's main control of :data:`PAGES`), ``once``, ``warm_value`` and
    ``p95_budget`` as in :class:`Scenario`."""
    control = PAGES[page] if control is None else control
    res = RunResult(page, learners, think, duration, ramp, p95_budget_s=p95_budget)
    bound = ramp + duration + 3 * timeout + 30  # every phase has its own timeout too
    script = MINIMAL_SCRIPT if page == MINIMAL else "app.py"
    root = REPO_ROOT if page == MINIMAL else Path(app_root)
    with Server(root, free_port(), script) as server:
        coro = _workshop(
            server,
            res,
            control=control,
            query=control.query if query is None else query,
            shared=shared,
            timeout=timeout,
            seed=seed,
            warmup=warmup,
            once=once,
            warm_value=warm_value,
        )
        try:
            asyncio.run(asyncio.wait_for(coro, bound))
        except TimeoutError:
            res.errors.append(f"benchmark did not finish within {bound:.0f} s")
        time.sleep(0.5)  # let the server flush its log
        res.errors.extend(server_errors(server.output()))
    return res


# --- report ----------------------------------------------------------------------------


def _fmt(x: float, spec: str = ".2f") -> str:
    return "—" if x != x else format(x, spec)


def print_table(results: list[RunResult]) -> None:
    head = (
        f"{'page':<11} {'N':>3} {'reruns':>6} {'p50 s':>6} {'p95 s':>6} {'max s':>6} "
        f"{'load p50':>8} {'p95':>5} {'max':>5} {'CPU/rerun':>9} {'CPU/load':>8} "
        f"{'cores':>5} {'RSS start/warm/all/end MB':>26} {'errors':>6}  budgets"
    )
    print(head)
    print("-" * len(head))
    for r in results:
        rss = f"{r.rss_start_mb:.0f}/{r.rss_warm_mb:.0f}/{r.rss_sessions_mb:.0f}/{r.rss_end_mb:.0f}"
        missed = ", ".join(r.missed) or "ok"
        print(
            f"{r.page:<11} {r.learners:>3} {r.reruns:>6} {_fmt(r.latency_p50_s):>6} "
            f"{_fmt(r.latency_p95_s):>6} {_fmt(r.latency_max_s):>6} {_fmt(r.load_p50_s):>8} "
            f"{_fmt(r.load_p95_s):>5} {_fmt(r.load_max_s):>5} "
            f"{_fmt(r.cpu_per_rerun_s * 1000, '.0f') + ' ms':>9} "
            f"{_fmt(r.cpu_per_load_s * 1000, '.0f') + ' ms':>8} {_fmt(r.cores):>5} "
            f"{rss:>26} {len(r.errors):>6}  {missed}"
        )
    for r in results:
        for err in dict.fromkeys(r.errors):  # each distinct error once
            print(f"  {r.page} N={r.learners}: {err} (×{r.errors.count(err)})")
        if r.unknown_widgets:
            print(f"  {r.page}: widgets without a state here: {', '.join(r.unknown_widgets)}")


def _csv(text: str, kind: type) -> list:
    return [kind(x) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--page", default="saturation", help=f"comma list of {', '.join(PAGES)}")
    ap.add_argument("--learners", default="30", help="comma list, e.g. 1,10,30")
    ap.add_argument("--think", type=float, default=6.0, help="seconds between changes (±50 %%)")
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of changes")
    ap.add_argument("--ramp", type=float, default=2.0, help="learners open the page within")
    ap.add_argument("--shared", type=float, default=0.5, help="share of changes to common values")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds a run may take")
    ap.add_argument("--query", default=None, help="deep link query string (default: per page)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--warmup", type=int, default=1, help="sessions that open the link first (0: cold)"
    )
    ap.add_argument("--app-root", type=Path, default=REPO_ROOT)
    ap.add_argument("--json", nargs="?", const="-", default=None, help="write results (- stdout)")
    ap.add_argument(
        "--scenario",
        choices=sorted(SCENARIOS),
        default=None,
        help="a fixed workshop (sets the page, control, learners, duration and budget)",
    )
    args = ap.parse_args(argv)
    if not (args.app_root / "app.py").is_file():
        ap.error(f"--app-root: no app.py in {args.app_root}")
    if args.scenario is not None:
        return run_scenario(SCENARIOS[args.scenario], args)

    pages = _csv(args.page, str)
    unknown = [p for p in pages if p not in PAGES]
    if unknown:
        ap.error(f"--page: unknown {', '.join(unknown)}; known: {', '.join(PAGES)}")
    results = []
    for page in pages:
        for n in _csv(args.learners, int):
            res = run_load(
                page,
                n,
                think=args.think,
                duration=args.duration,
                ramp=args.ramp,
                shared=args.shared,
                timeout=args.timeout,
                seed=args.seed,
                app_root=args.app_root,
                query=args.query,
                warmup=args.warmup,
            )
            results.append(res)
            if args.json != "-":
                print_table([res])
    if args.json is not None:
        payload = json.dumps([asdict(r) | {"missed": r.missed} for r in results], indent=2)
        if args.json == "-":
            print(payload)
        else:
            Path(args.json).write_text(payload + "\n")
    if args.json != "-" and len(results) > 1:
        print()
        print_table(results)
    return 1 if any(r.missed for r in results) else 0


def run_scenario(sc: Scenario, args: argparse.Namespace) -> int:
    """One run of scenario ``sc`` (the other options: timeout, seed, app root, JSON)."""
    res = run_load(
        sc.page,
        sc.learners,
        duration=sc.duration,
        ramp=args.ramp,
        shared=sc.shared,
        timeout=args.timeout,
        seed=args.seed,
        app_root=args.app_root,
        query=sc.control.query,
        warmup=1,
        control=sc.control,
        once=sc.once,
        warm_value=sc.warm_value,
        p95_budget=sc.p95_s,
    )
    if args.json is not None:
        payload = json.dumps([asdict(res) | {"missed": res.missed}], indent=2)
        if args.json == "-":
            print(payload)
            return 1 if res.missed else 0
        Path(args.json).write_text(payload + "\n")
    print_table([res])
    print(
        f"  warm change (the presenter's first {sc.control.key}): {res.warm_change_s:.2f} s; "
        f"budget p95 <= {sc.p95_s:g} s"
    )
    return 1 if res.missed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # the server was stopped on the way out
        print("interrupted", file=sys.stderr)
        sys.exit(130)
