"""Script runs take turns on the server, first come, first served.

Streamlit runs each session's script in a thread of one process, and the threads share
one interpreter lock: runs that overlap split the CPU between them, so in a burst of
changes (a room pressing the same button) every one of them ends late, about when the
whole burst's work is done. Taking turns does the same work in the same total time, but
the first runs of a burst end first: with 30 learners on which-d (benchmarks/load.py)
the 95th percentile of waiting went from 1.7–2.1 s to 0.5 s, and server CPU per rerun
fell from 140 to 123 ms (fewer switches between threads).

A run waits at most :data:`TURN_WAIT_S` for its turn and then runs anyway, beside the
others: one long or stuck run cannot hold up the room.
"""

from __future__ import annotations

import collections
import contextlib
import threading
from collections.abc import Iterator

#: Longest wait for a turn, s: the CPU budget of the costliest run of any page
#: (benchmarks/worst_case.py), so a run waits for at most about one such run.
TURN_WAIT_S = 2.0


class Turns:
    """One turn at a time, handed to the waiting runs in arrival order.

    Parameters
    ----------
    wait_s : float
        Longest wait for a turn (s, > 0); a run still waiting then goes ahead without it.

    Raises
    ------
    ValueError
        If ``wait_s`` is not positive.
    """

    def __init__(self, wait_s: float = TURN_WAIT_S) -> None:
        if not wait_s > 0:
            raise ValueError(f"wait_s must be a positive number of seconds, got {wait_s!r}")
        self.wait_s = float(wait_s)
        self._lock = threading.Lock()
        self._waiting: collections.deque[threading.Event] = collections.deque()
        self._busy = False

    @contextlib.contextmanager
    def turn(self) -> Iterator[bool]:
        """Hold the turn for the ``with`` block (released on any exception, such as
        Streamlit's rerun and stop exceptions). Yields whether the turn was had: False
        when the wait ran out and the block runs beside the holder."""
        had = self._take()
        try:
            yield had
        finally:
            if had:
                self._hand_on()

    def _take(self) -> bool:
        with self._lock:
            if not self._busy:
                self._busy = True
                return True
            mine = threading.Event()
            self._waiting.append(mine)
        if mine.wait(self.wait_s):
            return True
        with self._lock:
            if mine.is_set():  # handed the turn just as the wait ran out
                return True
            self._waiting.remove(mine)
            return False

    def _hand_on(self) -> None:
        with self._lock:
            if self._waiting:
                self._waiting.popleft().set()  # the next run has the turn: still busy
            else:
                self._busy = False

    @property
    def held(self) -> bool:
        """Whether a run holds the turn now."""
        with self._lock:
            return self._busy

    @property
    def waiting(self) -> int:
        """Runs waiting for a turn now."""
        with self._lock:
            return len(self._waiting)


#: The server's turns: every session's run of app.py takes one.
SCRIPT_RUNS = Turns()
