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
4. After the last answer and two more polls, the presenter presses "Reveal to the room";
   the benchmark then reads the count through the store's interface (revealed answers
   need no key): *recorded*.

Presenter latency: from a learner sending its lock-in to the first poll of the presenter
whose count includes it (the k-th answer acknowledged is counted once the presenter's
count reaches k). ``presenter_p95_ms`` is its 95th percentile. The server's CPU over the
answering window is reported per lock-in (it includes the choosing, the page's rerun
after each lock-in, and the presenter's polls).

Budget (issue 25): 60 learners within 20 s: recorded = 60, lost = 0, presenter p95 ≤
3,000 ms, on either store. The last line is::

    ROOM learners=<N> answered=<a> recorded=<r> lost=<a-r> presenter_p95_ms=<p> store=<s>

Usage (from the repo root)::

    python benchmarks/room_load.py --learners 60 --seconds 20 --store sqlite
    python benchmarks/room_load.py --learners 60 --seconds 20 --store redis
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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

    def observe(self, msg: Any) -> None:
        kind = msg.WhichOneof("type")
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
    answered: int = 0
    recorded: int = 0
    presenter_p95_ms: float = float("nan")
    presenter_max_ms: float = float("nan")
    lock_in_p95_ms: float = float("nan")
    polls: int = 0
    cpu_per_lock_in_ms: float = float("nan")
    cores: float = float("nan")
    errors: list[str] = field(default_factory=list)

    @property
    def lost(self) -> int:
        return self.answered - self.recorded

    @property
    def line(self) -> str:
        p95 = (
            "nan"
            if self.presenter_p95_ms != self.presenter_p95_ms
            else f"{self.presenter_p95_ms:.0f}"
        )
        return (
            f"ROOM learners={self.learners} answered={self.answered} recorded={self.recorded} "
            f"lost={self.lost} presenter_p95_ms={p95} store={self.store}"
        )


async def _room(
    server: load.Server,
    res: RoomResult,
    *,
    ramp: float,
    seed: int,
    timeout: float,
    store_args: dict,
) -> None:
    rng = random.Random(seed)
    base = f"http://127.0.0.1:{server.port}"
    presenter = Tab(base, PAGE, "present=1", timeout)
    learners: list[Tab] = []
    try:
        # 1. the presenter opens a room and reads its join link
        query = await open_room(presenter)
        if query is None or not presenter.polls:
            res.errors.append("the presenter's page shows no room (join link, polled view)")
            return
        code = dict(urllib.parse.parse_qsl(query))["room"]

        # 2. the learners join by the link
        learners = [Tab(base, PAGE, query, timeout) for _ in range(res.learners)]
        step = ramp / max(res.learners - 1, 1)

        async def join(i: int, tab: Tab) -> None:
            await asyncio.sleep(i * step)
            await tab.open()

        await asyncio.gather(*(join(i, tab) for i, tab in enumerate(learners)))

        # 3. each locks in an answer at a random moment, while the presenter polls
        sent: list[float] = []  # lock-in send times, in the order they were acknowledged
        lock_in: list[float] = []
        done = asyncio.Event()

        async def poll() -> None:
            fid, interval = next(iter(presenter.polls.items()))
            while not done.is_set():
                t0 = time.monotonic()
                await presenter.rerun(fragment_id=fid, auto=True)
                res.polls += 1
                await asyncio.sleep(max(0.0, interval - (time.monotonic() - t0)))

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
            else:
                tab.stats.errors.append("the card does not say the answer was shared")

        cpu0, t_start = load.cpu_seconds(server.pid), time.monotonic()
        poller = asyncio.create_task(poll())
        await asyncio.gather(*(answer(tab, rng.uniform(0, res.seconds)) for tab in learners))
        cpu1, window = load.cpu_seconds(server.pid), time.monotonic() - t_start
        await asyncio.sleep(2.5 * PRESENTER_POLL_S)  # the last answers reach the presenter
        done.set()
        await poller
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

        # 4. reveal, and count what the store holds
        await presenter.press(f"{QUESTION}_room_reveal")
        store = rooms.open_store(**store_args)
        res.recorded = store.counts(code, QUESTION, rooms.group_of(ABOUT)).total
    finally:
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
    seed: int = 0,
    timeout: float = 30.0,
    app_root: Path = REPO_ROOT,
) -> RoomResult:
    """One room on a freshly started server with a store of its own; see the docstring."""
    res = RoomResult(learners, seconds, store)
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
        bound = ramp + seconds + 3 * timeout + 30
        coro = _room(server, res, ramp=ramp, seed=seed, timeout=timeout, store_args=store_args)
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
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds a run may take")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--app-root", type=Path, default=REPO_ROOT)
    args = ap.parse_args(argv)
    if args.learners < 1 or args.seconds <= 0:
        ap.error("--learners must be ≥ 1 and --seconds > 0")
    res = run_room(
        args.learners,
        args.seconds,
        args.store,
        ramp=args.ramp,
        seed=args.seed,
        timeout=args.timeout,
        app_root=args.app_root,
    )
    print(
        f"server CPU per lock-in {res.cpu_per_lock_in_ms:.0f} ms ({res.cores:.2f} cores over "
        f"the window); lock-in to page redrawn p95 {res.lock_in_p95_ms:.0f} ms; presenter "
        f"polls {res.polls}, latency max {res.presenter_max_ms:.0f} ms"
    )
    for err in dict.fromkeys(res.errors):
        print(f"  error: {err} (×{res.errors.count(err)})")
    print(res.line)
    ok = (
        not res.errors
        and res.recorded == res.learners
        and res.lost == 0
        and res.presenter_p95_ms <= BUDGET_P95_MS
    )
    return 0 if ok else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
