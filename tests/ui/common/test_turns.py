"""ui.common.turns: runs take turns in arrival order, a wait is bounded, a turn is
always handed on (also when the run raises)."""

from __future__ import annotations

import threading
import time

import pytest

from ui.common.turns import SCRIPT_RUNS, TURN_WAIT_S, Turns


def _start_waiting(turns: Turns, name: str, order: list, release: threading.Event | None = None):
    """A thread that takes a turn, notes ``name`` and, with ``release``, holds the turn
    until it is set; returns once the thread waits for its turn."""
    before = turns.waiting

    def run():
        with turns.turn() as had:
            order.append((name, had))
            if release is not None:
                release.wait(10)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    for _ in range(1000):  # until it is queued (a turn is held throughout)
        if turns.waiting > before:
            return thread
        threading.Event().wait(0.005)
    raise AssertionError(f"{name} never queued")


def test_waiting_runs_get_the_turn_in_arrival_order():
    turns, order, release = Turns(wait_s=10), [], threading.Event()
    holder_in = threading.Event()

    def holder():
        with turns.turn() as had:
            order.append(("holder", had))
            holder_in.set()
            release.wait(10)

    first = threading.Thread(target=holder, daemon=True)
    first.start()
    assert holder_in.wait(5)
    threads = [_start_waiting(turns, f"run {i}", order) for i in range(6)]
    assert turns.waiting == 6 and turns.held
    release.set()
    for thread in (first, *threads):
        thread.join(5)
    assert order == [("holder", True)] + [(f"run {i}", True) for i in range(6)]
    assert turns.waiting == 0 and not turns.held
    with turns.turn() as had:  # free again
        assert had


def test_a_wait_runs_out_and_the_run_goes_ahead_beside_the_holder():
    turns, order = Turns(wait_s=0.05), []
    with turns.turn() as had:
        assert had
        waiter = _start_waiting(turns, "late", order)
        waiter.join(5)
        assert order == [("late", False)]  # ran while the turn was still held
        assert turns.waiting == 0
    with turns.turn() as had:  # the holder handed the turn on to nobody: free
        assert had


def test_a_turn_taken_again_inside_it_goes_on_at_once():
    """A fragment drawn inside a fragment's own rerun takes the turn its thread holds:
    no wait (it would sit out all of ``wait_s``), and the turn is still held after."""
    turns, order = Turns(wait_s=5), []
    with turns.turn() as had:
        t0 = time.perf_counter()
        with turns.turn() as again:
            assert again and turns.held
        assert time.perf_counter() - t0 < 1.0  # not the 5 s wait
        assert had and turns.held  # the inner block did not hand the turn on
        waiter = _start_waiting(turns, "next", order)
    waiter.join(5)
    assert order == [("next", True)] and not turns.held


def test_inside_a_block_that_ran_beside_the_holder_a_turn_waits_no_more():
    turns, release = Turns(wait_s=0.3), threading.Event()
    holder = _start_holding(turns, release)
    t0 = time.perf_counter()
    with turns.turn() as had:
        waited = time.perf_counter() - t0
        with turns.turn() as again:
            assert not had and not again
        assert time.perf_counter() - t0 - waited < 0.2  # the inner block did not wait
    release.set()
    holder.join(5)
    assert not turns.held


def test_after_a_block_raises_the_thread_takes_turns_as_before():
    turns = Turns(wait_s=5)
    with pytest.raises(RuntimeError), turns.turn():
        raise RuntimeError("a run that fails")
    assert not turns.held
    holder = _start_holding(turns, threading.Event(), hold_s=0.1)
    t0 = time.perf_counter()
    with turns.turn() as had:  # waits for the holder again: not taken as nested
        assert had and time.perf_counter() - t0 >= 0.05
    holder.join(5)


def _start_holding(turns: Turns, release: threading.Event, hold_s: float = 10) -> threading.Thread:
    """A thread that holds the turn until ``release`` is set, or for ``hold_s``; returns
    once it holds it."""
    taken = threading.Event()

    def run():
        with turns.turn():
            taken.set()
            release.wait(hold_s)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert taken.wait(5)
    return thread


def test_the_turn_is_handed_on_when_a_run_raises():
    turns, order = Turns(wait_s=10), []
    gate = threading.Event()

    def failing():
        with pytest.raises(RuntimeError), turns.turn():
            gate.wait(10)
            raise RuntimeError("a rerun or stop exception")

    thread = threading.Thread(target=failing, daemon=True)
    thread.start()
    for _ in range(1000):
        if turns.held:
            break
        threading.Event().wait(0.005)
    waiter = _start_waiting(turns, "next", order)
    gate.set()
    thread.join(5)
    waiter.join(5)
    assert order == [("next", True)]


@pytest.mark.parametrize("bad", [0, -1.0, float("nan")])
def test_wait_must_be_positive(bad):
    with pytest.raises(ValueError, match="wait_s must be a positive number of seconds"):
        Turns(wait_s=bad)


def test_a_run_of_the_app_waits_for_its_turn():
    from streamlit.testing.v1 import AppTest

    assert SCRIPT_RUNS.wait_s == TURN_WAIT_S
    at = AppTest.from_file("../../../app.py", default_timeout=60)
    at.run()  # imports and caches: the timed part below is one quick run
    done = threading.Event()
    with SCRIPT_RUNS.turn() as had:
        assert had
        runner = threading.Thread(target=lambda: (at.run(), done.set()), daemon=True)
        runner.start()
        for _ in range(1000):
            if SCRIPT_RUNS.waiting == 1:
                break
            threading.Event().wait(0.001)
        assert SCRIPT_RUNS.waiting == 1  # the app's run is queued behind this turn
        assert not done.is_set()
    runner.join(30)
    assert done.is_set() and not at.exception
    assert not SCRIPT_RUNS.held and SCRIPT_RUNS.waiting == 0
