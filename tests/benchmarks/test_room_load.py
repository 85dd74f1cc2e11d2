"""benchmarks/room_load.py end to end: a presenter and three learners on a real server.

Checks that the room's protocol works over the websocket client (the presenter opens a
room and polls its view, learners choose and lock in through the card's fragment, every
answer is recorded and the presenter counts it) on both stores. No timing budget: speed
is the benchmark's business, on an idle machine.
"""

from __future__ import annotations

import pytest

from benchmarks import room_load


@pytest.mark.parametrize("store", ["sqlite", "redis"])
def test_every_answer_is_recorded_and_counted(store, request):
    if store == "redis":
        request.getfixturevalue("redis_server")  # the skip rule: redis-server installed
    res = room_load.run_room(3, 3.0, store, ramp=0.5, timeout=60.0)
    assert res.errors == []
    assert (res.answered, res.recorded, res.lost) == (3, 3, 0)
    assert res.polls >= 2  # the presenter's view polled while the learners answered
    assert 0 < res.presenter_p95_ms <= res.presenter_max_ms
    assert res.cpu_per_lock_in_ms > 0
    assert res.line == (
        f"ROOM learners=3 answered=3 recorded=3 lost=0 "
        f"presenter_p95_ms={res.presenter_p95_ms:.0f} store={store}"
    )
