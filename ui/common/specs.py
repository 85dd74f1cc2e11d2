"""Finished Vega-Lite specs of the app's charts, cached per input for the whole server.

:func:`ui.common.workshop.chart` draws a deferred builder call
(``functools.partial(builder, frame, title=…)``) through :func:`finished_spec`: the chart
is built and converted the way ``st.altair_chart`` converts it once per distinct input,
and a rerun with inputs already seen hashes the arguments and reuses the stored spec.
"""

from __future__ import annotations

import functools
import hashlib
import pickle

import altair as alt
import pandas as pd
import streamlit as st
from streamlit import dataframe_util
from streamlit.elements import vega_charts

#: Presenter mode: chart text sized for a projector (Vega-Lite's defaults are 10–13 px).
PRESENTER_CHART_CONFIG = {
    "axis": {"labelFontSize": 15, "titleFontSize": 17},
    "legend": {"labelFontSize": 15, "titleFontSize": 15},
    "title": {"fontSize": 19, "subtitleFontSize": 15},
    "text": {"fontSize": 15},
}


def prevalidated(chart_obj: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """The chart, serialised without Altair's JSON-schema validation on this rerun.

    Every builder in ``ui/common/charts.py`` and ``ui/<page>/charts.py`` is validated
    by tests/ui (``chart.to_dict()``), so repeating the schema walk on every rerun only
    costs time: it was three quarters of the time Altair took to hand a chart to
    Streamlit. ``st.altair_chart`` calls ``to_dict()`` with no arguments; this
    instance's ``to_dict`` defaults to ``validate=False``.
    """
    if "to_dict" not in vars(chart_obj):  # a chart object reused from a cache is set once
        object.__setattr__(
            chart_obj, "to_dict", functools.partial(chart_obj.to_dict, validate=False)
        )
    return chart_obj


def for_projector(chart_obj: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """A copy of the chart with :data:`PRESENTER_CHART_CONFIG` merged into its config
    (a copy: the chart may be shared through a cache)."""
    out = chart_obj.copy(deep=False)
    config = {} if out.config is alt.Undefined else out.config.to_dict(validate=False)
    for part, sizes in PRESENTER_CHART_CONFIG.items():
        config[part] = {**config.get(part, {}), **sizes}
    out.config = alt.Config(**config)
    return out


#: Finished chart specs kept per builder input (each a few KB to ~100 KB with its data).
SPEC_CACHE_ENTRIES = 256
#: The builder keyword that only places the learner's d_k marker
#: (:func:`ui.common.charts.d_marker`): a chart's spec is cached without it.
MARKER_KEYWORD = "current_d"
#: The d_k a spec is built with before the learner's is written in (no page offers it).
_MARKER_SENTINEL = -987_654_321
#: The name of the marker's dataset in a sent spec: the same for every d_k, so the spec
#: does not change with d_k and the browser only swaps the dataset's one row.
MARKER_DATASET = "d_marker"


@functools.lru_cache(maxsize=4096)
def marker_bytes(current_d: int) -> bytes:
    """The marker's dataset (one row, ``d``) as Streamlit's Arrow IPC bytes."""
    frame = pd.DataFrame({"d": [int(current_d)]})
    return dataframe_util.convert_anything_to_arrow_bytes(frame)


@st.cache_resource(max_entries=SPEC_CACHE_ENTRIES, show_spinner=False)
def _finished_spec(digest: str, presenting: bool, _build: functools.partial) -> tuple[dict, bool]:
    """The Vega-Lite spec Streamlit would send for ``_build()``, its datasets as Arrow,
    and whether it has a d_k marker (``_build`` given :data:`_MARKER_SENTINEL` for
    :data:`MARKER_KEYWORD`): its dataset is then named :data:`MARKER_DATASET` and left
    out, for :func:`finished_spec` to add.

    Cached per input: ``digest`` (:func:`input_digest` of the builder and its
    arguments) and ``presenting`` are the key; ``_build`` (not hashed) builds the chart
    on a miss. The conversion is Streamlit's own (the one ``st.altair_chart`` runs:
    Altair's theme off, each dataset as Arrow IPC under a content-hash name), so
    ``st.vega_lite_chart`` of this dict sends the element ``st.altair_chart`` would.
    Streamlit is pinned in requirements.txt; tests/app/test_pinned_charts.py and
    tests/ui/test_workshop_charts.py compare the two.

    ``cache_resource``: every rerun gets the same dict, with no copy (unpickling a spec
    with its data took ~1 ms a chart). ``st.vega_lite_chart`` copies the top level
    before changing it, and :func:`finished_spec` copies the two levels it adds to.
    """
    chart_obj = _build.func(
        *map(_settled, _build.args), **{k: _settled(v) for k, v in _build.keywords.items()}
    )
    if presenting:
        chart_obj = for_projector(chart_obj)
    spec = vega_charts._convert_altair_to_vega_lite_spec(prevalidated(chart_obj))
    # the marker's dataset (built for the sentinel) goes under its fixed name, left empty:
    # finished_spec adds the learner's d_k on every rerun
    datasets = spec.get("datasets", {})
    sentinel = marker_bytes(_MARKER_SENTINEL)
    names = [name for name, values in datasets.items() if values == sentinel]
    for name in names:
        del datasets[name]
        for path in list(_paths_to(spec, name)):
            _follow(spec, path[:-1])[path[-1]] = MARKER_DATASET
    return spec, bool(names)


def _paths_to(node, text: str, path: tuple = ()):
    """Paths (keys and indices) to every string equal to ``text`` in a JSON-like tree."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths_to(value, text, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths_to(value, text, (*path, index))
    elif node == text:
        yield path


def _follow(node, path: tuple):
    for step in path:
        node = node[step]
    return node


def finished_spec(
    build: functools.partial, presenting: bool = False, current_d: int | None = None
) -> dict:
    """The spec :func:`ui.common.workshop.chart` sends for the deferred chart ``build``:
    read from the cache (built on a miss), with the learner's d_k (``current_d``) as the
    one row of its marker's dataset.

    ``build`` leaves out the builder's :data:`MARKER_KEYWORD`, so one ``build`` (kept by
    a cache) serves every d_k. Its digest is kept on it: a deferred chart must not change
    after its first use (its frames are never modified). A builder must use
    :data:`MARKER_KEYWORD` only through :func:`ui.common.charts.d_marker`
    (tests/ui/common/test_workshop_charts.py checks every page's: the spec equals the
    one built with the value directly).
    """
    known = vars(build).get(_KEY_ATTR)
    if known is None:
        if MARKER_KEYWORD in build.keywords:
            raise TypeError(f"give {MARKER_KEYWORD} beside the deferred chart, not in it")
        template = build
        if current_d is not None:
            template = functools.partial(
                build.func, *build.args, **{**build.keywords, MARKER_KEYWORD: _MARKER_SENTINEL}
            )
        # a deferred chart kept by a cache (the same object on every rerun) is hashed once
        known = vars(build)[_KEY_ATTR] = (input_digest(template), template)
    digest, template = known
    spec, marked = _finished_spec(digest, presenting, template)
    if current_d is None:
        return spec
    if not marked:
        raise ValueError(f"{build.func.__qualname__} got {MARKER_KEYWORD} but drew no d_marker")
    datasets = {**spec.get("datasets", {}), MARKER_DATASET: marker_bytes(current_d)}
    return {**spec, "datasets": datasets}


#: Attribute of a deferred chart holding (digest, builder call to build).
_KEY_ATTR = "_spec_key"


def _settled(value):
    """``value``, or for a DataFrame or Series its pickled-and-restored copy: the form
    ``st.cache_data`` hands out on a hit. Equal frames can differ in layout (a string
    column in several Arrow chunks when freshly concatenated, one after a round trip),
    and the layout shows in the Arrow bytes and so in the dataset's name; a spec shared
    by every equal input must not depend on which one built it."""
    if isinstance(value, pd.DataFrame | pd.Series):
        return pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    return value


def input_digest(build: functools.partial) -> str:
    """A digest of a deferred chart: the builder's qualified name and the pickled
    arguments (frames included). Pickling a chart's frame takes well under a
    millisecond; ``st.cache_data``'s own hashing of it takes tens of milliseconds.

    TypeError when the builder is a lambda or a local function (its name does not
    identify it) or an argument cannot be pickled.
    """
    name = f"{build.func.__module__}.{build.func.__qualname__}"
    if "<" in name:
        raise TypeError(f"chart builder must be a module-level function, got {name}")
    try:
        blob = pickle.dumps((name, build.args, build.keywords), protocol=5)
    except (pickle.PicklingError, AttributeError) as err:
        raise TypeError(f"arguments of {name} cannot be pickled: {err}") from err
    return hashlib.blake2b(blob, digest_size=20).hexdigest()
