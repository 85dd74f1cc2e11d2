"""Property-based robustness: every page survives any in-range control values.

The widgets of each page are discovered through AppTest (their own min, max, step and
options), so new controls are covered without editing this file. Each example sets every
control to a boundary or random in-range value, reruns, and checks that the page raises
nothing and that no NaN or infinity reaches a chart (except charts listed in
``ALLOW_NONFINITE``, which label such values on purpose).
"""

from __future__ import annotations

import io
import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.app.helpers import run_page
from ui.common.pages import PAGES

#: Controls left alone: language/presenter/step change the layout, not the computation,
#: and prediction radios are answers, not controls.
SKIP_KEYS = {"lang", "present", "step"}
#: Chart keys allowed to carry non-finite values (a labelled precision demo).
ALLOW_NONFINITE: set[str] = set()

PAGE_SCRIPTS = [p.script for p in PAGES if p.url_path]


def _controls(at):
    """(kind, widget) for every fuzzable control on the page."""
    out = []
    for kind in (
        "number_input",
        "slider",
        "select_slider",
        "radio",
        "selectbox",
        "toggle",
        "checkbox",
    ):
        for widget in getattr(at, kind):
            key = widget.key
            if not key or key in SKIP_KEYS or key.endswith("_guess"):
                continue
            out.append((kind, widget))
    return out


def _number(draw, lo, hi, step, integer):
    """A boundary or a random in-range value on the widget's step grid."""
    n_steps = max(0, round((hi - lo) / step))
    k = draw(st.one_of(st.sampled_from([0, n_steps]), st.integers(0, n_steps)))
    value = lo + k * step
    return round(value) if integer else float(min(hi, round(value, 10)))


def _draw_value(draw, kind, widget):
    if kind in ("number_input", "slider"):
        lo, hi = float(widget.min), float(widget.max)
        step = float(widget.step or 1)
        integer = isinstance(widget.value, int) or (
            isinstance(widget.value, tuple) and all(isinstance(v, int) for v in widget.value)
        )
        if isinstance(widget.value, tuple):
            a, b = sorted(_number(draw, lo, hi, step, integer) for _ in range(2))
            return (a, b)
        return _number(draw, lo, hi, step, integer)
    if kind == "select_slider":
        options = list(widget.options)
        if isinstance(widget.value, tuple):
            i, j = sorted(draw(st.integers(0, len(options) - 1)) for _ in range(2))
            return (options[i], options[j])
        return draw(st.sampled_from(options))
    if kind in ("radio", "selectbox"):
        return draw(st.sampled_from(list(widget.options)))
    return draw(st.booleans())


def _nonfinite_columns(chart) -> list[str]:
    return _nonfinite_in(ds.data.data for ds in chart.proto.datasets)


def _nonfinite_in(arrow_payloads) -> list[str]:
    bad = []
    for payload in arrow_payloads:
        table = pa.ipc.open_stream(io.BytesIO(payload)).read_all()
        for name in table.column_names:
            col = table.column(name)
            if pa.types.is_floating(col.type):
                if not np.all(np.isfinite(col.to_numpy(zero_copy_only=False))):
                    bad.append(name)
    return bad


def _check(at):
    assert not at.exception, [e.value for e in at.exception]
    for chart in at.get("vega_lite_chart"):
        key = chart.proto.id or ""
        if any(allowed in key for allowed in ALLOW_NONFINITE):
            continue
        assert not _nonfinite_columns(chart), (key, _nonfinite_columns(chart))


@pytest.mark.parametrize("script", PAGE_SCRIPTS)
@settings(
    max_examples=10,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_any_in_range_controls(script, data):
    at = run_page(script)
    _check(at)
    for kind, widget in _controls(at):
        value = _draw_value(data.draw, kind, widget)
        if value != widget.value:
            widget.set_value(value)
    # the costliest in-range run trains 5 variants at d_k = 1024 for 1000 steps (~15 s of CPU)
    at.run(timeout=240)
    _check(at)


def test_nonfinite_checker_finds_nan_and_inf():
    """The check above can fail: it flags NaN and ±inf in Arrow payloads, not finite data."""

    def payload(values):
        table = pa.table({"x": pa.array(values, pa.float64())})
        sink = io.BytesIO()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        return sink.getvalue()

    assert _nonfinite_in([payload([1.0, 2.0])]) == []
    assert _nonfinite_in([payload([1.0, math.nan])]) == ["x"]
    assert _nonfinite_in([payload([math.inf])]) == ["x"]


def _signature(kind, widget) -> tuple:
    """What a control accepts: its kind and step, or its options. A number input's range
    may differ between pages (d_k to 1024 in the training lab, 4096 elsewhere): a carried
    value outside the page's range comes out clamped (see the test below)."""
    if kind == "number_input":
        return kind, widget.step
    if kind == "slider":
        return kind, widget.min, widget.max, widget.step
    if kind in {"select_slider", "radio", "selectbox"}:
        return kind, tuple(widget.options)
    return (kind,)


def test_a_key_shared_by_pages_is_the_same_control_everywhere():
    """A control's key is its URL parameter and its session state: two pages may share
    one (d_k follows the learner from page to page) only if it accepts the same values."""
    seen: dict[str, tuple[str, tuple]] = {}
    for script in PAGE_SCRIPTS:
        for kind, widget in _controls(run_page(script)):
            if widget.key.endswith("_skip"):
                continue
            signature = _signature(kind, widget)
            first = seen.setdefault(widget.key, (script, signature))
            assert first[1] == signature, (widget.key, first, (script, signature))
    assert {"d_k", "n_keys", "alpha"} <= seen.keys()


@pytest.mark.parametrize(("d_k", "expected"), [(4096, 1024), (2, 16), (128, 128)])
def test_a_carried_value_outside_a_pages_range_is_clamped(d_k, expected):
    """d_k = 4096 on the variance page, then the training lab (16 … 1024): Streamlit opens
    the page at the nearest value it allows; nothing raises on the carried widget state."""
    at = run_page("app_pages/variance.py", d_k=str(d_k))
    assert at.number_input(key="d_k").value == d_k
    at.switch_page("app_pages/training.py")
    at.session_state["d_k"] = d_k  # as a browser session carries it from page to page
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key="d_k").value == expected
