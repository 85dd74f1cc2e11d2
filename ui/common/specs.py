"""Finished Vega-Lite specs of the app's charts, and its static text tables, cached per
input for the whole server.

:func:`ui.common.workshop.chart` draws a chart by its key: it names the builder, the
deferred call that makes the builder's frame (primitives only), the chart's words and the
options. :func:`chart_spec` is the one cache of finished specs: ``st.cache_resource``
keys it on that description, a tuple of plain values (nothing to pickle, no frame to
hash), and on a miss makes the frame, builds the chart and converts it with Altair's
public ``to_dict`` under the app's theme. A rerun with inputs already seen runs no pandas
and copies nothing: every session draws the one cached spec, which nothing changes in
place (:func:`drawn` hands out a new top level with the datasets of the drawing; the
recap's small charts copy what they change).

The theme (:func:`lab_theme`, registered with Altair as :data:`THEME` and
:data:`PRESENTER_THEME`) is applied when a spec is made, and cached with it:

- the text colours of the theme (:data:`THEME_CHART_CONFIG`) and the SVG renderer
  (:data:`SVG_RENDERER`);
- room around the chart (:data:`PADDING`);
- presenter mode's larger chart text (:data:`PRESENTER_CHART_CONFIG`).

Sizing stays per chart kind (:data:`AUTOSIZE`: single and layered views fit the width of
the container, a plot ``height`` tall, title and legends added, so that no title is cut
and no plot squeezed when a title wraps on a phone; facets and concatenations keep
Vega-Lite's own). Only the learner's d_k is added as a chart is drawn
(:func:`for_drawing`): one cached spec serves every d_k, and the browser swaps one row.

A chart drawn with ``swap_data`` goes further: its builder draws the frames it is given
as they are and derives nothing from their values, so one spec serves every input of its
frame function. The spec is cached without those frames (their datasets are named by
their place, ``data-0``, ``data-1``: :func:`frame_datasets`), and the frames travel
beside it as Arrow tables, cached on their own (:func:`chart_data`). A new input makes
the frames only, builds no chart, and the browser updates the chart's data in place
instead of embedding it anew.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
import threading
from collections.abc import Callable

import altair as alt
import pandas as pd
import pyarrow as pa
import streamlit as st

from ui.common.charts import INK, MARKER_DATASET, ChartText, d_marker

#: Presenter mode: chart text sized for a projector (Vega-Lite's defaults are 10–13 px).
PRESENTER_CHART_CONFIG = {
    "axis": {"labelFontSize": 15, "titleFontSize": 17},
    "legend": {"labelFontSize": 15, "titleFontSize": 15},
    "title": {"fontSize": 19, "subtitleFontSize": 15},
    "text": {"fontSize": 15},
}
_INK = INK.to_dict()
#: Chart text in the theme's ink (:data:`ui.common.charts.INK`), light or dark. Streamlit's
#: chart theme colours titles, but draws axis and legend text in a grey of 3.7:1 on the
#: light background and leaves subtitles, facet headers and text marks black (1.2:1 on
#: the dark one). WCAG asks 4.5:1 of text.
THEME_CHART_CONFIG = {
    "axis": {"labelColor": _INK, "titleColor": _INK},
    "legend": {"labelColor": _INK, "titleColor": _INK},
    "header": {"labelColor": _INK, "titleColor": _INK},
    "title": {"subtitleColor": _INK},
    "text": {"color": _INK},
}
#: Vega draws every chart as SVG (Streamlit switches a chart of more than 2,000 rows to a
#: canvas): its text stays text, for a screen reader, for the browser's find and for the
#: contrast test (tests/e2e/test_accessibility.py). No chart ships more than 5,000 rows.
SVG_RENDERER = {"embedOptions": {"renderer": "svg"}}
#: Room above the title and left of the y-axis title: Vega's bounds leave the top 2–13 px
#: of a title's glyphs outside the chart (more for CJK glyphs and wrapped titles), where
#: the chart's own edge cuts them (measured in Chromium at 390–1400 px).
PADDING = {"top": 16, "left": 8, "right": 5, "bottom": 5}
#: Charts fit the container's width; their height is the plot's ``height`` plus title and
#: legends (Vega's "fit" in both directions squeezes the plot under a title that wraps to
#: more lines on a narrow screen, and lays the title out for fewer lines than it draws).
AUTOSIZE = {"type": "fit-x", "contains": "padding"}
#: Top-level keys of a composite spec (facets, concatenations), which take no "fit".
COMPOSITE = frozenset({"facet", "hconcat", "vconcat", "concat", "repeat"})
#: Finished specs kept (each a few KB to ~100 KB with its data).
SPEC_CACHE_ENTRIES = 256


def _frame_bytes(frame: pd.DataFrame) -> bytes:
    """The frame pickled: its content (columns, types, values), fast to hash. A cache key
    of :func:`chart_spec` and the source of a dataset's name."""
    return pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL)


def _frame_name(frame: pd.DataFrame) -> str:
    """A dataset name derived from the frame's content."""
    return f"data-{hashlib.blake2b(_frame_bytes(frame), digest_size=16).hexdigest()}"


def frame_datasets(made: pd.DataFrame | tuple[pd.DataFrame, ...]) -> dict[str, pa.Table]:
    """The frames a frame function made (one frame, or a tuple of them) as the datasets of a
    ``swap_data`` chart: ``data-<i>``, the i-th frame as an Arrow table."""
    frames = made if isinstance(made, tuple) else (made,)
    return {
        f"data-{i}": pa.Table.from_pandas(frame, preserve_index=False)
        for i, frame in enumerate(frames)
    }


def _named_frames(data, datasets: dict, placed: tuple = ()) -> dict:
    """Altair data transformer: keep each frame as a named dataset, an Arrow table (which
    Streamlit sends as it is), instead of writing it into the spec as JSON records. A
    frame of ``placed`` (the frames a ``swap_data`` chart's frame function made) is named
    by its place, ``data-<i>``, and left to :func:`frame_datasets`."""
    for i, frame in enumerate(placed):
        if data is frame:
            return {"name": f"data-{i}"}
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"chart data must be a DataFrame, got {type(data).__name__}")
    name = _frame_name(data)
    datasets[name] = pa.Table.from_pandas(data, preserve_index=False)
    return {"name": name}


alt.data_transformers.register("named_frames", _named_frames)

#: Names of the app's Altair themes: for the page, and for presenter mode.
THEME, PRESENTER_THEME = "attention_lab", "attention_lab_presenter"


def lab_theme(presenting: bool = False) -> dict:
    """The app's chart theme: the ink, the SVG renderer, the padding, and in presenter
    mode the larger chart text. No default view size: Streamlit sizes the chart."""
    config: dict = {part: dict(options) for part, options in THEME_CHART_CONFIG.items()}
    if presenting:
        for part, options in PRESENTER_CHART_CONFIG.items():
            config[part] = {**config.get(part, {}), **options}
    return {"config": config, "usermeta": dict(SVG_RENDERER), "padding": dict(PADDING)}


alt.theme.register(THEME, enable=False)(lambda: lab_theme(False))
alt.theme.register(PRESENTER_THEME, enable=False)(lambda: lab_theme(True))
#: Altair's theme and data-transformer switches are process-wide: one conversion at a time.
_CONVERTING = threading.Lock()


def vega_lite(chart: alt.TopLevelMixin, *, theme: str = "none", placed: tuple = ()) -> dict:
    """The Vega-Lite spec of ``chart`` under Altair theme ``theme`` (:data:`THEME`,
    :data:`PRESENTER_THEME`; "none": as in ``st.altair_chart``, no default view size),
    its frames and inline values as named ``datasets`` (Arrow tables), as
    ``st.vega_lite_chart`` takes it.
    ``placed``: the frames of a ``swap_data`` chart, referred to by their place and left
    out of ``datasets`` (:func:`frame_datasets` makes them). Not validated: tests/ui
    validates every builder's chart."""
    datasets: dict[str, pd.DataFrame] = {}
    # enable() switches Altair at once, not on entering: only under the lock
    with (
        _CONVERTING,
        alt.theme.enable(theme),
        alt.data_transformers.enable("named_frames", datasets=datasets, placed=placed),
    ):
        spec = chart.to_dict(validate=False)
    # Altair writes a chart's inline values (alt.InlineData) as a dataset of records:
    # Streamlit would turn those into a DataFrame, then Arrow, on every draw
    inline = {
        name: pa.Table.from_pylist(records)
        for name, records in spec.get("datasets", {}).items()
        if isinstance(records, list)
    }
    if datasets or inline:
        spec["datasets"] = {**spec.get("datasets", {}), **inline, **datasets}
    return spec


def finished(chart: alt.TopLevelMixin, *, presenting: bool = False, placed: tuple = ()) -> dict:
    """``chart`` as the app draws it: :func:`vega_lite` under the app's theme, sized by
    its kind (:data:`AUTOSIZE` for a single or layered view); ``placed`` as there."""
    spec = vega_lite(chart, theme=PRESENTER_THEME if presenting else THEME, placed=placed)
    if not COMPOSITE.intersection(spec):  # Vega-Lite fits single and layered views only
        spec.setdefault("autosize", AUTOSIZE)
    return spec


#: The plain values a chart's cache key may hold (:func:`chart_spec`).
PLAIN = (str, int, float, bool, type(None))


def check_plain(value: object, where: str = "chart key") -> None:
    """Raise TypeError unless ``value`` is a plain value or a tuple of them, nested: a
    chart's cache key hashes fast and means the same on every run (no frame, no array)."""
    if isinstance(value, tuple):
        for item in value:
            check_plain(item, where)
    elif not isinstance(value, PLAIN):
        raise TypeError(
            f"{where}: {type(value).__name__} is not a plain value (str, int, float, bool, "
            "None or a tuple of them): pass what the frame is made from, not the frame"
        )


def description_key(described: tuple) -> str:
    """A short key for the description of a chart (plain values only: their ``repr`` is
    the same on every run and every machine): its BLAKE2b digest, 128 bits. Streamlit
    hashes a string at once, while it walks a nested tuple of some hundred values item by
    item (a third of a seen-value rerun's CPU on the variance page, measured with yappi)."""
    check_plain(described)
    return hashlib.blake2b(repr(described).encode(), digest_size=16).hexdigest()


@st.cache_resource(max_entries=SPEC_CACHE_ENTRIES, show_spinner=False)
def chart_spec(*, key: str, _build: Callable[[], dict], presenting: bool) -> dict:
    """The finished spec (:func:`finished`) ``_build`` makes, cached for the whole server
    under ``key``: one object shared by every session, never changed in place.

    ``key`` is the digest (:func:`description_key`) of a description of the chart in
    plain values: the chart's key, the builder's and the frame function's qualified
    names, the frame function's arguments (not for a ``swap_data`` chart), the chart's
    words and the builder's options (:func:`drawn` writes it). ``_build`` is not hashed
    (Streamlit skips an argument whose name starts with an underscore): it runs on a miss
    only. The arguments are keywords: Streamlit reads a function's signature for each
    positional argument of a call, a fifth of a cache hit's CPU.
    """
    return _build()


@st.cache_resource(max_entries=SPEC_CACHE_ENTRIES, show_spinner=False)
def chart_data(*, key: str, _frame: Callable[[], pd.DataFrame | tuple]) -> dict[str, pa.Table]:
    """The datasets of a ``swap_data`` chart (:func:`frame_datasets` of ``_frame()``),
    cached for the whole server under ``key``: the digest of the frame function's name
    and arguments. Shared by every session, as :func:`chart_spec`'s specs (Arrow tables
    are immutable)."""
    return frame_datasets(_frame())


def function_name(fn: Callable) -> str:
    """A module-level function's qualified name (``ui.saturation.charts.weight_bars``).

    Raises
    ------
    TypeError
        If ``fn`` is a lambda or a local function (its name does not identify it).
    """
    name = f"{fn.__module__}.{fn.__qualname__}"
    if "<" in name:
        raise TypeError(f"chart builders and frames must be module-level functions, got {fn}")
    return name


def for_drawing(
    spec: dict, *, marker: int | float | None = None, datasets: dict[str, pa.Table] | None = None
) -> dict:
    """``spec`` as it is drawn: a new top level whose datasets are the spec's, then
    ``datasets`` (a ``swap_data`` chart's frames), then the learner's value as the one row
    of the marker's dataset (:data:`ui.common.charts.MARKER_DATASET`). ``spec`` itself,
    shared by every session (:func:`chart_spec`), is left as it is: so is the one nested
    part ``st.vega_lite_chart`` writes into, the top-level colour encoding (Streamlit
    1.67 writes a null legend title as " "), which the drawing gets a copy of."""
    drawing = {**spec.get("datasets", {}), **(datasets or {})}
    if marker is not None:
        drawing[MARKER_DATASET] = pa.table({"d": [marker]})
    out = {**spec, "datasets": drawing} if drawing else dict(spec)
    color = spec.get("encoding", {}).get("color")
    if isinstance(color, dict):
        color = {**color}
        if isinstance(color.get("legend"), dict):
            color["legend"] = {**color["legend"]}
        out["encoding"] = {**spec["encoding"], "color": color}
    return out


def drawn(
    key: str,
    builder: Callable[..., alt.TopLevelMixin],
    frame: functools.partial,
    text: ChartText,
    *,
    options: dict[str, object] | None = None,
    marker: int | float | None = None,
    presenting: bool = False,
    swap_data: bool = False,
) -> dict:
    """The spec of chart ``key`` as it is drawn: ``builder(frame(), text, **options)``,
    with the d_k marker layered last if ``marker`` is given (:func:`for_drawing`),
    finished once per description for the whole server (:func:`chart_spec`).

    ``swap_data``: the builder draws the frames ``frame()`` makes as they are and derives
    nothing from their values (its spec is the same for every input of the frame
    function: each such builder has a test that two inputs give one spec, and its page a
    test that a new value sends the same spec). Its spec is then finished once per chart,
    words and options, and the frames join it as datasets (:func:`chart_data`).

    Raises
    ------
    TypeError
        If ``builder`` or ``frame.func`` is not a module-level function, or an argument
        of ``frame`` or an option is not a plain value (:func:`check_plain`).
    """
    options = options or {}
    frame_name = function_name(frame.func)
    chart = (
        key,
        function_name(builder),
        frame_name,
        text.entries,
        tuple(sorted(options.items())),
        marker is not None,
    )
    inputs = (frame.args, tuple(sorted(frame.keywords.items())))
    check_plain((chart, inputs), f"chart {key}")

    def build(made: pd.DataFrame | tuple) -> alt.TopLevelMixin:
        made_chart = builder(made, text, **options)
        return made_chart + d_marker() if marker is not None else made_chart

    if not swap_data:
        spec = chart_spec(
            key=description_key((*chart, *inputs)),
            _build=lambda: finished(build(frame()), presenting=presenting),
            presenting=presenting,
        )
        return for_drawing(spec, marker=marker)

    def skeleton() -> dict:
        made = frame()
        placed = made if isinstance(made, tuple) else (made,)
        return finished(build(made), presenting=presenting, placed=placed)

    spec = chart_spec(
        key=description_key(("swap_data", *chart)), _build=skeleton, presenting=presenting
    )
    made = chart_data(key=description_key((frame_name, *inputs)), _frame=frame)
    return for_drawing(spec, marker=marker, datasets=made)


def text_table(records: list[dict[str, str]]) -> pa.Table:
    """A static table of text for ``st.table``, one record per row: each record's first
    field labels its row (the index, named by that field's key), the others are its
    columns. The Arrow table Streamlit would make of that DataFrame (``to_pandas()`` gives
    the DataFrame back), cached for the whole server by the records' text: a seen table
    costs a digest, where the DataFrame and its conversion took ~0.9 ms a table on every
    rerun (three on the training page). Draw it with :func:`ui.common.workshop.draw_table`."""
    key = description_key(tuple(tuple(record.items()) for record in records))
    return _arrow_text_table(key=key, _records=records)


@st.cache_resource(max_entries=128, show_spinner=False)
def _arrow_text_table(*, key: str, _records: list[dict[str, str]]) -> pa.Table:
    """:func:`text_table`'s table, under ``key``, the digest of ``_records``
    (:func:`description_key`)."""
    first, *columns = _records[0]
    frame = pd.DataFrame(
        {column: [r[column] for r in _records] for column in columns},
        index=pd.Index([r[first] for r in _records], name=first, dtype=object),
        dtype=object,
    )
    return pa.Table.from_pandas(frame)
