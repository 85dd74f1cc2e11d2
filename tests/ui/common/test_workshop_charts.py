"""workshop.chart: a deferred builder call sends the element st.altair_chart would send;
the d_k marker is written into a cached spec."""

import functools
import json

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from ui.common import specs
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
    same = specs.input_digest(functools.partial(d_marker, 64))
    assert same == specs.input_digest(functools.partial(d_marker, 64))
    assert same != specs.input_digest(functools.partial(d_marker, 65))
    with_df = specs.input_digest(functools.partial(d_marker, df))
    assert with_df == specs.input_digest(functools.partial(d_marker, df.copy()))
    assert with_df != specs.input_digest(functools.partial(d_marker, df.assign(d=[1, 3])))


def test_digest_refuses_builders_without_a_stable_name():
    with pytest.raises(TypeError, match="module-level"):
        specs.input_digest(functools.partial(lambda: None))
    with pytest.raises(TypeError, match="pickled"):
        specs.input_digest(functools.partial(d_marker, lambda: None))


# --- the d_k marker is written into a cached spec ------------------------------------------
MARKER_PAGES = ["variance", "saturation", "gradients", "sqrt-vs-d"]


def _page_charts(page: str, d_k: int) -> list[dict]:
    return [chart for chart, _ in _drawn(page, d_k)]


def _drawn(page: str, d_k: int) -> list[tuple[dict, bool]]:
    """(decoded chart, has a d_k marker) of every chart the page draws at ``d_k``."""
    from tests.app.helpers import run_page
    from tests.app.test_pinned_charts import canonical_chart

    at = run_page(f"app_pages/{page}.py", d_k=str(d_k))
    assert not at.exception, at.exception
    return [
        (canonical_chart(c.proto), any(ds.name == specs.MARKER_DATASET for ds in c.proto.datasets))
        for c in at.get("vega_lite_chart")
    ]


@pytest.mark.parametrize("page", MARKER_PAGES)
def test_marker_written_into_a_cached_spec_equals_a_chart_built_with_it(page, monkeypatch):
    checked = []
    real = specs.finished_spec

    def both(build, presenting=False, current_d=None):
        sent = real(build, presenting, current_d)
        d = current_d
        if d is not None:  # the same chart built with the learner's d_k, no sentinel
            direct = functools.partial(
                build.func, *build.args, **{**build.keywords, "current_d": d}
            )
            key = "direct-" + specs.input_digest(direct)
            spec, marked = specs._finished_spec(key, presenting, direct)
            assert not marked
            # the direct build names the marker's dataset by its content: name it as sent
            (name,) = [n for n, v in spec["datasets"].items() if v == specs.marker_bytes(d)]
            renamed = json.loads(
                json.dumps({k: v for k, v in spec.items() if k != "datasets"}).replace(
                    f'"{name}"', f'"{specs.MARKER_DATASET}"'
                )
            )
            datasets = {
                specs.MARKER_DATASET if n == name else n: v for n, v in spec["datasets"].items()
            }
            assert sent == {**renamed, "datasets": datasets}
            assert sent["datasets"][specs.MARKER_DATASET] == specs.marker_bytes(d)
            checked.append((d, key))
        return sent

    monkeypatch.setattr(specs, "finished_spec", both)
    marked = sum(has for _, has in _drawn(page, 100))
    assert marked == MARKED_CHARTS[page]
    # every run of the page (run_page reruns it to skip the questions) checks them all
    assert len(checked) >= marked and {d for d, _ in checked} == {100}


#: Charts with a d_k marker on each page at its default settings.
MARKED_CHARTS = {"variance": 1, "saturation": 3, "gradients": 3, "sqrt-vs-d": 7}


@pytest.mark.parametrize("page", MARKER_PAGES)
def test_marker_moves_without_rebuilding(page, monkeypatch):
    """A new d_k changes what the marked charts send, not their cache keys."""
    keys = []
    real = specs.finished_spec

    def recording(build, presenting=False, current_d=None):
        sent = real(build, presenting, current_d)
        if current_d is not None:
            keys.append(vars(build)[specs._KEY_ATTR][0])
        return sent

    monkeypatch.setattr(specs, "finished_spec", recording)
    first = _page_charts(page, 200)
    n = len(keys)
    second = _page_charts(page, 300)
    assert first != second  # the markers moved
    assert n >= MARKED_CHARTS[page] and keys[:n] == keys[n:]  # same keys: nothing rebuilt


def test_marker_paths_and_the_sentinel():
    import altair as alt

    build = functools.partial(d_marker, 64)
    assert specs.finished_spec(build) == specs.finished_spec(build)
    layer = alt.layer(
        alt.Chart(pd.DataFrame({"d": [1, 2], "v": [3.0, 4.0]})).mark_line().encode(x="d:Q", y="v:Q")
    )
    with pytest.raises(ValueError, match="no d_marker"):
        specs.finished_spec(functools.partial(_no_marker, layer), current_d=5)
    with pytest.raises(TypeError, match="beside the deferred chart"):
        specs.finished_spec(functools.partial(d_marker, current_d=5))


def _no_marker(chart, current_d):
    return chart
