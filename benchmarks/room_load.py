"""A room on one server: N learners lock in an answer while the presenter's view polls.

Starts ``python -m streamlit run app.py`` on a free loopback port with its own room store
(``--store sqlite``: a fresh folder for the SQLite file; ``--store redis``: a
``redis-server`` of its own on a free loopback port, ``ROOM_STORE_URL``), then plays, over
Streamlit's websocket protocol (``benchmarks/load.py``'s :class:`~load.Learner`):

1. The presenter opens ``/variance?present=1`` (step 1: the "predict first" card on the
   spread of q·k), presses "Open a room" and reads the join link in the sidebar. From
   then on its view polls as the browser does: every ``run_every`` interval the server
   announced (``auto_rerun``), a rerun of the fragment that shows the room's answers.
2. N learners open the join link, spread over ``--ramp`` seconds.
3. Within the next ``--seconds`` seconds each learner, at a random moment (uniform),
   chooses an option (a rerun of the card's fragment) and locks it in (the card's lock-in
   button: the fragment sends the answer to the room and reruns the page). An answer
   counts as *answered* once the learner's card says it is in the room's count.
   Each learner's tab first sends its learner id, as the browser's element does once
   mounted (``ui/common/room_tab.py``: a random id in the tab's state); once a learner has
   locked in, its card polls as the browser does (every ``run_every`` the server
   announced, 3.5 s), while the presenter's view keeps polling too.
4. After the last answer and two more presenter polls, ``--wait`` seconds of that polling
   (the room waiting for the reveal), then the presenter presses "Reveal to the room". A
   learner's *reveal latency* runs from that press to the first of its polls that shows
   the room's answers ("N answered"). Then ``--wait`` more seconds of polling, and the
   benchmark reads the count through the store's interface (revealed answers need no
   key): *recorded*.

Presenter latency: from a learner sending its lock-in to the first poll of the presenter
whose count includes it (the k-th answer acknowledged is counted once the presenter's
count reaches k). ``presenter_p95_ms`` is its 95th percentile, ``learner_p95_ms`` that of
the reveal latency over the learners. The server's CPU over the answering window is
reported per lock-in (it includes the choosing, the page's rerun after each lock-in, and
the presenter's polls); over the two waits, in CPU seconds per minute
(``cpu_s_per_min``: the N cards and the presenter polling, before and after the reveal).

Budget: 60 learners within 20 s: recorded = 60, lost = 0, presenter p95 ≤ 3,000 ms,
learner p95 ≤ 5,000 ms, on either store. The last line is::

    ROOM learners=<N> answered=<a> recorded=<r> lost=<a-r> presenter_p95_ms=<p>
      learner_p95_ms=<q> cpu_s_per_min=<before>/<after> store=<s>

Usage (from the repo root)::

    python benchmarks/room_load.py --learners 60 --seconds 20 --store sqlite
    python benchmarks/room_load.py --learners 60 --seconds 20 --store redis
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import rooms
from benchmarks import load
from benchmarks.redis_server import RedisServer

REPO_ROOT = Path(__file__).resolve().parents[1]
PAGE = "variance"
QUESTION = "variance_std"
#: The question's settings at the page's defaults, (d_k, σ_q, σ_k): its settings group.
ABOUT = (64, 1.0, 1.0)
BUDGET_P95_MS = 3000.0
#: From the reveal to a learner's card showing the room's answers, 95th percentile.
BUDGET_LEARNER_P95_MS = 5000.0
_ANSWERED = re.compile(r"^(\d+) answered$")
_SHARED = "Your answer is in the room's count"


class Tab(load.Learner):
    """A :class:`load.Learner` that also keeps the page's texts, its buttons and the
    fragment each widget belongs to, and the fragments the server asks to poll."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.buttons: dict[str, str] = {}  # widget id -> fragment id ("" outside one)
        self.fragment_of: dict[str, str] = {}  # value widget id -> fragment id
        self.texts: list[str] = []  # markdown, code and alerts of the current run
        self.options: dict[str, list[str]] = {}  # radio widget id -> its option labels
        self.polls: dict[str, float] = {}  # fragment id -> run_every interval, s
        self.counts: list[tuple[float, int]] = []  # (time, "N answered") as seen
        self.tab_id = rooms.new_learner_id()  # what the tab's sessionStorage holds
        self.tab_element: str | None = None  # widget id of the element that sends it
        self.lock = asyncio.Lock()  # one run at a time, as in a browser tab

    def _tab_state(self) -> None:
        """The element's state, sent with every run as the browser does once it mounted."""
        from streamlit.proto import WidgetStates_pb2

        state = WidgetStates_pb2.WidgetState(id=self.tab_element)
        state.json_value = json.dumps({"id": self.tab_id})
        self.widgets[self.tab_element] = state
        self.drawn.add(self.tab_element)

    def observe(self, msg: Any) -> None:
        kind = msg.WhichOneof("type")
        if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            if element.WhichOneof("type") == "bidi_component":
                first = self.tab_element is None
                self.tab_element = element.bidi_component.id
                if not first:
                    self._tab_state()
        if kind == "auto_rerun":
            self.polls[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
        elif kind == "stop_auto_rerun":
            for fid in msg.stop_auto_rerun.fragment_ids:
                self.polls.pop(fid, None)
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element, fid = msg.delta.new_element, msg.delta.fragment_id
            what = element.WhichOneof("type")
            if what in ("button", "download_button"):
                self.buttons[getattr(element, what).id] = fid
            elif what in load.VALUE_WIDGETS:
                self.fragment_of[getattr(element, what).id] = fid
                if what == "radio":
                    self.options[element.radio.id] = list(element.radio.options)
            elif what == "markdown":
                body = element.markdown.body
                self.texts.append(body)
                if m := _ANSWERED.match(body):
                    self.counts.append((time.perf_counter(), int(m.group(1))))
            elif what == "code":
                self.texts.append(element.code.code_text)
            elif what == "alert":
                self.texts.append(element.alert.body)

    async def open(self) -> None:
        """Open the page; a learner's tab then sends its id (the element mounted)."""
        await super().open()
        if self.tab_element is not None:
            self._tab_state()
            await self.rerun()

    def widget_id(self, key: str, pool: dict[str, str]) -> str | None:
        return next((wid for wid in pool if wid.endswith(f"-{key}")), None)

    async def press(self, key: str) -> float | None:
        """Click the button ``key`` (its fragment reruns, or the page)."""
        wid = self.widget_id(key, self.buttons)
        if wid is None:
            self.stats.errors.append(f"button {key!r} not on the page")
            return None
        self.texts = []
        return await self.rerun(fragment_id=self.buttons[wid], triggers=(wid,))

    async def choose(self, key: str, label: str) -> float | None:
        """Pick ``label`` in the radio ``key`` (its fragment reruns)."""
        wid = self.widget_id(key, self.fragment_of)
        if wid is None or wid not in self.widgets:
            self.stats.errors.append(f"radio {key!r} not on the page")
            return None
        self.widgets[wid].string_value = label
        self.texts = []
        return await self.rerun(fragment_id=self.fragment_of[wid])


async def open_room(presenter: Tab) -> str | None:
    """The presenter (a tab in presenter mode) opens its page and presses "Open a room";
    the query string of the join link it then shows (None if it shows none)."""
    await presenter.open()
    await presenter.press("room_open")
    link = next((x for x in presenter.texts if "room=" in x), None)
    return None if link is None else urllib.parse.urlsplit(link).query


@dataclass
class RoomResult:
    learners: int
    seconds: float
    store: str
    wait: float = 20.0
    answered: int = 0
    recorded: int = 0
    presenter_p95_ms: float = float("nan")
    presenter_max_ms: float = float("nan")
    learner_p95_ms: float = float("nan")
    learner_max_ms: float = float("nan")
    revealed_seen: int = 0
    lock_in_p95_ms: float = float("nan")
    polls: int = 0
    learner_polls: int = 0
    cpu_per_lock_in_ms: float = float("nan")
    cores: float = float("nan")
    cpu_s_per_min_before: float = float("nan")
    cpu_s_per_min_after: float = float("nan")
    errors: list[str] = field(default_factory=list)

    @property
    def lost(self) -> int:
        return self.answered - self.recorded

    @property
    def line(self) -> str:
        def ms(x: float) -> str:
            return "nan" if x != x else f"{x:.0f}"

        return (
            f"ROOM learners={self.learners} answered={self.answered} recorded={self.recorded} "
            f"lost={self.lost} presenter_p95_ms={ms(self.presenter_p95_ms)} "
            f"learner_p95_ms={ms(self.learner_p95_ms)} cpu_s_per_min="
            f"{self.cpu_s_per_min_before:.1f}/{self.cpu_s_per_min_after:.1f} store={self.store}"
        )


async def _poll(tab: Tab, done: asyncio.Event, interval_s: float | None = None) -> int:
    """Rerun the tab's polled fragment as the browser's timer does, until ``done``; the
    number of polls. The tab's other runs (a press) wait for the poll in flight."""
    if not tab.polls:
        tab.stats.errors.append("no polled fragment on the page")
        return 0
    fid, interval = next(iter(tab.polls.items()))
    interval = interval_s or interval
    n = 0
    while not done.is_set():
        t0 = time.monotonic()
        async with tab.lock:
            await tab.rerun(fragment_id=fid, auto=True)
        n += 1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), max(0.0, interval - (time.monotonic() - t0)))
    return n


async def _room(
    server: load.Server,
    res: RoomResult,
    *,
    ramp: float,
    seed: int,
    timeout: float,
    store_args: dict,
    poll_cards: bool = True,
) -> None:
    rng = random.Random(seed)
    base = f"http://127.0.0.1:{server.port}"
    presenter = Tab(base, PAGE, "present=1", timeout)
    learners: list[Tab] = []
    done = asyncio.Event()
    pollers: list[asyncio.Task] = []
    try:
        # 1. the presenter opens a room and reads its join link
        query = await open_room(presenter)
        if query is None or not presenter.polls:
            res.errors.append("the presenter's page shows no room (join link, polled view)")
            return
        code = dict(urllib.parse.parse_qsl(query))["room"]

        # 2. the learners join by the link (each tab sends its id once the page is up)
        learners = [Tab(base, PAGE, query, timeout) for _ in range(res.learners)]
        step = ramp / max(res.learners - 1, 1)

        async def join(i: int, tab: Tab) -> None:
            await asyncio.sleep(i * step)
            await tab.open()
            if tab.tab_element is None:
                tab.stats.errors.append("no element keeps the tab's learner id")

        await asyncio.gather(*(join(i, tab) for i, tab in enumerate(learners)))

        # 3. each locks in an answer at a random moment, while the presenter polls; then
        # its card polls
        sent: list[float] = []  # lock-in send times, in the order they were acknowledged
        lock_in: list[float] = []
        learner_polls: list[asyncio.Task] = []

        async def answer(tab: Tab, at: float) -> None:
            await asyncio.sleep(at)
            await tab.choose(f"{QUESTION}_guess", rng.choice(["1", "8", "64", "4096"]))
            t0 = time.perf_counter()
            ran = await tab.press(f"{QUESTION}_reveal")
            if ran is None:
                return
            lock_in.append(ran)
            if any(_SHARED in text for text in tab.texts):
                sent.append(t0)
                if poll_cards:
                    learner_polls.append(asyncio.create_task(_poll(tab, done)))
            else:
                tab.stats.errors.append("the card does not say the answer was shared")

        cpu0, t_start = load.cpu_seconds(server.pid), time.monotonic()
        pollers.append(asyncio.create_task(_poll(presenter, done)))
        await asyncio.gather(*(answer(tab, rng.uniform(0, res.seconds)) for tab in learners))
        cpu1, window = load.cpu_seconds(server.pid), time.monotonic() - t_start
        pollers.extend(learner_polls)
        await asyncio.sleep(2.5 * PRESENTER_POLL_S)  # the last answers reach the presenter
        res.answered = len(sent)
        res.cpu_per_lock_in_ms = 1000 * (cpu1 - cpu0) / max(len(lock_in), 1)
        res.cores = (cpu1 - cpu0) / window
        res.lock_in_p95_ms = 1000 * load.percentile(lock_in, 0.95)

        # presenter latency: the k-th acknowledged answer is seen once the count reaches k
        latencies = []
        for k, t_sent in enumerate(sent, start=1):
            seen = next((t for t, n in presenter.counts if n >= k and t >= t_sent), None)
            if seen is None:
                res.errors.append(f"the presenter never counted answer {k}")
            else:
                latencies.append(1000 * (seen - t_sent))
        res.presenter_p95_ms = load.percentile(latencies, 0.95)
        res.presenter_max_ms = max(latencies, default=float("nan"))

        # 4. the room waits for the reveal (everyone polling), the presenter reveals, and
        # each learner's card shows the room's answers at its next poll
        cpu0, t0 = load.cpu_seconds(server.pid), time.monotonic()
        await asyncio.sleep(res.wait)
        res.cpu_s_per_min_before = (
            60 * (load.cpu_seconds(server.pid) - cpu0) / (time.monotonic() - t0)
        )
        before = [len(tab.counts) for tab in learners]
        async with presenter.lock:
            revealed_at = time.perf_counter()
            await presenter.press(f"{QUESTION}_room_reveal")
        cpu0, t0 = load.cpu_seconds(server.pid), time.monotonic()
        await asyncio.sleep(res.wait)
        res.cpu_s_per_min_after = (
            60 * (load.cpu_seconds(server.pid) - cpu0) / (time.monotonic() - t0)
        )
        reveal = []
        for tab, n in zip(learners, before, strict=True):
            seen = [t for t, _ in tab.counts[n:] if t >= revealed_at]
            if seen:
                reveal.append(1000 * (seen[0] - revealed_at))
        res.revealed_seen = len(reveal)
        if len(reveal) < res.answered and poll_cards:
            res.errors.append(f"{res.answered - len(reveal)} learners never saw the room's answers")
        res.learner_p95_ms = load.percentile(reveal, 0.95)
        res.learner_max_ms = max(reveal, default=float("nan"))
        done.set()
        counts = await asyncio.gather(*pollers)
        res.polls, res.learner_polls = counts[0], sum(counts[1:])
        store = rooms.open_store(**store_args)
        res.recorded = store.counts(code, QUESTION, rooms.group_of(ABOUT)).total
    finally:
        done.set()
        for task in pollers:
            task.cancel()
        for tab in [presenter, *learners]:
            res.errors.extend(tab.stats.errors)
        await asyncio.gather(
            *(tab.close() for tab in [presenter, *learners]), return_exceptions=True
        )


#: The presenter's poll interval the app uses (ui/common/room.py), for the final wait.
PRESENTER_POLL_S = 2.0


def run_room(
    learners: int,
    seconds: float,
    store: str,
    *,
    ramp: float = 5.0,
    wait: float = 20.0,
    seed: int = 0,
    timeout: float = 30.0,
    app_root: Path = REPO_ROOT,
    poll_cards: bool = True,
) -> RoomResult:
    """One room on a freshly started server with a store of its own; see the docstring."""
    res = RoomResult(learners, seconds, store, wait)
    with contextlib.ExitStack() as stack:
        if store == "redis":
            redis = stack.enter_context(RedisServer())
            env = {"ROOM_STORE_URL": redis.url}
            store_args = {"url": redis.url}
        else:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="room-load-"))
            env = {"ROOM_STORE_DIR": folder, "ROOM_STORE_URL": ""}
            store_args = {"url": "", "folder": folder}
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)  # the server inherits them
        try:
            server = stack.enter_context(load.Server(Path(app_root), load.free_port()))
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        bound = ramp + seconds + 2 * wait + 3 * timeout + 30
        coro = _room(
            server,
            res,
            ramp=ramp,
            seed=seed,
            timeout=timeout,
            store_args=store_args,
            poll_cards=poll_cards,
        )
        try:
            asyncio.run(asyncio.wait_for(coro, bound))
        except TimeoutError:
            res.errors.append(f"benchmark did not finish within {bound:.0f} s")
        time.sleep(0.5)
        res.errors.extend(load.server_errors(server.output()))
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--learners", type=int, default=60)
    ap.add_argument("--seconds", type=float, default=20.0, help="answers fall within (uniform)")
    ap.add_argument("--store", choices=("sqlite", "redis"), default="sqlite")
    ap.add_argument("--ramp", type=float, default=5.0, help="learners join within, s")
    ap.add_argument(
        "--wait", type=float, default=20.0, help="polling before and after the reveal, s"
    )
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds a run may take")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--no-card-polls",
        action="store_true",
        help="learners' cards do not poll (a control: what their polling costs the room)",
    )
    ap.add_argument("--app-root", type=Path, default=REPO_ROOT)
    args = ap.parse_args(argv)
    if args.learners < 1 or args.seconds <= 0:
        ap.error("--learners must be ≥ 1 and --seconds > 0")
    res = run_room(
        args.learners,
        args.seconds,
        args.store,
        ramp=args.ramp,
        wait=args.wait,
        seed=args.seed,
        timeout=args.timeout,
        poll_cards=not args.no_card_polls,
        app_root=args.app_root,
    )
    print(
        f"server CPU per lock-in {res.cpu_per_lock_in_ms:.0f} ms ({res.cores:.2f} cores over "
        f"the window); lock-in to page redrawn p95 {res.lock_in_p95_ms:.0f} ms; presenter "
        f"polls {res.polls}, latency max {res.presenter_max_ms:.0f} ms"
    )
    print(
        f"reveal: {res.revealed_seen} of {res.answered} cards showed the room's answers, "
        f"p95 {res.learner_p95_ms:.0f} ms, max {res.learner_max_ms:.0f} ms; learner polls "
        f"{res.learner_polls}; server CPU with everyone polling "
        f"{res.cpu_s_per_min_before:.1f} s/min before the reveal, "
        f"{res.cpu_s_per_min_after:.1f} s/min after ({res.wait:g} s each)"
    )
    for err in dict.fromkeys(res.errors):
        print(f"  error: {err} (×{res.errors.count(err)})")
    print(res.line)
    ok = (
        not res.errors
        and res.recorded == res.learners
        and res.lost == 0
        and res.presenter_p95_ms <= BUDGET_P95_MS
        and res.learner_p95_ms <= BUDGET_LEARNER_P95_MS
    )
    return 0 if ok else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
