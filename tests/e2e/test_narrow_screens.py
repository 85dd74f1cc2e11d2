"""Every page on a phone (390 x 844, touch), on a laptop with the sidebar open (800 px
of main area) and in an 800-px window with the sidebar open: nothing overflows sideways, charts fit their boxes, no chart text is cut
with an ellipsis, and the page's main control works by tap.

Pages come from ui.common.pages.PAGES, so a page is covered once it is registered. Its
tap target is the ``×2`` button of its first halving input (``*_double``), or the one
named in TAP_CONTROL. Screenshots go to artifacts/narrow-<page>-<width>.png.

Chart text is read where Vega draws it: the canvas renderer's ``fillText`` calls are
recorded per canvas (reset by the ``clearRect`` that starts each redraw), and an SVG
chart's ``<text>`` nodes are read directly. Vega marks a truncated title, legend or axis
label with "…", so any recorded text holding one was cut. An SVG chart's text that reaches
past the drawing's edge (two legends side by side, wider than a phone) is cut off there.
"""

from __future__ import annotations

import json

import pytest

from ui.common.pages import PAGES

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}
#: Width of the main area next to an open sidebar (a small laptop).
LAPTOP_MAIN = 800
LAPTOP_HEIGHT = 900
#: page name -> key of the button to tap, for a page without a ``*_double`` button.
TAP_CONTROL: dict[str, str] = {
    # the worked example's d_k: its third option
    "home": ".st-key-example_d_k [role='radiogroup'] > :nth-child(3) [data-testid='stRadioOption']",
    # no ×2 button here: the head number's "+" steps to the next head
    "real_models": ".st-key-head [data-testid='stNumberInputStepUp']",
}

#: Known narrow-screen defects, still to fix (the test reports them as xfail until then).
KNOWN_DEFECTS: dict[str, str] = {}


def _pages():
    return [
        pytest.param(
            p,
            id=p.name,
            marks=[pytest.mark.xfail(reason=KNOWN_DEFECTS[p.name], strict=True)]
            if p.name in KNOWN_DEFECTS
            else [],
        )
        for p in PAGES
    ]


#: Per chart: its box, the drawn canvas/svg box, and the text drawn on it.
CHART_TEXTS_JS = """
(sel) => Array.from(document.querySelectorAll(sel)).map((chart) => {
  const drawn = chart.querySelector('canvas, svg.marks, svg');
  const texts = !drawn ? [] : drawn.tagName.toLowerCase() === 'canvas'
    ? (drawn.__e2eTexts || [])
    : Array.from(drawn.querySelectorAll('text')).map((el) => ({
        text: el.textContent, fill: getComputedStyle(el).fill || el.getAttribute('fill')}));
  const box = chart.getBoundingClientRect();
  const own = drawn ? drawn.getBoundingClientRect() : box;
  // an SVG chart's text that runs past the drawing's right edge is cut off there
  const offEdge = !drawn || drawn.tagName.toLowerCase() === 'canvas' ? [] :
    Array.from(drawn.querySelectorAll('text')).filter((el) => {
      const r = el.getBoundingClientRect();
      return r.width > 0 && r.right > own.right + 2;
    }).map((el) => el.textContent);
  return {container: [box.left, box.right], drawn: [own.left, own.right], texts, offEdge};
})
"""

#: Horizontal overflow of the document and of Streamlit's scrolling main area.
OVERFLOW_JS = """
() => {
  const out = {};
  const doc = document.documentElement;
  out.document = doc.scrollWidth - doc.clientWidth;
  for (const id of ['stMain', 'stAppViewContainer', 'stMainBlockContainer']) {
    const el = document.querySelector(`[data-testid='${id}']`);
    if (el) out[id] = el.scrollWidth - el.clientWidth;
  }
  // a formula or table wider than its box must scroll inside it, not run off the edge
  out.clipped = Array.from(document.querySelectorAll(
      ".katex-display, [data-testid='stTable'], [data-testid='stDataFrame']"))
    .filter((el) => el.scrollWidth > el.clientWidth + 1 &&
      !['auto', 'scroll'].includes(getComputedStyle(el).overflowX)).length;
  return out;
}
"""

#: Elements wider than the viewport (for the failure message).
WIDE_ELEMENTS_JS = """
() => {
  const w = document.documentElement.clientWidth;
  const out = [];
  for (const el of document.querySelectorAll('[data-testid]')) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > w + 1) out.push(el.getAttribute('data-testid') + ':' +
      Math.round(r.right));
  }
  return out.slice(0, 8);
}
"""


def measure(app) -> dict:
    """Overflow in px (document, main area), charts wider than their box, cut texts."""
    overflow = app.page.evaluate(OVERFLOW_JS)
    charts = app.page.evaluate(CHART_TEXTS_JS, "[data-testid='stVegaLiteChart']")
    too_wide = [
        (i, round(c["drawn"][1] - c["container"][1], 1))
        for i, c in enumerate(charts)
        if c["drawn"][1] > c["container"][1] + 1 or c["drawn"][0] < c["container"][0] - 1
    ]
    cut = [(i, t["text"]) for i, c in enumerate(charts) for t in c["texts"] if "…" in t["text"]]
    off_edge = [(i, text) for i, c in enumerate(charts) for text in c["offEdge"]]
    return {
        "overflow": overflow,
        "too_wide": too_wide,
        "cut": cut,
        "off_edge": off_edge,
        "charts": len(charts),
    }


def _open_everything(app, spec) -> None:
    app.open(spec.url_path)
    app.draw_every_chart()


def _tap_target(app, spec):
    key = TAP_CONTROL.get(spec.name)
    main = app.page.locator("[data-testid='stMain']")
    if key is not None:
        return main.locator(f"{key}:visible")
    return main.locator("[class*='st-key-'][class*='_double'] button:visible").first


def _check_page(app, spec, label: str) -> None:
    _open_everything(app, spec)
    found = measure(app)
    app.screenshot(f"narrow-{spec.name}-{label}")
    with open(app.artifacts_dir / "narrow-measurements.jsonl", "a") as log:
        log.write(json.dumps({"page": spec.name, "at": label, **found}) + "\n")
    assert all(v <= 0 for v in found["overflow"].values()), (
        f"{spec.name} at {label}: horizontal overflow {found['overflow']}; elements past the "
        f"right edge: {app.page.evaluate(WIDE_ELEMENTS_JS)}"
    )
    assert not found["too_wide"], f"{spec.name} at {label}: charts wider than their box " + str(
        found["too_wide"]
    )
    assert not found["cut"], f"{spec.name} at {label}: chart text cut with …: {found['cut']}"
    assert not found["off_edge"], (
        f"{spec.name} at {label}: chart text past the chart's edge: {found['off_edge']}"
    )
    if not found["charts"]:  # a page without charts has nothing to rerun
        return
    target = _tap_target(app, spec)
    assert target.count(), f"{spec.name}: no main control to tap"
    target.scroll_into_view_if_needed()
    box = target.bounding_box()
    assert box and box["width"] >= 40 and box["height"] >= 32, f"tap target too small: {box}"
    before, after = app.interact(target.tap)
    assert before != after, f"tapping the main control of {spec.name} changed no chart"
    app.assert_healthy()


@pytest.fixture
def phone(make_app, canvas_text_js):
    """An AppDriver in a phone-sized, touch, mobile-emulating context."""
    return make_app(
        viewport=PHONE,
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
        init_script=canvas_text_js,
    )


@pytest.fixture
def laptop(make_app, canvas_text_js):
    """An AppDriver on a 1100-px window with touch; the test widens it until the main
    area beside the open sidebar is LAPTOP_MAIN px."""
    return make_app(
        viewport={"width": 1100, "height": LAPTOP_HEIGHT},
        has_touch=True,
        init_script=canvas_text_js,
    )


def sidebar_width(app) -> float:
    return app.page.evaluate(
        "() => document.querySelector(\"[data-testid='stSidebar']\").getBoundingClientRect().width"
    )


def main_width(app) -> float:
    return app.page.evaluate(
        "() => document.querySelector(\"[data-testid='stMain']\").getBoundingClientRect().width"
    )


@pytest.mark.parametrize("spec", _pages())
def test_phone(phone, spec):
    phone.open(spec.url_path)
    expanded = phone.page.locator("[data-testid='stSidebar'][data-collapsed='false']")
    assert expanded.count() == 0, "the sidebar covers the page on arrival on a phone"
    _check_page(phone, spec, "390")


@pytest.mark.parametrize("spec", _pages())
def test_laptop_with_sidebar(laptop, spec):
    laptop.open(spec.url_path)
    expanded = laptop.page.locator("[data-testid='stSidebar'][data-collapsed='false']")
    assert expanded.count() == 1, "the sidebar should start open on a laptop"
    width = round(sidebar_width(laptop)) + LAPTOP_MAIN
    laptop.page.set_viewport_size({"width": width, "height": LAPTOP_HEIGHT})
    assert abs(main_width(laptop) - LAPTOP_MAIN) <= 2, main_width(laptop)
    _check_page(laptop, spec, "800")


@pytest.mark.parametrize("spec", _pages())
def test_800_px_window_with_sidebar(laptop, spec):
    """An 800-px window with the sidebar open: the main area is about 500 px, and
    half-width charts side by side are narrower than a phone's."""
    laptop.page.set_viewport_size({"width": 800, "height": LAPTOP_HEIGHT})
    laptop.open(spec.url_path)
    expanded = laptop.page.locator("[data-testid='stSidebar'][data-collapsed='false']")
    assert expanded.count() == 1, "the sidebar should start open in an 800-px window"
    _check_page(laptop, spec, "800-window")
