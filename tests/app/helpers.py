"""AppTest helpers: run one page of the app, in a language, with query parameters.

:func:`page_run` is the session's one run of a page in a language (and, optionally, with
query parameters): the pinned-chart, chart-text and text suites read the same runs, so
each page runs once per language and state however many suites check it.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30


def run_page(script: str | None = None, reveal: bool = True, **params: str | list[str]) -> AppTest:
    """Run app.py, switch to ``script`` (e.g. "app_pages/variance.py") with ``params``.

    With ``reveal`` every "predict first" question is skipped so all charts are drawn.
    "Go deeper" is open unless ``params`` say ``deeper``.
    """
    params = {"deeper": "true", **params}
    at = _run(script, params)
    if reveal:
        reveal_all(at)
    return at


def _run(script: str | None, params: dict[str, str | list[str]]) -> AppTest:
    """:func:`run_page` without skipping questions (``params`` may hold ``reveal``)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in params.items():
        at.query_params[key] = value
    if script is not None:
        if _url_path(script) != Path(script).stem:
            # AppTest finds a page before the first run only by its file name
            at.run()
        at.switch_page(script)
    return at.run()


#: The widget kinds whose labels (and options' captions) a learner reads.
WIDGET_KINDS = (
    "number_input",
    "slider",
    "select_slider",
    "radio",
    "selectbox",
    "checkbox",
    "toggle",
    "button",
    "text_input",
    "text_area",
    "multiselect",
)


@dataclass(frozen=True)
class PageRun:
    """What one finished run of a page drew, kept after its AppTest is gone.

    ``tables``: the text of every cell, header and index of its tables and data frames;
    ``charts``: the protos of its Vega-Lite charts, in order (``proto.spec``,
    ``proto.datasets``, ``proto.theme``); ``labels``: every widget's label and its options'
    captions; ``elements``: the main area's leaf elements in reading order, as (type,
    text); ``exceptions`` and ``warnings``: the messages of those shown; ``steps``: in
    presenter mode, how many steps the page has (None otherwise).
    """

    charts: tuple
    labels: tuple[str, ...]
    tables: tuple[str, ...]
    elements: tuple[tuple[str, str], ...]
    exceptions: tuple[str, ...]
    warnings: tuple[str, ...]
    steps: int | None


def page_run(page: str, lang: str, **params: str) -> PageRun:
    """The run of ``page`` (url path, "home" for the home page) in ``lang`` with query
    ``params``, every question answered by the link (``reveal=1``) and "Go deeper" open
    (``deeper=true``), unless ``params`` say otherwise: run once per test session, then
    shared."""
    return _page_run(page, lang, tuple(sorted({"reveal": "1", "deeper": "true", **params}.items())))


@functools.cache
def _page_run(page: str, lang: str, params: tuple[tuple[str, str], ...]) -> PageRun:
    at = _run(SCRIPTS[page], {"lang": lang, **dict(params)})
    labels = []
    for kind in WIDGET_KINDS:
        for widget in getattr(at, kind):
            labels.append(widget.label)
            labels += list(getattr(widget.proto, "captions", []))
    elements = tuple(
        (node.type, node.value)
        for node in at.main
        if not hasattr(node, "children") and isinstance(getattr(node, "value", None), str)
    )
    tables = []
    for frame in [*(x.value for x in at.table), *(x.value for x in at.dataframe)]:
        tables += [str(c) for c in frame.columns] + [str(i) for i in frame.index]
        tables += [str(v) for v in frame.to_numpy().ravel()]
    return PageRun(
        charts=tuple(chart.proto for chart in at.get("vega_lite_chart")),
        labels=tuple(labels),
        tables=tuple(tables),
        elements=elements,
        exceptions=tuple(e.value for e in at.exception),
        warnings=tuple(warnings(at)),
        steps=next((len(w.options) for w in at.selectbox if w.key == "step"), None),
    )


def reveal_all(at: AppTest) -> AppTest:
    """Skip every open prediction question (each skip reruns the page)."""
    for _ in range(10):
        skips = [b for b in at.button if b.key and b.key.endswith("_skip")]
        if not skips:
            break
        skips[0].click().run()
    return at


def open_share_panel(at: AppTest) -> AppTest:
    """Open the sidebar's share panel (link, new seed, defaults) and rerun: closed, it
    draws nothing inside."""
    at.session_state["share_open"] = True
    return at.run()


def picture_svg(node) -> str | None:
    """The SVG markup of a picture element (:func:`ui.common.picture.beside_words`), or None
    if ``node`` is not one."""
    if node.type != "bidi_component" or node.proto.component_name != "lab_picture":
        return None
    return json.loads(node.proto.json)["svg"]


def pictures(at: AppTest) -> list[str]:
    """The SVG markup of every picture the last run drew."""
    return [svg for node in at if (svg := picture_svg(node)) is not None]


def code_panels(at: AppTest) -> list[str]:
    """The keys (``<chart key>_code``) of the "Data and code" panels the last run drew,
    one under each chart."""
    keys = [panel.proto.id.split("-", 2)[-1] for panel in at.expander]
    return [key for key in keys if key.endswith("_code")]


def open_code_panels(at: AppTest) -> AppTest:
    """Open every "Data and code" panel under a chart (closed, a panel draws nothing inside)
    and rerun: its state is the session value of its key."""
    for key in code_panels(at):
        at.session_state[key] = True
    return at.run()


def page_params(script: str) -> tuple[str, ...]:
    """The query parameters of the page ``script``: its table in the registry, but those
    of every page (language, seed, presenter mode and step, rooms)."""
    from ui.common.pages import PAGES

    spec = next(p for p in PAGES if p.script == script)
    return tuple(sorted(p.key for p in spec.params))


def _scripts() -> dict[str, str]:
    from ui.common.pages import PAGES

    return {p.url_path or "home": p.script for p in PAGES}


#: Pages by url path ("home" for the home page): their scripts.
SCRIPTS = _scripts()


def _url_path(script: str) -> str | None:
    from ui.common.pages import PAGES

    return next((p.url_path for p in PAGES if p.script == script), None)


def chart_data(at: AppTest) -> list[dict]:
    """Every Vega-Lite chart on the page as {"spec": dict, "datasets": {name: rows}}."""
    out = []
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        datasets = {ds.name: ds.data.data for ds in chart.proto.datasets}
        out.append({"spec": spec, "datasets": datasets, "raw": chart.proto.SerializeToString()})
    return out


def assert_swapped_in_place(before, after) -> None:
    """A chart drawn with ``swap_data`` at two inputs (two chart protos): the same spec,
    byte for byte, and the same dataset names (so the browser replaces the data in place
    instead of embedding the chart anew), with other data."""
    assert before.spec == after.spec
    assert [d.name for d in before.datasets] == [d.name for d in after.datasets]
    assert [d.data.data for d in before.datasets] != [d.data.data for d in after.datasets]


def chart_inputs(chart: dict) -> dict[str, float]:
    """The values a chart's inputs moved in the browser start from (:mod:`ui.common.live`):
    {name: value} of its parameters bound to a slider."""
    return {p["name"]: p["value"] for p in chart["spec"].get("params", []) if "bind" in p}


def warnings(at: AppTest) -> list[str]:
    return [w.value for w in at.warning]


CJK = re.compile(r"[\u4e00-\u9fff]")


def assert_page_in(at: AppTest, lang: str, n_charts: int, *, title: bool = True) -> list[dict]:
    """The run ended without an exception or a warning, drew ``n_charts`` charts, and its
    title (with ``title``) and every chart's alt text are in ``lang`` (Chinese characters
    exactly when ``lang == "zh"``). Returns the charts (:func:`chart_data`)."""
    zh = lang == "zh"
    assert not at.exception
    assert not warnings(at)
    if title:
        assert bool(CJK.search(at.title[0].value)) == zh
    charts = chart_data(at)
    assert len(charts) == n_charts
    for chart in charts:
        assert chart["spec"]["description"]
        assert bool(CJK.search(chart["spec"]["description"])) == zh
    return charts
