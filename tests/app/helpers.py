"""AppTest helpers: run one page of the app, in a language, with query parameters."""

from __future__ import annotations

import json
import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30


def run_page(script: str | None = None, reveal: bool = True, **params: str | list[str]) -> AppTest:
    """Run app.py, switch to ``script`` (e.g. "app_pages/variance.py") with ``params``.

    With ``reveal`` every "predict first" question is skipped so all charts are drawn.
    """
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in params.items():
        at.query_params[key] = value
    if script is not None:
        if _url_path(script) != Path(script).stem:
            # AppTest finds a page before the first run only by its file name
            at.run()
        at.switch_page(script)
    at.run()
    if reveal:
        reveal_all(at)
    return at


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


def open_code_panels(at: AppTest) -> AppTest:
    """Open every "Show the code" panel under a chart (closed, a panel draws nothing inside)
    and rerun: its state is the session value of its key, ``<chart key>_code``."""
    for panel in at.expander:
        key = panel.proto.id.split("-", 2)[-1]
        if key.endswith("_code"):
            at.session_state[key] = True
    return at.run()


def page_params(script: str) -> tuple[str, ...]:
    """The query parameters of the page ``script``: its table in the registry, but those
    of every page (language, seed, presenter mode and step, rooms)."""
    from ui.common.pages import PAGES

    spec = next(p for p in PAGES if p.script == script)
    return tuple(sorted(p.key for p in spec.params))


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
