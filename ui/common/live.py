"""Charts whose inputs move in the browser: a closed-form view redraws with every step of
a drag and no round trip; the server hears of the value when the drag pauses.

An input of such a chart is a parameter of the page's table (``labelled``: the app writes
its URL, as for any control that is not a Streamlit widget) drawn as a slider under the
chart (:func:`ui.common.expr.bound_input`). The chart reports the slider's value through
``on_select`` when a drag pauses (Streamlit sends one message per pause, none while the
drag moves on); :func:`live_chart`, called inside a fragment, then reruns that fragment
only, keeps the value in the session and writes it to the URL. Numbers the page prints
beside the chart are drawn in that same rerun.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import altair as alt
import streamlit as st

from ui.common import controls, specs, workshop
from ui.common.i18n import chart_text
from ui.common.params import parse_float

#: Session-state entry: per chart, the input values its spec was made with.
_ANCHORS = "_live_anchors"


def value(key: str) -> float:
    """Input ``key``'s current value: the session's, or on the first run the link's."""
    held = st.session_state.get(key)
    return float(controls.link_value(key) if held is None else held)


def _reported(event: object, key: str) -> float | None:
    """The value of input ``key`` a chart's selection event carries, if any and valid."""
    selection = getattr(event, "selection", None) or {}
    picked = selection.get(key) if hasattr(selection, "get") else None
    if isinstance(picked, list) and picked and isinstance(picked[0], dict):
        raw = picked[0].get(key)
        if isinstance(raw, int | float) and math.isfinite(raw):
            p = controls.param(key)
            return parse_float([repr(float(raw))], p.lo, p.hi)
    return None


def live_chart(
    key: str,
    builder: Callable[..., alt.TopLevelMixin],
    frame: functools.partial,
    inputs: Sequence[tuple[str, str]],
    *,
    options: dict[str, object] | None = None,
    marker: float | None = None,
    source: Callable | Sequence[Callable] | None = None,
    **values: object,
) -> dict[str, float]:
    """Draw chart ``key`` (as :func:`ui.common.workshop.chart` does) with ``inputs``,
    ((parameter key, slider label), …), moved in the browser; call it inside a fragment.
    Returns each input's current value.

    ``builder(frame(), text, inputs=…, **options)`` gets the inputs as (key, label, lo,
    hi, step, value) tuples for :func:`ui.common.expr.bound_input`; ``marker`` as in
    :func:`ui.common.workshop.chart` (the d_k rule, layered here). The spec is made with
    the values the session held when the chart was first drawn, or last set by something
    else than the chart (a link, "Defaults"): a value the chart itself reported changes
    nothing in the spec, so the browser keeps the chart it is showing.
    """
    anchors = st.session_state.setdefault(_ANCHORS, {}).setdefault(key, {})
    current = {name: value(name) for name, _ in inputs}
    st.session_state.update(current)  # a fragment's own rerun has no link to read
    for name, now in current.items():
        if anchors.get(name, (None, None))[1] != now:  # set elsewhere: the spec follows
            anchors[name] = (now, now)
    described = tuple((name, label, *_range(name), anchors[name][0]) for name, label in inputs)
    text = chart_text(key, **values)
    spec = specs.drawn(
        key,
        builder,
        frame,
        text,
        options={**(options or {}), "inputs": described},
        marker=marker,
        presenting=bool(st.session_state.get("present", False)),
    )
    element = key.replace(".", "_")
    event = st.vega_lite_chart(
        spec=spec,
        width="stretch",
        key=element,
        on_select="rerun",
        selection_mode=[name for name, _ in inputs],
    )
    for name in current:
        reported = _reported(event, name)
        if reported is not None and reported != current[name]:
            current[name] = reported
            st.session_state[name] = reported
            anchors[name] = (anchors[name][0], reported)
        controls.write_link(name, _shown(current[name]), _shown(controls.param(name).default))
    workshop.chart_extras(element, lambda: workshop.first_frame(frame()), source)
    return current


def _range(name: str) -> tuple[float, float, float]:
    p = controls.param(name)
    return float(p.lo), float(p.hi), float(p.step)


def _shown(x: float) -> str:
    return f"{x:g}"
