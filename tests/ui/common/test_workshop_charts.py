"""workshop.chart: a deferred builder call draws what ``st.altair_chart`` of the built
chart draws; the learner's d_k travels as the marker's dataset beside a cached spec."""

import json

import altair as alt
import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from ui.common import specs
from ui.common.charts import INK, MARKER_DATASET, TEXT_INK, d_marker
from ui.common.pages import PAGES


def side(n: int) -> pd.DataFrame:
    """A row of ``n`` equal weights (a frame function: module-level, plain arguments)."""
    return pd.DataFrame({"key": range(1, n + 1), "weight": [1 / n] * n})


def _page(deferred: bool, present: bool, rows: int) -> None:
    """Draws one chart through workshop.chart by its key (twice: the second a cache hit),
    or the same charts with st.altair_chart (run by AppTest in its own namespace)."""
    import functools

    import streamlit as st

    from tests.ui.common.test_workshop_charts import side
    from ui.common import specs, workshop
    from ui.common.i18n import chart_text
    from ui.saturation.charts import weight_bars

    st.session_state["present"] = present
    words = {"label": "l", "n": rows, "max": "0.2", "h": "1.6"}
    keys = ("saturation.row_unscaled", "saturation.row_scaled")
    if deferred:
        for key in keys:
            workshop.chart(
                key, weight_bars, functools.partial(side, rows), options={"color": "#0072B2"},
                **words,
            )  # fmt: skip
    else:
        config = dict(specs.THEME_CHART_CONFIG)
        if present:
            for part, sizes in specs.PRESENTER_CHART_CONFIG.items():
                config[part] = {**config.get(part, {}), **sizes}
        for key in keys:
            chart = (
                weight_bars(side(rows), chart_text(key, **words), color="#0072B2")
                .configure(**config)
                .properties(usermeta=specs.SVG_RENDERER, padding=specs.PADDING)
            )
            if not {"autosize", *specs.COMPOSITE}.intersection(chart.to_dict()):
                chart = chart.properties(autosize=specs.AUTOSIZE)
            st.altair_chart(chart, width="stretch", key=key.replace(".", "_"))


def _decoded(proto) -> dict:
    """A chart element as JSON, its datasets decoded and named by their place in the spec
    (the browser matches them by place too)."""
    spec = json.loads(proto.spec)
    tables = {ds.name: pa.ipc.open_stream(ds.data.data).read_all() for ds in proto.datasets}
    text = json.dumps(spec, sort_keys=True)
    named = [n for n in tables if n != MARKER_DATASET]  # the marker keeps its name
    for i, name in enumerate(sorted(named, key=lambda n: text.find(f'"{n}"'))):
        text = text.replace(f'"{name}"', f'"dataset-{i}"')
        tables[f"dataset-{i}"] = tables.pop(name)
    tables = {name: table.to_pydict() for name, table in tables.items()}
    return {"spec": json.loads(text), "datasets": tables, "theme": proto.theme}


def _charts(deferred: bool, present: bool, rows: int = 5) -> list[dict]:
    at = AppTest.from_function(_page, args=(deferred, present, rows), default_timeout=30).run()
    assert not at.exception, at.exception
    return [_decoded(c.proto) for c in at.get("vega_lite_chart")]


@pytest.mark.parametrize("present", [False, True])
def test_deferred_chart_draws_what_altair_chart_draws(present):
    deferred = _charts(True, present)
    assert len(deferred) == 2
    assert deferred == _charts(False, present)


def test_presenter_mode_draws_larger_chart_text():
    presenting, plain = _charts(True, True)[0], _charts(True, False)[0]
    assert presenting["spec"]["config"]["axis"]["labelFontSize"] == 15
    assert "labelFontSize" not in plain["spec"]["config"]["axis"]
    for chart in (presenting, plain):  # the theme's ink either way
        assert chart["spec"]["config"]["axis"]["labelColor"] == INK.to_dict()


def _contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two ``#rrggbb`` colours."""

    def luminance(color: str) -> float:
        rgb = [int(color[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_every_drawn_chart_writes_its_text_in_the_theme_ink_as_svg():
    """Axis, legend, facet-header and subtitle text and text marks take the ink of the
    chart's background (Streamlit's light #FFFFFF and dark #171614), ≥ 4.5:1 (WCAG AA);
    Vega draws SVG. The browser check is tests/e2e/test_accessibility.py."""
    assert _contrast(TEXT_INK["light"], "#FFFFFF") >= 4.5
    assert _contrast(TEXT_INK["dark"], "#171614") >= 4.5
    assert INK.to_dict() == {
        "expr": f"luminance(background) < 0.5 ? '{TEXT_INK['dark']}' : '{TEXT_INK['light']}'"
    }
    drawn = specs.for_drawing(specs.finished(d_marker(), presenting=True), marker=8)
    config = drawn["config"]
    for part, key in [("axis", "labelColor"), ("axis", "titleColor"), ("legend", "labelColor"),
                      ("legend", "titleColor"), ("header", "labelColor"), ("title", "subtitleColor"),
                      ("text", "color")]:  # fmt: skip
        assert config[part][key] == INK.to_dict(), (part, key)
    assert config["title"]["fontSize"] == 19  # presenter mode's sizes kept beside the ink
    assert drawn["usermeta"] == {"embedOptions": {"renderer": "svg"}}
    # room for a title's glyphs, and a plot as tall as its height whatever its title's lines
    assert drawn["padding"]["top"] >= 10 and drawn["autosize"]["type"] == "fit-x"
    # a composite chart keeps Vega-Lite's own sizing (fit-x would reach its facets)
    facet = (
        alt.Chart(pd.DataFrame({"a": [1], "b": [2]}))
        .mark_point()
        .encode(x=alt.X("a:Q"))
        .facet(column=alt.Column("b:N"))
    )
    assert "autosize" not in specs.finished(facet)


def test_inputs_that_differ_get_different_specs():
    five, six = _charts(True, False, rows=5)[0], _charts(True, False, rows=6)[0]
    assert len(five["datasets"]["dataset-0"]["key"]) == 5
    assert len(six["datasets"]["dataset-0"]["key"]) == 6


def test_a_chart_is_described_by_plain_values():
    """Builders and frame functions are named by their module and name (a lambda has no
    such name); a chart's key holds no frame or array: nothing slow to hash."""
    with pytest.raises(TypeError, match="module-level"):
        specs.function_name(lambda: d_marker())
    assert specs.function_name(d_marker) == "ui.common.charts.d_marker"
    specs.check_plain(("a", 1, 2.5, None, True, (("x", "y"),)))
    with pytest.raises(TypeError, match="DataFrame is not a plain value"):
        specs.check_plain(("a", (pd.DataFrame(),)))


def test_a_description_keys_the_cache_by_its_digest():
    """The cache key is the digest of the description's repr: the same for equal
    descriptions (in any process: a pinned value), different when any value differs,
    including 1 against 1.0 and ½ against ½ + 2⁻⁵³."""
    described = ("saturation.overflow", "f", (10, 0.5, 0), (("title", "T"),), True)
    assert specs.description_key(described) == specs.description_key(tuple(described))
    assert specs.description_key(("a", 1, 0.5, None)) == "1ef36f6e8723b73517d17433168e2a4d"
    others = [("a", 1.0, 0.5, None), ("a", 1, 0.5 + 2**-53, None), ("a", 1, 0.5, False)]
    keys = {specs.description_key(d) for d in [("a", 1, 0.5, None), *others]}
    assert len(keys) == 4 and all(len(k) == 32 for k in keys)


def test_frames_become_named_datasets():
    df = pd.DataFrame({"d": [1, 2], "v": [3.0, 4.0]})
    chart = alt.layer(
        alt.Chart(df).mark_line().encode(x=alt.X("d:Q"), y=alt.Y("v:Q")),
        alt.Chart(df).mark_point().encode(x=alt.X("d:Q"), y=alt.Y("v:Q")),
        d_marker(),
    )
    spec = specs.vega_lite(chart)
    (name,) = spec["datasets"]  # one frame, drawn twice: one dataset
    assert spec["datasets"][name].to_pandas().equals(df)
    assert [layer["data"]["name"] for layer in spec["layer"]] == [name, name, MARKER_DATASET]
    assert "continuousWidth" not in json.dumps(spec, default=str)  # no Altair default theme
    drawn = specs.for_drawing(spec, marker=64)
    assert drawn["datasets"][MARKER_DATASET].to_pydict() == {"d": [64]}


def test_drawing_leaves_the_shared_spec_as_it_is():
    """Every session draws the one cached spec (``chart_spec`` is a resource): the marker,
    a swap_data chart's frames, the recap's small version and Streamlit's own drawing
    (which writes a null legend title of the top-level colour as " ") touch new objects
    only."""
    import copy

    import streamlit as st

    from ui.recap.charts import small

    df = pd.DataFrame({"d": [1, 2], "v": [3.0, 4.0]})
    chart = alt.layer(
        alt.Chart(df).mark_line().encode(x=alt.X("d:Q"), y=alt.Y("v:Q"), color=alt.Color("v:N")),
        d_marker(),
    ).properties(title="T")
    spec = specs.finished(chart)
    before = copy.deepcopy(spec)
    for color in (alt.Color("v:N", title=None), alt.Color("v:N", legend=alt.Legend(title=None))):
        single = specs.finished(alt.Chart(df).mark_bar().encode(x=alt.X("d:Q"), color=color))
        kept = copy.deepcopy(single)
        st.vega_lite_chart(spec=specs.for_drawing(single, marker=8), width="stretch")
        assert single == kept
    frames = specs.frame_datasets(df)
    drawn = specs.for_drawing(spec, marker=64, datasets=frames)
    assert set(drawn["datasets"]) == {*spec["datasets"], *frames, MARKER_DATASET}
    tiny = small(drawn)
    assert "title" not in tiny and tiny["layer"][0]["encoding"]["color"]["legend"] is None
    assert tiny["datasets"] == drawn["datasets"]
    assert json.dumps(spec, default=str, sort_keys=True) == json.dumps(
        before, default=str, sort_keys=True
    )
    assert MARKER_DATASET not in spec["datasets"] and "title" in spec


def test_inline_values_become_arrow_datasets():
    """A chart's inline values (alt.InlineData) are an Arrow table in the spec, as frames
    are: Streamlit sends a table as it is, where records would go through pandas on every
    draw."""
    chart = (
        alt.Chart(alt.InlineData(values=[{"y": 1.0, "s": "a"}])).mark_rule().encode(y=alt.Y("y:Q"))
    )
    spec = specs.vega_lite(chart)
    (name,) = spec["datasets"]
    assert spec["data"]["name"] == name
    assert spec["datasets"][name].to_pylist() == [{"y": 1.0, "s": "a"}]


def test_placed_frames_are_named_by_their_place_and_left_to_the_drawing():
    """A swap_data chart: the frames the frame function made are named data-<i> and left
    out of the spec (they travel beside it); a constant the builder makes stays in it."""
    first = pd.DataFrame({"d": [1, 2], "v": [3.0, 4.0]})
    second = pd.DataFrame({"d": [5], "v": [6.0]})
    constant = pd.DataFrame({"y": [0.5]})
    chart = alt.layer(
        alt.Chart(second).mark_point().encode(x=alt.X("d:Q"), y=alt.Y("v:Q")),
        alt.Chart(first).mark_line().encode(x=alt.X("d:Q"), y=alt.Y("v:Q")),
        alt.Chart(constant).mark_rule().encode(y=alt.Y("y:Q")),
    )
    spec = specs.vega_lite(chart, placed=(first, second))
    names = [layer["data"]["name"] for layer in spec["layer"]]
    assert names[:2] == ["data-1", "data-0"]
    assert list(spec["datasets"]) == [names[2]]  # the constant only
    assert spec["datasets"][names[2]].to_pandas().equals(constant)
    made = specs.frame_datasets((first, second))
    assert list(made) == ["data-0", "data-1"] and made["data-1"].to_pandas().equals(second)
    assert list(specs.frame_datasets(first)) == ["data-0"]  # one frame, not a tuple


def test_altair_is_switched_only_under_the_conversion_lock():
    """Altair's theme and data transformer are process-wide: a conversion waiting for the
    lock must not switch them under the one in progress (its frames would land in the
    other's datasets)."""
    import threading
    import time

    frame = pd.DataFrame({"d": [1], "v": [2.0]})
    chart = alt.Chart(frame).mark_point().encode(x=alt.X("d:Q"), y=alt.Y("v:Q"))
    before = (alt.data_transformers.active, alt.theme.active)
    done = []
    with specs._CONVERTING:
        waiting = threading.Thread(
            target=lambda: done.append(specs.vega_lite(chart, theme=specs.THEME, placed=(frame,)))
        )
        waiting.start()
        time.sleep(0.3)  # long enough to reach the lock
        assert not done and (alt.data_transformers.active, alt.theme.active) == before
    waiting.join(timeout=10)
    assert done and done[0]["data"] == {"name": "data-0"}


# --- the d_k marker: one cached spec serves every d_k ----------------------------------------
#: Pages whose d_k any integer can take (the training lab moves it to a power of two).
MARKED_PAGES = [
    p.url_path for p in PAGES if any(q.key == "d_k" and q.snap is None for q in p.params)
]


def _drawn(page: str, d_k: int) -> list[dict]:
    from tests.app.helpers import run_page

    at = run_page(f"app_pages/{page}.py", d_k=str(d_k))
    assert not at.exception, at.exception
    return [_decoded(c.proto) for c in at.get("vega_lite_chart")]


def _marker(chart: dict) -> list | None:
    """The d_k a drawn chart marks (the marker's dataset travels under its own name)."""
    spec = json.dumps(chart["spec"])
    if f'"{MARKER_DATASET}"' not in spec:
        return None
    return chart["datasets"][MARKER_DATASET]["d"]


@pytest.mark.parametrize("page", MARKED_PAGES)
def test_marker_moves_and_nothing_else_does(page):
    """A new d_k changes the marker's one row only: the marked charts' specs and their
    other datasets stay the same (one cached spec serves every d_k)."""
    first, second = _drawn(page, 200), _drawn(page, 300)
    marked = [(a, b) for a, b in zip(first, second, strict=True) if _marker(a) is not None]
    assert marked, f"no chart on {page} marks d_k"
    for a, b in marked:
        assert _marker(a) == [200] and _marker(b) == [300]
        assert a["spec"] == b["spec"]
        others = {k: v for k, v in a["datasets"].items() if k != MARKER_DATASET}
        assert others == {k: v for k, v in b["datasets"].items() if k != MARKER_DATASET}


def test_a_text_table_labels_its_rows_and_is_made_once_per_text():
    """The first field of each record labels its row (the index Streamlit draws as row
    headers); the same text gives the same cached table, other text another."""
    records = [{"scaling": "none", "loss": "0.5"}, {"scaling": "÷√dₖ", "loss": "0.1"}]
    table = specs.text_table(records)
    frame = table.to_pandas()
    assert frame.index.name == "scaling" and list(frame.index) == ["none", "÷√dₖ"]
    assert list(frame.columns) == ["loss"] and frame.loc["÷√dₖ", "loss"] == "0.1"
    assert specs.text_table([dict(r) for r in records]) is table
    other = specs.text_table([{"scaling": "none", "loss": "0.6"}, records[1]])
    assert other is not table and other.to_pandas().loc["none", "loss"] == "0.6"
