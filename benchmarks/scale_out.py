"""More learners than one server holds: R replicas behind HAProxy, L learners, one link.

Starts ``deploy/run-local.sh R`` on free loopback ports (Redis, R replicas of the app,
HAProxy in front; ``benchmarks/deployment.py``) and plays L learners through the
balancer, each speaking ``benchmarks/load.py``'s websocket protocol (its ``Learner``)
and doing what a browser tab does:

0. Warm-up. Each replica is opened once on its own port (``--warmup`` sessions), as
   load.py's presenter opens its one server before sharing the link.
1. Load. The learner GETs the page's URL through the balancer: HAProxy picks the
   replica with the fewest connections, names it in the ``X-Replica`` header and sets
   the affinity cookie. With that cookie it opens the websocket and runs the page
   (load.py's first run). Learners arrive evenly within ``--ramp`` seconds. Page-load
   time as in load.py: websocket opened to the end of the first run.
2. Changes, as in load.py: every ``--think`` seconds (±50 %) the page's main control
   moves, about ``--shared`` of the values being ones others chose.
3. ``--kill-one``: in the middle of the change phase the replica holding the most
   learners is killed (SIGKILL). Their websockets close. Each learner reconnects as
   Streamlit's frontend does: it polls ``/_stcore/health`` through the balancer with
   its now stale cookie until a replica answers (HAProxy sends it to another and sets
   that one's cookie), opens a new websocket and reruns the page from its URL, whose
   query string must bring its control back to the value it had. A change in flight on
   the killed replica is counted as interrupted, not as an error; a reconnection's time
   runs from the close to the end of that first run on the new replica. A connection
   closed by a replica that was not killed is an error.
4. One room answer each. Before the learners arrive a presenter (``present=1``, through
   the balancer) opens a room; the learners' URL carries its ``room=CODE``. At a random
   moment of the change phase each learner chooses an option on the page's card
   (:data:`ROOM_QUESTIONS`) and locks it in; the answer is *acknowledged* once its card
   says it is in the room's count. A learner whose replica is killed meanwhile
   reconnects and answers again (its id, in its URL, makes it the same answer). At the
   end the benchmark reads the room's count from Redis through the app's store
   interface, with the presenter's key: *recorded*; ``lost`` = acknowledged − recorded.
5. ``--restart-redis``: at 40 % of the change phase Redis gets SIGTERM (a restart: it
   writes its append-only log and exits) and run-local.sh starts it again
   ``REDIS_RESTART_S`` later (:data:`REDIS_DOWN_THINKS` think times). Every third
   learner answers at its first change while Redis is down: its card must say "not
   shared", and it presses "Send my answer again" every :data:`RESEND_PAUSE_S` until its
   card says shared. The other learners' pages must keep working meanwhile, and every
   answer acknowledged before the stop must still be counted after it.

Reported: learners per replica at load (the ``X-Replica`` header of each learner's
websocket handshake) beside HAProxy's view from its stats socket; change latency and
page loads as load.py; reconnections; CPU over the change phase of the replicas (also
per completed change), HAProxy, Redis and this generator (all on the same machine), and
errors (load.py's, tracebacks in the replicas' logs, failed or unexpected
reconnections, controls not restored). The last line is exactly::

    SCALE replicas=<R> learners=<L> errors=<e> p95_ms=<p> load_p95_ms=<lp> per_replica=<n1,n2,…> recorded=<r> lost=<x>

Budgets (exit status 1 if one is missed): no errors, no lost answers, every card's
answer shared or refused (none showing something else), every learner
still connected at the end, every replica at least half its fair share of the learners
at load (25 % for two), change p95 ≤ 1 s and page-load p95 ≤ 3 s (load.py's).

Usage (from the repo root)::

    python benchmarks/scale_out.py --replicas 2 --learners 60 --page saturation
    python benchmarks/scale_out.py --replicas 2 --learners 60 --page saturation --kill-one
    python benchmarks/scale_out.py --replicas 2 --learners 60 --page saturation --restart-redis
"""

from __future__ import annotations

import os

# as load.py: the replicas inherit the environment
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import asyncio
import contextlib
import json
import random
import sys
import time
import tomllib
import urllib.parse
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

import rooms
from benchmarks import deployment, load, room_load
from benchmarks.deployment import LocalDeployment

#: Seconds between a learner's presses of "Send my answer again" while its card says
#: "not shared" (the store is down).
RESEND_PAUSE_S = 2.0

#: Seconds a stopped Redis stays down before run-local.sh starts it again, in units of
#: the think time (and at least 4 s): every learner changes its control at least once
#: meanwhile, so the learners chosen to answer while it is down do.
REDIS_DOWN_THINKS = 1.6

#: Seconds between a reconnecting learner's health probes (uniform; Streamlit's
#: frontend retries with a back-off that starts near half a second).
PROBE_PAUSE_S = (0.25, 0.75)


# --- one browser tab behind the balancer --------------------------------------------------


@dataclass
class Fault:
    """The replica killed in the run, when, and how long HAProxy took to see it."""

    replica: str | None = None
    at_s: float = float("nan")  # seconds into the change phase
    marked_down_s: float = float("nan")  # kill to HAProxy's DOWN
    learners_on_it: int = 0


@dataclass
class RedisFault:
    """Redis stopped in the run (SIGTERM, as a restart does) and started again by
    run-local.sh: when, and for how long no room store answered."""

    at_s: float = float("nan")  # seconds into the change phase
    down_s: float = float("nan")  # stop to answering PING again
    back_s: float = float("nan")  # the stop returned to answering PING again


class Tab:
    """One learner's browser tab: its affinity cookie, its URL, and its websocket
    sessions (one, plus one after each reconnection), each a :class:`load.Learner`."""

    def __init__(self, base: str, page: str, query: str, timeout: float) -> None:
        self.base = base
        self.page = page
        self.query = query
        self.timeout = timeout
        self.cookie: str | None = None
        self.sessions: list[load.Learner] = []
        self.replicas: list[str | None] = []  # the replica of each session
        self.reconnect_s: list[float] = []
        self.interrupted = 0  # changes whose run a killed replica never finished
        self.restored = 0  # reconnections that brought the control back to its value
        self.errors: list[str] = []
        self.failed = False  # lost its connection for good
        self.answered = False  # its room answer was given (or tried)
        self.finished = False

    @property
    def session(self) -> load.Learner:
        return self.sessions[-1]

    @property
    def connected(self) -> bool:
        return bool(self.sessions) and not self.session.lost.is_set() and not self.failed

    async def get(self, path: str) -> deployment.Response:
        """A GET through the balancer with this tab's cookie; keeps the cookie it sets."""
        resp = await asyncio.to_thread(deployment.get, self.base + path, self.cookie, self.timeout)
        self.cookie = deployment.affinity_cookie(resp.headers) or self.cookie
        return resp

    async def _new_session(self) -> load.Learner:
        headers = {"Cookie": self.cookie} if self.cookie else None
        session = room_load.Tab(self.base, self.page, self.query, self.timeout, headers)
        if self.sessions:  # the same browser tab: its sessionStorage keeps the learner id
            session.tab_id = self.sessions[0].tab_id
        self.sessions.append(session)
        self.replicas.append(None)
        await session.open()
        if session.response_headers is not None:
            self.cookie = deployment.affinity_cookie(session.response_headers) or self.cookie
            self.replicas[-1] = session.response_headers.get(deployment.REPLICA_HEADER)
        return session

    async def open(self) -> None:
        """The first visit: the page's HTML, then its websocket and first run."""
        resp = await self.get(f"/{self.page}?{self.query}")
        if resp.status != 200:
            self.errors.append(f"page GET: HTTP {resp.status}")
            self.failed = True
            return
        await self._new_session()

    async def reconnect(self, key: str, fault: Fault, give_up_at: float) -> bool:
        """After the websocket closed: probe, reconnect, rerun the page from the URL."""
        t0 = time.perf_counter()
        old = self.session
        old_replica = self.replicas[-1]
        await old.close()
        if fault.replica is None or old_replica != fault.replica:
            self.errors.append(f"unexpected disconnect from {old_replica}")
        self.query = old.query  # the URL, which every change updated
        wanted = dict(urllib.parse.parse_qsl(self.query)).get(key)
        while True:
            await asyncio.sleep(random.uniform(*PROBE_PAUSE_S))
            try:
                if (await self.get("/_stcore/health")).status == 200:
                    session = await self._new_session()
                    if session.stats.load_s is not None:
                        break
            except (OSError, TimeoutError, load_ws_errors()):
                pass  # no replica answered yet: probe again
            if time.monotonic() > give_up_at:
                self.errors.append("reconnect: no replica answered")
                self.failed = True
                return False
        self.reconnect_s.append(time.perf_counter() - t0)
        now = self.session.current(key)
        if wanted is not None and now == int(wanted):
            self.restored += 1
        else:
            self.errors.append(f"reconnect: {key} came back as {now}, the URL says {wanted}")
        return True

    async def pause(self, seconds: float, key: str, fault: Fault, give_up_at: float) -> None:
        """Think for ``seconds``; a closed websocket is reconnected at once."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0 and not self.failed:
            try:
                await asyncio.wait_for(self.session.lost.wait(), left)
            except TimeoutError:
                return
            await self.reconnect(key, fault, give_up_at)

    def all_stats(self) -> list[load.LearnerStats]:
        return [s.stats for s in self.sessions]


def load_ws_errors() -> type[Exception]:
    """websockets' base exception (a handshake refused, …), imported late as load.py does."""
    from websockets.exceptions import WebSocketException

    return WebSocketException


# --- one room answer each -------------------------------------------------------------

#: The card each learner answers, by page: its question key and its settings group at the
#: page's defaults (the ``about`` the card sends; the main control the learners move is not
#: in it, so every learner's answer falls in the presenter's group). Pages not listed run
#: without room answers.
ROOM_QUESTIONS = {
    "saturation": ("saturation_mean_max", (10, 0)),  # (n_keys, seed)
    room_load.PAGE: (room_load.QUESTION, room_load.ABOUT),
}


def _catalog(key: str) -> str:
    """An English text of the app's room messages (``ui/common/locales/en.toml``)."""
    with open(REPO_ROOT / "ui" / "common" / "locales" / "en.toml", "rb") as f:
        return tomllib.load(f)["room"][key]


#: What a learner's card says once its answer is in the room's count, and when the store
#: did not answer (first sentence of each: the card's texts are compared by prefix).
SHARED = _catalog("shared").split(".")[0]
NOT_SHARED = _catalog("not_shared_unavailable").split(":")[0]


@dataclass
class RoomTally:
    """A run's room answers. An answer is acknowledged once the learner's card says it
    was shared; ``lost`` counts acknowledged answers the store does not hold at the end.
    ``refused``: answers whose card said "not shared" (the store was down); each such
    learner presses "Send my answer again" until its card says shared (``resent``)."""

    acknowledged: int = 0
    recorded: int = 0
    in_flight_on_killed: int = 0  # sent to the killed replica, not acknowledged
    refused: int = 0
    resent: int = 0
    unanswered: int = 0  # neither shared nor refused (the card showed something else)
    question: str = ""
    note: str = ""

    @property
    def lost(self) -> int:
        return max(self.acknowledged - self.recorded, 0)


class Presenter:
    """The presenter's tab through the balancer, in presenter mode: it opens the room,
    shows its take-over link on purpose (which carries the presenter key: the benchmark
    reads the count with it, and the tab survives a kill of its replica by taking the room
    over again), and reveals at the end."""

    def __init__(self, base: str, page: str, timeout: float) -> None:
        self.tab = room_load.Tab(base, page, "present=1", timeout)
        self.code = ""
        self.key = ""

    async def open_room(self) -> str:
        query = await room_load.open_room(self.tab)
        if query is None:
            raise RuntimeError(f"the presenter's page shows no join link: {self.tab.stats.errors}")
        self.code = dict(urllib.parse.parse_qsl(query))["room"]
        await self.toggle("room_takeover")
        private = next((x for x in self.tab.texts if "room_key=" in x), None)
        if private is None:
            raise RuntimeError("the presenter's take-over link is not shown")
        query = urllib.parse.urlsplit(private).query
        self.key = dict(urllib.parse.parse_qsl(query))["room_key"]
        return self.code

    async def toggle(self, key: str) -> None:
        """Switch the toggle ``key`` on (its fragment reruns, or the page)."""
        tab = self.tab
        wid = tab.widget_id(key, tab.fragment_of)
        if wid is None or wid not in tab.widgets:
            raise RuntimeError(f"toggle {key!r} not on the presenter's page")
        tab.widgets[wid].bool_value = True
        tab.texts = []
        await tab.rerun(fragment_id=tab.fragment_of[wid])

    async def close(self) -> None:
        await self.tab.close()


async def one_room_answer(tab: Tab, question: str, rng: random.Random) -> str:
    """``tab`` chooses an option on ``question``'s card and locks it in, as a learner does
    (room_load.py's steps). Returns ``"shared"`` once its card says the answer is in the
    room's count, ``"refused"`` if it says the store did not answer, else ``"other"``.
    A ``load.ConnectionLost`` (its replica killed) propagates."""
    session = tab.session
    assert isinstance(session, room_load.Tab)
    wid = session.widget_id(f"{question}_guess", session.fragment_of)
    if wid is None or wid not in session.options:
        session.stats.errors.append(f"no card {question!r} on the page")
        return "other"
    await session.choose(f"{question}_guess", rng.choice(session.options[wid]))
    if session.lost.is_set():
        raise load.ConnectionLost("closed while choosing")
    await session.press(f"{question}_reveal")
    return _outcome(session)


async def send_again(tab: Tab, question: str) -> str:
    """Press the card's "Send my answer again"; the card's outcome as :func:`one_room_answer`."""
    session = tab.session
    assert isinstance(session, room_load.Tab)
    await session.press(f"{question}_resend")
    return _outcome(session)


def _outcome(session: room_load.Tab) -> str:
    if session.lost.is_set():
        raise load.ConnectionLost("closed while locking in")
    if any(x.startswith(SHARED) for x in session.texts):
        return "shared"
    if any(x.startswith(NOT_SHARED) for x in session.texts):
        return "refused"
    return "other"


def recorded_answers(dep: LocalDeployment, presenter: Presenter, question: str) -> int:
    """The answers the room store holds for ``question`` in the presenter's settings group
    at the end of the run: Redis at ``dep.state["redis"]["url"]``, read through the app's
    store interface with the presenter's key."""
    _, about = ROOM_QUESTIONS[presenter.tab.page]
    store = rooms.open_store(url=dep.state["redis"]["url"])
    return store.counts(presenter.code, question, rooms.group_of(about), key=presenter.key).total


# --- the run ------------------------------------------------------------------------------


@dataclass
class ScaleResult:
    page: str
    replicas: int
    learners: int
    think_s: float
    duration_s: float
    ramp_s: float
    kill_one: bool
    restart_redis: bool = False
    redis_fault: RedisFault = field(default_factory=RedisFault)
    per_replica: dict[str, int] = field(default_factory=dict)  # learners at load
    haproxy: dict[str, dict[str, str]] = field(default_factory=dict)  # status, scur, stot
    reruns: int = 0
    latency_p50_s: float = float("nan")
    latency_p95_s: float = float("nan")
    latency_max_s: float = float("nan")
    load_p50_s: float = float("nan")
    load_p95_s: float = float("nan")
    load_max_s: float = float("nan")
    loads: int = 0
    finished: int = 0
    fault: Fault = field(default_factory=Fault)
    reconnections: int = 0
    restored: int = 0
    reconnect_p50_s: float = float("nan")
    reconnect_max_s: float = float("nan")
    interrupted: int = 0
    window_s: float = float("nan")
    replicas_cpu_s: float = float("nan")
    haproxy_cpu_s: float = float("nan")
    redis_cpu_s: float = float("nan")
    client_cpu_s: float = float("nan")
    replica_rss_mb: dict[str, float] = field(default_factory=dict)  # at the end, alive ones
    rooms: RoomTally = field(default_factory=RoomTally)
    errors: list[str] = field(default_factory=list)
    uptime: str = ""

    @property
    def cpu_per_rerun_s(self) -> float:
        return self.replicas_cpu_s / self.reruns if self.reruns else float("nan")

    @property
    def missed(self) -> list[str]:
        total = sum(self.per_replica.values())
        fair = total / self.replicas if self.replicas else 0
        counts = [self.per_replica.get(f"r{k + 1}", 0) for k in range(self.replicas)]
        checks = (
            ("errors", not self.errors),
            ("lost", self.rooms.lost == 0),
            ("answered", not self.rooms.question or self.rooms.unanswered == 0),
            ("finished", self.finished == self.learners),
            ("balance", total > 0 and min(counts) >= fair / 2),
            ("p95", self.latency_p95_s <= load.BUDGET_P95_S),
            ("load p95", self.load_p95_s <= load.BUDGET_LOAD_P95_S),
        )
        return [name for name, ok in checks if not ok]

    def scale_line(self) -> str:
        per = ",".join(str(self.per_replica.get(f"r{k + 1}", 0)) for k in range(self.replicas))
        return (
            f"SCALE replicas={self.replicas} learners={self.learners} errors={len(self.errors)} "
            f"p95_ms={_ms(self.latency_p95_s)} load_p95_ms={_ms(self.load_p95_s)} "
            f"per_replica={per} recorded={self.rooms.recorded} lost={self.rooms.lost}"
        )


def _ms(seconds: float) -> str:
    return "nan" if seconds != seconds else str(round(seconds * 1000))


def _uptime() -> str:
    with contextlib.suppress(OSError):
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    return "?"


async def _warm_up(dep: LocalDeployment, page: str, query: str, timeout: float, n: int) -> None:
    for rep in dep.state["replicas"]:
        for _ in range(n):
            session = load.Learner(f"http://127.0.0.1:{rep['port']}", page, query, timeout)
            try:
                await session.open()
            finally:
                await session.close()
            if session.stats.errors:
                raise RuntimeError(f"warm-up on {rep['name']}: {session.stats.errors}")


async def _scale(
    dep: LocalDeployment,
    res: ScaleResult,
    *,
    control: load.Control,
    query: str,
    shared: float,
    timeout: float,
    seed: int,
    warmup: int,
) -> None:
    rng = random.Random(seed)
    values = load.Values(control, shared, random.Random(seed + 1))
    question = ROOM_QUESTIONS[res.page][0] if res.page in ROOM_QUESTIONS else None
    presenter = Presenter(dep.url, res.page, timeout) if question is not None else None
    tabs: list[Tab] = []
    fault = res.fault
    pids = dep.pids()
    try:
        await _warm_up(dep, res.page, query, timeout, warmup)
        if presenter is not None:
            res.rooms.question = question
            query = f"{query}&room={await presenter.open_room()}"
        tabs = [Tab(dep.url, res.page, query, timeout) for _ in range(res.learners)]

        # 1. everybody opens the page within the ramp, through the balancer
        step = res.ramp_s / max(res.learners - 1, 1)

        async def open_at(i: int, tab: Tab) -> None:
            await asyncio.sleep(i * step)
            try:
                await tab.open()
            except (OSError, TimeoutError, load_ws_errors()) as exc:
                tab.errors.append(f"connect: {exc!r}")
                tab.failed = True

        await asyncio.gather(*(open_at(i, tab) for i, tab in enumerate(tabs)))
        loads = [t.sessions[0].stats.load_s for t in tabs if t.sessions]
        loads = [x for x in loads if x is not None]
        res.loads = len(loads)
        res.load_p50_s, res.load_p95_s = load.percentile(loads, 0.5), load.percentile(loads, 0.95)
        res.load_max_s = max(loads, default=float("nan"))
        res.per_replica = dict(sorted(Counter(t.replicas[0] for t in tabs if t.replicas).items()))
        res.haproxy = {
            name: {k: row[k] for k in ("status", "scur", "stot")}
            for name, row in dep.servers().items()
        }

        # 2. changes, and 3. a replica killed half-way through them
        cpu0 = {name: load.cpu_seconds(pid) for name, pid in pids.items()}
        client0, t_start = time.process_time(), time.monotonic()
        end = t_start + res.duration_s
        give_up_at = end + 3 * timeout
        cpu_killed: dict[str, float] = {}

        async def kill_one() -> None:
            await asyncio.sleep(res.duration_s / 2)
            held = Counter(t.replicas[-1] for t in tabs if t.connected)
            name = max(dep.replica_names(), key=lambda n: (held[n], -int(n[1:])))
            fault.replica, fault.learners_on_it = name, held[name]
            fault.at_s = time.monotonic() - t_start
            cpu_killed[name] = load.cpu_seconds(pids[name])
            dep.kill_replica(name)
            fault.marked_down_s = await asyncio.to_thread(dep.wait_status, name, "DOWN", 30.0)

        redis_down = asyncio.Event()  # set while Redis is stopped (--restart-redis)
        answer_rng = random.Random(seed + 3)  # the options chosen

        async def kill_redis() -> None:
            """Stop Redis at 40 % of the phase; run-local.sh starts it again."""
            await asyncio.sleep(0.4 * res.duration_s)
            rf = res.redis_fault
            rf.at_s = time.monotonic() - t_start
            t0 = time.monotonic()
            await asyncio.to_thread(dep.stop_redis)
            redis_down.set()
            rf.back_s = await asyncio.to_thread(dep.wait_redis, 60.0)
            rf.down_s = time.monotonic() - t0
            redis_down.clear()

        async def answer(tab: Tab) -> None:
            """4. the room answer, once per learner; after "not shared" (the store was
            down) it sends it again every few seconds until its card says shared."""
            tab.answered = True
            for _attempt in range(2):  # a second time after its replica was killed
                try:
                    outcome = await one_room_answer(tab, question, answer_rng)
                    if outcome == "refused":
                        res.rooms.refused += 1
                        while outcome == "refused" and time.monotonic() < give_up_at:
                            await tab.pause(RESEND_PAUSE_S, control.key, fault, give_up_at)
                            outcome = await send_again(tab, question)
                        res.rooms.resent += outcome == "shared"
                    res.rooms.acknowledged += outcome == "shared"
                    res.rooms.unanswered += outcome == "other"
                    return
                except load.ConnectionLost:
                    if tab.replicas[-1] == fault.replica:
                        res.rooms.in_flight_on_killed += 1
                    if not await tab.reconnect(control.key, fault, give_up_at):
                        return

        def _due(answer_at: float | asyncio.Event) -> bool:
            if isinstance(answer_at, asyncio.Event):
                return answer_at.is_set()
            return time.monotonic() >= answer_at

        async def learn(tab: Tab, delay: float, answer_at: float | asyncio.Event) -> None:
            if not tab.connected or tab.session.stats.load_s is None:
                return
            await tab.pause(delay, control.key, fault, give_up_at)
            while time.monotonic() < end and not tab.failed:
                value, _ = values.next(tab.session.current(control.key))
                try:
                    await tab.session.change(control.key, value)
                except load.ConnectionLost:
                    tab.interrupted += 1
                    await tab.reconnect(control.key, fault, give_up_at)
                if question is not None and not tab.answered and _due(answer_at):
                    await answer(tab)
                pause = res.think_s * rng.uniform(0.5, 1.5)
                if time.monotonic() + pause >= end:
                    break
                await tab.pause(pause, control.key, fault, give_up_at)
            if question is not None and not tab.answered and not tab.failed:
                await answer(tab)  # its moment fell after its last change
            tab.finished = tab.connected

        faults = [kill_one()] if res.kill_one else []
        if res.restart_redis:
            faults.append(kill_redis())
        faulting = [asyncio.create_task(f) for f in faults]
        # the first change of each learner falls in its first think period; its room
        # answer, if any, after its first change past a random moment of the phase (or
        # at its end); with --restart-redis, every third learner answers while Redis is
        # down instead (at its first change after the stop)
        moment_rng = random.Random(seed + 2)  # its own stream: the changes stay load.py's

        def moment(i: int) -> float | asyncio.Event:
            if res.restart_redis and i % 3 == 0:
                return redis_down
            return t_start + moment_rng.uniform(0, end - t_start)

        await asyncio.gather(
            *(learn(t, rng.uniform(0, res.think_s), moment(i)) for i, t in enumerate(tabs))
        )
        for task in faulting:
            await task
        res.window_s = time.monotonic() - t_start
        res.client_cpu_s = time.process_time() - client0
        if res.restart_redis:  # the Redis measured at the start is gone
            cpu_killed["redis"] = float("nan")
        cpu1 = {
            name: cpu_killed[name] if name in cpu_killed else load.cpu_seconds(pid)
            for name, pid in pids.items()
        }
        res.replicas_cpu_s = sum(cpu1[n] - cpu0[n] for n in dep.replica_names())
        res.haproxy_cpu_s = cpu1["haproxy"] - cpu0["haproxy"]
        res.redis_cpu_s = cpu1["redis"] - cpu0["redis"]
        res.replica_rss_mb = {
            n: round(load.rss_mb(pids[n]), 1) for n in dep.replica_names() if n not in cpu_killed
        }
        if presenter is not None:
            res.rooms.recorded = recorded_answers(dep, presenter, question)
    finally:
        sessions = [s for t in tabs for s in t.sessions]
        if presenter is not None:
            sessions.append(presenter.tab)
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)

    lat = [x for t in tabs for st in t.all_stats() for x in st.latencies]
    res.reruns = len(lat)
    res.latency_p50_s, res.latency_p95_s = load.percentile(lat, 0.5), load.percentile(lat, 0.95)
    res.latency_max_s = max(lat, default=float("nan"))
    rec = [x for t in tabs for x in t.reconnect_s]
    res.reconnections, res.restored = len(rec), sum(t.restored for t in tabs)
    res.reconnect_p50_s, res.reconnect_max_s = (
        load.percentile(rec, 0.5),
        max(rec, default=float("nan")),
    )
    res.interrupted = sum(t.interrupted for t in tabs)
    res.finished = sum(t.finished for t in tabs)
    for t in tabs:
        res.errors.extend(t.errors)
        for st in t.all_stats():
            res.errors.extend(st.errors)
    if presenter is None:
        res.rooms.note = (
            f"no room answers: {res.page} is not in ROOM_QUESTIONS "
            f"({', '.join(ROOM_QUESTIONS)} are); recorded and lost stay 0"
        )
    else:
        res.errors.extend(presenter.tab.stats.errors)


def run_scale(
    replicas: int,
    learners: int,
    page: str,
    *,
    kill_one: bool = False,
    restart_redis: bool = False,
    think: float = 6.0,
    duration: float = 60.0,
    ramp: float = 2.0,
    shared: float = 0.5,
    timeout: float = 30.0,
    seed: int = 0,
    warmup: int = 1,
) -> ScaleResult:
    """One run on a freshly started deployment; see the module docstring."""
    control = load.PAGES[page]
    res = ScaleResult(page, replicas, learners, think, duration, ramp, kill_one, restart_redis)
    res.uptime = _uptime()
    bound = ramp + duration + 4 * timeout + 60 * replicas * warmup + 60
    redis_down = max(REDIS_DOWN_THINKS * think, 4.0)
    with LocalDeployment(replicas, env={"REDIS_RESTART_S": f"{redis_down:g}"}) as dep:
        coro = _scale(
            dep,
            res,
            control=control,
            query=control.query,
            shared=shared,
            timeout=timeout,
            seed=seed,
            warmup=warmup,
        )
        try:
            asyncio.run(asyncio.wait_for(coro, bound))
        except TimeoutError:
            res.errors.append(f"benchmark did not finish within {bound:.0f} s")
        time.sleep(0.5)  # let the replicas flush their logs
        for name in dep.replica_names():
            res.errors.extend(f"{name}: {e}" for e in load.server_errors(dep.replica_log(name)))
    return res


# --- report -------------------------------------------------------------------------------


def _s(x: float) -> str:
    return "—" if x != x else f"{x:.2f}"


def report(r: ScaleResult) -> str:
    """The human-readable report; its last line is the SCALE line."""
    out = [
        f"scale_out: {r.page}, {r.replicas} replica(s), {r.learners} learners "
        f"(think {r.think_s:g} s ±50 %, {r.duration_s:g} s of changes, ramp {r.ramp_s:g} s); "
        f"load average before: {r.uptime}",
        "learners at load per replica (X-Replica of their websocket): "
        + ", ".join(f"{n} {c}" for n, c in r.per_replica.items()),
        "HAProxy at load: "
        + ", ".join(
            f"{n} {row['status']} ({row['scur']} open, {row['stot']} so far)"
            for n, row in r.haproxy.items()
        ),
        f"page loads: {r.loads}, p50 {_s(r.load_p50_s)} s, p95 {_s(r.load_p95_s)} s, "
        f"max {_s(r.load_max_s)} s",
        f"changes: {r.reruns}, p50 {_s(r.latency_p50_s)} s, p95 {_s(r.latency_p95_s)} s, "
        f"max {_s(r.latency_max_s)} s",
    ]
    f = r.fault
    if r.kill_one:
        out.append(
            f"killed {f.replica} ({f.learners_on_it} learners) at {_s(f.at_s)} s; HAProxy "
            f"marked it DOWN {_s(f.marked_down_s)} s later; reconnections {r.reconnections} "
            f"(p50 {_s(r.reconnect_p50_s)} s, max {_s(r.reconnect_max_s)} s, close to the "
            f"page rerun on another replica), controls restored {r.restored}/"
            f"{r.reconnections}, changes interrupted {r.interrupted}"
        )
    else:
        out.append(f"reconnections: {r.reconnections}")
    if r.restart_redis:
        rf = r.redis_fault
        out.append(
            f"Redis stopped at {_s(rf.at_s)} s, answering again {_s(rf.down_s)} s later; "
            f"answers refused meanwhile (card: not shared) {r.rooms.refused}, sent again "
            f"and shared once it was back {r.rooms.resent}"
        )
    window = r.window_s if r.window_s == r.window_s else float("nan")
    out.append(
        f"CPU over the change phase ({_s(window)} s): replicas {_s(r.replicas_cpu_s)} s "
        f"({_ms(r.cpu_per_rerun_s)} ms a change, {_s(r.replicas_cpu_s / window)} cores), "
        f"HAProxy {_s(r.haproxy_cpu_s)} s, Redis {_s(r.redis_cpu_s)} s, this generator "
        f"{_s(r.client_cpu_s)} s ({_s(r.client_cpu_s / window)} cores)"
    )
    out.append(
        "replica RSS at the end: "
        + (", ".join(f"{n} {mb:.0f} MB" for n, mb in r.replica_rss_mb.items()) or "—")
    )
    out.append(f"learners connected at the end: {r.finished}/{r.learners}")
    if r.rooms.note:
        out.append(f"rooms: {r.rooms.note}")
    else:
        out.append(
            f"rooms ({r.rooms.question}): acknowledged {r.rooms.acknowledged}, recorded "
            f"{r.rooms.recorded}, in flight on the killed replica "
            f"{r.rooms.in_flight_on_killed}, neither shared nor refused {r.rooms.unanswered}"
        )
    for err in dict.fromkeys(r.errors):
        out.append(f"  error: {err} (×{r.errors.count(err)})")
    out.append(f"budgets: {', '.join(r.missed) or 'ok'}" + (" missed" if r.missed else ""))
    out.append(r.scale_line())
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--replicas", type=int, required=True, help="Streamlit replicas, R")
    ap.add_argument("--learners", type=int, required=True, help="learners, L")
    ap.add_argument("--page", required=True, help=f"one of {', '.join(load.PAGES)}")
    ap.add_argument("--kill-one", action="store_true", help="kill a replica half-way")
    ap.add_argument("--restart-redis", action="store_true", help="stop Redis at 40 %% of the phase")
    ap.add_argument("--think", type=float, default=6.0, help="seconds between changes (±50 %%)")
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of changes")
    ap.add_argument("--ramp", type=float, default=2.0, help="learners open the page within")
    ap.add_argument("--shared", type=float, default=0.5, help="share of changes to common values")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds a run may take")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--warmup", type=int, default=1, help="sessions per replica first (0: cold)")
    ap.add_argument("--json", type=Path, default=None, help="also write the result here")
    args = ap.parse_args(argv)
    if args.page not in load.PAGES:
        ap.error(f"--page: unknown {args.page}; known: {', '.join(load.PAGES)}")
    if args.replicas < 1 or args.learners < 1:
        ap.error("--replicas and --learners must be at least 1")
    if args.kill_one and args.replicas < 2:
        ap.error("--kill-one needs at least 2 replicas (its learners move to another)")
    missing = deployment.missing_tools()
    if missing:
        ap.error(f"deploy/run-local.sh needs {', '.join(missing)} (Debian: redis-server, haproxy)")
    res = run_scale(
        args.replicas,
        args.learners,
        args.page,
        kill_one=args.kill_one,
        restart_redis=args.restart_redis,
        think=args.think,
        duration=args.duration,
        ramp=args.ramp,
        shared=args.shared,
        timeout=args.timeout,
        seed=args.seed,
        warmup=args.warmup,
    )
    if args.json is not None:
        payload = asdict(res) | {"missed": res.missed, "scale": res.scale_line()}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    print(report(res))
    return 1 if res.missed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # the deployment was stopped on the way out
        print("interrupted", file=sys.stderr)
        sys.exit(130)
