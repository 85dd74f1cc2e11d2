"""workshop.chart: a deferred builder call sends the element st.altair_chart would send."""

import functools

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from ui.common import workshop
from ui.common.charts import d_marker


def _page(deferred: bool, present: bool, rows: int) -> None:
    """Draws one chart through workshop.chart (run by AppTest in its own namespace)."""
    import functools

    import pandas as pd
    import streamlit as st

    from ui.common import workshop
    from ui.saturation.charts import weight_bars

    st.session_state["present"] = present
    side = pd.DataFrame({"key": range(1, rows + 1), "weight": [1 / rows] * rows})
    build = functools.partial(
        weight_bars, side, color="#0072B2", title="t", x_title="x", y_title="y", description="d"
    )
    workshop.chart(build if deferred else build(), key="c", data=side)
    workshop.chart(build if deferred else build(), key="again")  # a cache hit


def _charts(deferred: bool, present: bool, rows: int = 5) -> list[bytes]:
    at = AppTest.from_function(_page, args=(deferred, present, rows), default_timeout=30).run()
    assert not at.exception, at.exception
    return [c.proto.SerializeToString(deterministic=True) for c in at.get("vega_lite_chart")]


@pytest.mark.parametrize("present", [False, True])
def test_deferred_chart_sends_the_same_element(present):
    deferred = _charts(True, present)
    assert len(deferred) == 2
    assert deferred == _charts(False, present)


def test_presenter_mode_has_its_own_entry():
    assert _charts(True, True)[0] != _charts(True, False)[0]


def test_inputs_that_differ_get_different_specs():
    assert _charts(True, False, rows=5)[0] != _charts(True, False, rows=6)[0]


def test_digest_follows_the_arguments():
    df = pd.DataFrame({"d": [1, 2]})
    same = workshop.input_digest(functools.partial(d_marker, 64))
    assert same == workshop.input_digest(functools.partial(d_marker, 64))
    assert same != workshop.input_digest(functools.partial(d_marker, 65))
    with_df = workshop.input_digest(functools.partial(d_marker, df))
    assert with_df == workshop.input_digest(functools.partial(d_marker, df.copy()))
    assert with_df != workshop.input_digest(functools.partial(d_marker, df.assign(d=[1, 3])))


def test_digest_refuses_builders_without_a_stable_name():
    with pytest.raises(TypeError, match="module-level"):
        workshop.input_digest(functools.partial(lambda: None))
    with pytest.raises(TypeError, match="pickled"):
        workshop.input_digest(functools.partial(d_marker, lambda: None))
