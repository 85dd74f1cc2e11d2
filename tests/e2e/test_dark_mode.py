"""Dark theme: from the system setting and from the app menu, charts follow it.

Chart text takes the theme's ink (``ui.common.charts.INK``: chosen from the background
Streamlit's chart theme gives the chart), as long as no builder pins a colour; the test
reads the fill Vega draws each axis label with (an SVG chart's ``<text>``, or a canvas
chart's recorded ``fillText``). tests/e2e/test_accessibility.py measures every chart text.
"""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.e2e

PAGE = "variance"
#: Axis tick labels: numbers such as "0.1", "1,024", "−20".
TICK = re.compile(r"^[−-]?[\d.,]+$")
APP_BACKGROUND_JS = (
    "() => getComputedStyle(document.querySelector(\"[data-testid='stApp']\")).backgroundColor"
)


def luminance(css: str) -> float:
    """Relative luminance (0 black … 1 white) of ``#rrggbb`` or ``rgb(a)(r, g, b, …)``."""
    if css.startswith("#"):
        rgb = [int(css[i : i + 2], 16) for i in (1, 3, 5)]
    else:
        rgb = [float(v) for v in re.findall(r"[\d.]+", css)[:3]]
    lin = [
        (c / 255) / 12.92 if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb
    ]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


#: Text Vega drew on each chart, with its fill: ``<text>`` nodes of an SVG chart, the
#: recorded ``fillText`` calls of a canvas chart.
CHART_TEXT_FILLS_JS = """
() => Array.from(document.querySelectorAll("[data-testid='stVegaLiteChart']")).flatMap((chart) => {
  const canvas = chart.querySelector('canvas');
  if (canvas) return canvas.__e2eTexts || [];
  return Array.from(chart.querySelectorAll('svg text')).map((el) => ({
    text: el.textContent, fill: el.getAttribute('fill') || getComputedStyle(el).fill}));
})
"""


def tick_fills(app) -> list[str]:
    texts = app.page.evaluate(CHART_TEXT_FILLS_JS)
    return [t["fill"] for t in texts if TICK.match(t["text"])]


def background(app) -> float:
    css = app.page.evaluate(APP_BACKGROUND_JS)
    return luminance(css)


def _assert_dark(app) -> None:
    app.draw_every_chart()
    assert background(app) < 0.05, "the app background is not dark"
    fills = tick_fills(app)
    assert fills, "no axis label was drawn"
    dark = sorted({f for f in fills if luminance(f) < 0.4})
    assert not dark, f"axis labels drawn in dark ink on the dark background: {dark}"


def test_dark_system_setting(make_app, canvas_text_js):
    app = make_app(color_scheme="dark", init_script=canvas_text_js)
    app.open(PAGE)
    _assert_dark(app)
    app.screenshot("dark-system-variance", full_page=False)


def test_dark_from_the_app_menu(make_app, canvas_text_js):
    app = make_app(color_scheme="light", init_script=canvas_text_js)
    app.open(PAGE)
    assert background(app) > 0.9, "the light system setting should give a light app"
    app.draw_every_chart()
    assert all(luminance(f) < 0.4 for f in tick_fills(app)), "light theme: axis labels dark"
    app.page.locator("[data-testid='stMainMenu']").click()
    app.page.get_by_role("menuitemradio", name="Dark").or_(
        app.page.get_by_text("Dark", exact=True)
    ).first.click()
    app.page.wait_for_function(
        f"() => ({APP_BACKGROUND_JS})() !== 'rgb(255, 255, 255)'",
        timeout=10_000,
    )
    app.page.keyboard.press("Escape")
    app.wait_charts_rendered()
    _assert_dark(app)
    app.screenshot("dark-menu-variance", full_page=False)
