"""benchmarks/room_load.py end to end: a presenter and three learners on a real server.

Checks that the room's protocol works over the websocket client (the presenter opens a
room and polls its view, learners' tabs send their ids, learners choose and lock in
through the card's fragment, every answer is recorded and the presenter counts it, and
after the reveal every learner's polling card shows the room's answers) on both stores. No timing budget: speed
is the benchmark's business, on an idle machine.
"""

from __future__ import annotations

import pytest

from benchmarks import room_load


@pytest.mark.parametrize("store", ["sqlite", "redis"])
def test_every_answer_is_recorded_and_counted(store, request):
    if store == "redis":
        request.getfixturevalue("redis_server")  # the skip rule: redis-server installed
    res = room_load.run_room(3, 3.0, store, ramp=0.5, wait=4.0, timeout=60.0)
    assert res.errors == []
    assert (res.answered, res.recorded, res.lost) == (3, 3, 0)
    assert res.polls >= 2  # the presenter's view polled while the learners answered
    assert 0 < res.presenter_p95_ms <= res.presenter_max_ms
    assert res.cpu_per_lock_in_ms > 0
    # each card polled through both waits (every 3.5 s), and showed the reveal
    assert res.learner_polls >= 3 * 2
    assert res.revealed_seen == 3
    assert 0 < res.learner_p95_ms <= res.learner_max_ms
    assert res.cpu_s_per_min_before > 0 and res.cpu_s_per_min_after > 0
    assert res.line == (
        f"ROOM learners=3 answered=3 recorded=3 lost=0 "
        f"presenter_p95_ms={res.presenter_p95_ms:.0f} "
        f"learner_p95_ms={res.learner_p95_ms:.0f} "
        f"cpu_s_per_min={res.cpu_s_per_min_before:.1f}/{res.cpu_s_per_min_after:.1f} "
        f"store={store}"
    )
