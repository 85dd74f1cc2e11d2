"""ui.common.turns: runs take turns in arrival order, a wait is bounded, a turn is
always handed on (also when the run raises)."""

from __future__ import annotations

import threading

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


def test_a_fragment_inside_a_fragment_that_holds_the_turn_does_not_wait():
    """A fragment (or a room's chart) drawn inside a fragment's own rerun: that rerun
    holds the turn already, so it goes on at once instead of waiting out TURN_WAIT_S for
    its own run; and the mark is gone once the outer fragment is done."""
    from streamlit.testing.v1 import AppTest

    def script():
        import time

        import streamlit as st

        from ui.common import controls, fragments

        @fragments.panel
        def inner():
            st.session_state["inner_held"] = controls.holds_turn()

        @fragments.panel
        def outer():
            t0 = time.perf_counter()
            inner()
            st.session_state["inner_s"] = time.perf_counter() - t0

        outer()
        st.session_state["after"] = controls.holds_turn()

    at = AppTest.from_function(script, default_timeout=30).run()
    assert not at.exception
    assert at.session_state["inner_held"] and not at.session_state["after"]
    assert at.session_state["inner_s"] < TURN_WAIT_S / 4  # not the whole wait
    assert not SCRIPT_RUNS.held and SCRIPT_RUNS.waiting == 0
