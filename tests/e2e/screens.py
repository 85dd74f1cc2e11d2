"""One browser pass per page, screen and language, read by the screen suites.

The narrow-screen, readable-chart and accessibility suites (``test_narrow_screens.py``,
``test_readable_charts.py``, ``test_accessibility.py``) look at the same pages on the same
screens. Each (page, screen, language) is loaded once per test session, in a fresh browser
context (the ``page_pass`` fixture of conftest.py, which keeps the results); everything the
three suites measure is measured in that one pass, and each suite's tests assert on the
measurements (:class:`PagePass`). A pass, in order:

1. open the page in the light theme, its questions answered by the link (``reveal=1``)
   and "Go deeper" open (``deeper=true``: every section),
   note whether the sidebar is open on arrival (on ``laptop``, widen the window until the
   main area beside the sidebar is 800 px), and draw every chart;
2. readable charts (phone and desktop): every axis's labels, the text marks, and every
   chart text with how far it reaches past its chart's top and left edge;
3. narrow screens (phone, laptop, 800-px window; English): horizontal overflow, charts
   wider than their box, cut chart texts, and a screenshot;
4. accessibility (desktop and phone; English): light, then dark, each with the window
   stretched to the page's height: axe-core, the contrast of every chart text and every
   selected button; then back to light at the window's own size;
5. narrow screens: tap the page's main control (this changes the page, so it comes last).

Every request to another host, every console error and any exception box are recorded for
the whole pass; each suite fails a test whose pass saw one.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ui.common.pages import PAGES

#: Browser contexts by screen name.
SCREENS = {
    "phone": {
        "viewport": {"width": 390, "height": 844},
        "device_scale_factor": 2,
        "is_mobile": True,
        "has_touch": True,
    },
    "desktop": {"viewport": {"width": 1400, "height": 1000}},
    # a 1100-px window with touch, widened until the main area beside the open sidebar is
    # LAPTOP_MAIN px
    "laptop": {"viewport": {"width": 1100, "height": 900}, "has_touch": True},
    "800-window": {"viewport": {"width": 800, "height": 900}, "has_touch": True},
}
#: The language of the narrow-screen and accessibility checks (the readable-chart checks
#: read both).
DEFAULT_LANG = "en"
#: Screens of each suite; the narrow-screen suite's with their names in screenshots.
NARROW = {"phone": "390", "laptop": "800", "800-window": "800-window"}
READABLE = ("phone", "desktop")
AUDITED = ("desktop", "phone")
#: Width of the main area next to an open sidebar (a small laptop).
LAPTOP_MAIN = 800
#: Pages with a base-10 log axis (the readable-chart suite saves their screenshots).
LOG_PAGES = ("variance", "gradients", "sqrt-vs-d", "training", "which-d")
#: page name -> the element to tap, for a page without a ``*_double`` button.
TAP_CONTROL: dict[str, str] = {
    # the worked example's d_k: its third option
    "home": ".st-key-example_d_k [role='radiogroup'] > :nth-child(3) [data-testid='stRadioOption']",
    # no ×2 button here: the head number's "+" steps to the next head
    "real_models": ".st-key-head [data-testid='stNumberInputStepUp']",
    # the head size's first option (dₕ = 16): its main control, the temperature, is a slider
    "language_model": ".st-key-d_h [role='radiogroup'] > :nth-child(1) [data-testid='stRadioOption']",
}
CHART_SELECTOR = "[data-testid='stVegaLiteChart']"

# --------------------------------------------------------------------------- narrow screens
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
  // a formula or table wider than its box (a table's is the wrapper inside its test id)
  // must scroll inside it, not run off the edge, and show by a faded edge that more of it
  // is hidden (ui/common/scroll_regions.html marks the side; a phone draws no scroll bar)
  const wide = Array.from(document.querySelectorAll(
      ".katex-display, [data-testid='stTable'] > div, [data-testid='stDataFrame']"))
    .filter((el) => el.scrollWidth > el.clientWidth + 1);
  out.clipped = wide.filter((el) =>
    !['auto', 'scroll'].includes(getComputedStyle(el).overflowX)).length;
  // (more than 4 px hidden: scroll_regions.html's HIDDEN_PX, less than a digit)
  out.noCue = wide.filter((el) => !el.matches("[data-testid='stDataFrame']") &&
    el.scrollLeft + el.clientWidth < el.scrollWidth - 4 &&
    !(el.getAttribute('data-scroll-more') || '').includes('right')).length;
  // and no edge fades over a box that hides 4 px or less there (KaTeX's multi-line formulas
  // are 2 px wider than their box: a faded last 40 px would cut a formula that fits)
  out.falseCue = wide.filter((el) =>
    el.scrollLeft + el.clientWidth >= el.scrollWidth - 4 &&
    (el.getAttribute('data-scroll-more') || '').includes('right')).length;
  // a metric's value too wide for its box is cut with an ellipsis ("0.02…")
  out.metricsCut = Array.from(document.querySelectorAll("[data-testid='stMetricValue'] div"))
    .filter((el) => el.scrollWidth > el.clientWidth + 1).length;
  // a row of pills or a segmented control does not wrap: too wide for its column, its
  // last options scroll out of sight
  out.optionsCut = Array.from(document.querySelectorAll("[data-testid='stButtonGroup'] > div"))
    .filter((el) => el.scrollWidth > el.clientWidth + 1).length;
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


def measure_narrow(app) -> dict:
    """Overflow in px (document, main area), charts wider than their box, cut texts."""
    overflow = app.page.evaluate(OVERFLOW_JS)
    charts = app.page.evaluate(CHART_TEXTS_JS, CHART_SELECTOR)
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


def _tap(app, name: str) -> dict:
    """Tap the page's main control: its ``×2`` button (or :data:`TAP_CONTROL`'s)."""
    main = app.page.locator("[data-testid='stMain']")
    key = TAP_CONTROL.get(name)
    if key is not None:
        target = main.locator(f"{key}:visible")
    else:
        target = main.locator("[class*='st-key-'][class*='_double'] button:visible").first
    if not target.count():
        return {"found": False}
    target.scroll_into_view_if_needed()
    box = target.bounding_box()
    before, after = app.interact(target.tap)
    return {"found": True, "box": box, "changed": before != after}


# --------------------------------------------------------------------------- readable charts
#: Per chart, per labelled axis: its aria-label and its labels (text, box, shown).
AXES_JS = """
(sel) => Array.from(document.querySelectorAll(sel)).map((chart) =>
  Array.from(chart.querySelectorAll('g.role-axis')).map((g) => ({
    name: g.getAttribute('aria-label') || '',
    labels: Array.from(g.querySelectorAll('.role-axis-label text')).map((t) => {
      const r = t.getBoundingClientRect();
      const shown = r.width > 0 && Number(getComputedStyle(t).opacity) > 0;
      return {text: t.textContent, box: [r.left, r.top, r.right, r.bottom], shown};
    }),
  })).filter((axis) => axis.name && axis.labels.length))
"""
#: Per chart: the text marks (not axis, legend or title text) with their boxes.
MARK_TEXTS_JS = """
(sel) => Array.from(document.querySelectorAll(sel)).map((chart) =>
  Array.from(chart.querySelectorAll('g.mark-text.role-mark text')).map((t) => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent, box: [r.left, r.top, r.right, r.bottom]};
  }))
"""
#: Per chart text: the text, and how far it reaches past its chart's top and left edge (px).
CUT_JS = """
(sel) => Array.from(document.querySelectorAll(sel)).flatMap((chart, i) => {
  const svg = chart.querySelector('svg');
  if (!svg) return [];
  const edge = svg.getBoundingClientRect();
  return Array.from(svg.querySelectorAll('text')).map((t) => {
    const r = t.getBoundingClientRect();
    return {chart: i, text: t.textContent || '', shown: r.width > 0,
            above: edge.top - r.top, left: edge.left - r.left};
  });
})
"""

# --------------------------------------------------------------------------- accessibility
AXE_JS = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
#: WCAG 2 AA contrast for normal-size text (1.4.3); chart text is 9–19 px.
MIN_CONTRAST = 4.5
IMPACTS = ("serious", "critical")
THEMES = ("light", "dark")
#: Tallest window the page is stretched to for axe (px); the longest page is ~12,000.
MAX_HEIGHT = 20_000

# Colour helpers shared by the measurements below: any CSS colour -> [r, g, b, a] (the
# browser parses it), source-over compositing, WCAG 2 relative luminance and contrast.
_COLOR_JS = """
const __ctx = document.createElement('canvas').getContext('2d');
const rgba = (css) => {
  if (!css || css === 'none' || css.startsWith('url(')) return null;
  __ctx.fillStyle = '#010203';
  __ctx.fillStyle = css;
  const v = __ctx.fillStyle;
  if (v === '#010203' && css.replace(/\\s/g, '') !== '#010203') return null;
  if (v.startsWith('#')) {
    return [1, 3, 5].map((i) => parseInt(v.slice(i, i + 2), 16)).concat([1]);
  }
  const n = v.match(/[\\d.]+/g).map(Number);
  return [n[0], n[1], n[2], n.length > 3 ? n[3] : 1];
};
const over = (top, alpha, bottom) =>
  [0, 1, 2].map((i) => top[i] * alpha + bottom[i] * (1 - alpha));
const luminance = (c) => {
  const lin = c.slice(0, 3).map((v) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : Math.pow((s + 0.055) / 1.055, 2.4);
  });
  return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2];
};
const contrast = (a, b) => {
  const [la, lb] = [luminance(a), luminance(b)];
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
};
const hex = (c) => '#' + c.slice(0, 3).map((v) => Math.round(v).toString(16).padStart(2, '0')).join('');
// what an element is drawn on: the background colours of its ancestors, over white
const backdrop = (el) => {
  const chain = [];
  for (let e = el; e && e.nodeType === 1; e = e.parentElement) chain.push(e);
  let bg = [255, 255, 255];
  for (const e of chain.reverse()) {
    const c = rgba(getComputedStyle(e).backgroundColor);
    if (c && c[3] > 0) bg = over(c, c[3], bg);
  }
  return bg;
};
// product of the opacities from el up to (and including) stop
const opacity = (el, stop) => {
  let a = 1;
  for (let e = el; e; e = e.parentElement) {
    a *= Number(getComputedStyle(e).opacity);
    if (e === stop) break;
  }
  return a;
};
"""

#: Per chart: canvas or SVG, and each visible text with its contrast against what lies
#: under its centre (rect marks painted before it, over the chart's background).
CHART_TEXT_CONTRAST_JS = f"""
(sel) => {{
{_COLOR_JS}
  return Array.from(document.querySelectorAll(sel)).map((chart, index) => {{
    const svg = chart.querySelector('svg.marks');
    if (!svg) return {{index, canvas: !!chart.querySelector('canvas'), texts: []}};
    const chartBg = backdrop(svg);
    const shapes = Array.from(svg.querySelectorAll(
      'g.mark-rect > path, g.mark-rect > rect, path.background')).map((el) => {{
        const style = getComputedStyle(el);
        const fill = rgba(style.fill);
        const alpha = fill ? fill[3] * Number(style.fillOpacity) * opacity(el, svg) : 0;
        return {{el, fill, alpha, box: el.getBoundingClientRect()}};
      }}).filter((s) => s.fill && s.alpha > 0);
    const texts = [];
    for (const el of svg.querySelectorAll('text')) {{
      const text = el.textContent.trim();
      const style = getComputedStyle(el);
      const fill = rgba(style.fill);
      const box = el.getBoundingClientRect();
      if (!text || !fill || box.width === 0 || style.visibility === 'hidden') continue;
      const alpha = fill[3] * Number(style.fillOpacity) * opacity(el, svg);
      if (alpha === 0) continue;  // drawn transparent: not shown (e.g. a label too wide)
      const x = box.left + box.width / 2, y = box.top + box.height / 2;
      let bg = chartBg;
      for (const s of shapes) {{
        const before = s.el.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING;
        const b = s.box;
        if (before && x >= b.left && x <= b.right && y >= b.top && y <= b.bottom) {{
          bg = over(s.fill, s.alpha, bg);
        }}
      }}
      const ink = over(fill, alpha, bg);
      const group = el.closest('g[class]');
      texts.push({{text: text.slice(0, 60), role: group ? group.getAttribute('class') : '',
                  ink: hex(ink), bg: hex(bg), ratio: contrast(ink, bg)}});
    }}
    return {{index, canvas: false, texts}};
  }});
}}
"""

#: Each visible, enabled primary (selected) button: its label's colour against its fill
#: (WCAG exempts a disabled control, as axe does).
BUTTON_CONTRAST_JS = f"""
() => {{
{_COLOR_JS}
  return Array.from(document.querySelectorAll("button[kind^='primary']"))
    .filter((b) => !b.disabled && b.getBoundingClientRect().width > 0 && b.innerText.trim())
    .map((b) => {{
      const bg = backdrop(b);
      const c = rgba(getComputedStyle(b).color);
      const ink = over(c, c[3], bg);
      return {{text: b.innerText.trim().slice(0, 40), ink: hex(ink), bg: hex(bg),
               ratio: contrast(ink, bg)}};
    }});
}}
"""

#: True once the app and every chart are drawn on a background of the wanted theme.
THEME_APPLIED_JS = f"""
(dark) => {{
{_COLOR_JS}
  const app = document.querySelector("[data-testid='stApp']");
  if (!app) return false;
  const bg = rgba(getComputedStyle(app).backgroundColor);
  if ((luminance(bg) < 0.5) !== dark) return false;
  return Array.from(document.querySelectorAll("[data-testid='stVegaLiteChart'] svg.marks"))
    .every((svg) => {{
      const c = rgba(getComputedStyle(svg).backgroundColor);
      return !c || c[3] === 0 || (luminance(c) < 0.5) === dark;
    }});
}}
"""

#: True when no finite CSS transition or animation is running: an open expander's header
#: fades its background over 150 ms after a theme switch, and axe read it mid-way once
#: (light background under dark-theme text). Endless ones (a spinner) are left out.
SETTLED_JS = """
() => document.getAnimations().every((a) =>
  a.playState !== "running" || a.effect?.getComputedTiming().iterations === Infinity)
"""

#: Height of the page's content (Streamlit's main area scrolls inside the window).
CONTENT_HEIGHT_JS = """
() => Math.max(document.documentElement.scrollHeight,
  ...Array.from(document.querySelectorAll(
    "[data-testid='stMain'], [data-testid='stAppViewContainer'], [data-testid='stSidebar'] > div"
  )).map((el) => el.scrollHeight))
"""

AXE_RUN_JS = """
async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => ({target: n.target.join(' '), summary: n.failureSummary})),
  }));
}
"""


def switch_theme(app, theme: str) -> None:
    app.page.emulate_media(color_scheme=theme)
    app.page.wait_for_function(THEME_APPLIED_JS, arg=theme == "dark", timeout=15_000)
    app.wait_charts_rendered()
    app.page.wait_for_function(SETTLED_JS, timeout=15_000)


def stretch(app, width: int) -> None:
    """Make the window as tall as the page, so that axe sees every element on screen."""
    height = min(MAX_HEIGHT, int(app.page.evaluate(CONTENT_HEIGHT_JS)))
    app.page.set_viewport_size({"width": width, "height": max(height, 844)})
    app.page.wait_for_timeout(300)
    app.wait_charts_rendered()
    app.page.wait_for_function(SETTLED_JS, timeout=15_000)


def audit(app, page: str, theme: str, width: int) -> dict:
    """axe's serious/critical violations, chart texts and primary buttons below
    MIN_CONTRAST, and canvas charts, for the page as it is drawn now."""
    if not app.page.evaluate("() => !!window.axe"):
        app.page.add_script_tag(path=str(AXE_JS))
    violations = [v for v in app.page.evaluate(AXE_RUN_JS) if v["impact"] in IMPACTS]
    charts = app.page.evaluate(CHART_TEXT_CONTRAST_JS, CHART_SELECTOR)
    low_text = [
        {"chart": c["index"], **t} for c in charts for t in c["texts"] if t["ratio"] < MIN_CONTRAST
    ]
    buttons = app.page.evaluate(BUTTON_CONTRAST_JS)
    return {
        "page": page,
        "theme": theme,
        "width": width,
        "axe": {v["id"]: len(v["nodes"]) for v in violations},
        "axe_details": violations,
        "charts": len(charts),
        "chart_texts": sum(len(c["texts"]) for c in charts),
        "canvas_charts": [c["index"] for c in charts if c["canvas"]],
        "low_chart_text": low_text,
        "low_buttons": [b for b in buttons if b["ratio"] < MIN_CONTRAST],
        "buttons": len(buttons),
    }


# --------------------------------------------------------------------------- the pass
@dataclass
class PagePass:
    """What one pass measured (see the module's docstring); a stage that failed leaves
    its fields empty and says why in ``errors[stage]``."""

    url_path: str
    screen: str
    lang: str
    #: Stage -> why it failed ("load": the page was not loaded and drawn; nothing else ran).
    errors: dict[str, str] = field(default_factory=dict)
    sidebar_open: bool | None = None  # on arrival
    main_width: float | None = None  # on laptop, once widened
    axes: list = field(default_factory=list)
    mark_texts: list = field(default_factory=list)
    cut_texts: list = field(default_factory=list)
    narrow: dict | None = None
    wide_elements: list = field(default_factory=list)
    tap: dict | None = None  # None: no chart on the page, nothing to rerun
    audits: list[dict] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)  # requests to another host
    exceptions: str = ""
    console_errors: list[str] = field(default_factory=list)

    def assert_healthy(self) -> None:
        """Fail unless the page was drawn with no exception box and no console error."""
        where = f"{self.url_path or 'home'} on {self.screen} ({self.lang})"
        if "load" in self.errors:
            pytest.fail(f"{where}: not loaded: {self.errors['load']}", pytrace=False)
        if self.exceptions:
            pytest.fail(f"{where}: Streamlit exception:\n{self.exceptions}", pytrace=False)
        if self.console_errors:
            joined = "\n".join(self.console_errors)
            pytest.fail(f"{where}: browser console errors:\n{joined}", pytrace=False)

    def stage(self, name: str) -> None:
        """Fail if stage ``name`` failed (after :meth:`assert_healthy`)."""
        self.assert_healthy()
        if name in self.errors:
            where = f"{self.url_path or 'home'} on {self.screen} ({self.lang})"
            pytest.fail(f"{where}: {name} failed: {self.errors[name]}", pytrace=False)


def _failure(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


#: What a stage may raise: Playwright's errors and timeouts, a failed wait (pytest.fail).
_STAGE_ERRORS = (Exception, pytest.fail.Exception)


def run_pass(app, url_path: str, screen: str, lang: str) -> PagePass:
    """One pass over ``url_path`` with ``app``, an AppDriver on a fresh context of
    ``SCREENS[screen]`` in the light theme."""
    spec = next(p for p in PAGES if p.url_path == url_path)
    result = PagePass(url_path, screen, lang)
    width = SCREENS[screen]["viewport"]["width"]
    host = app.base_url.split("://", 1)[1]

    def record(request) -> None:
        scheme, _, rest = request.url.partition("://")
        if scheme in ("http", "https", "ws", "wss") and rest.split("/", 1)[0] != host:
            result.foreign.append(request.url)

    app.page.on("request", record)
    try:
        app.open(url_path, f"lang={lang}&reveal=1&deeper=true")  # every section
        result.sidebar_open = (
            app.page.locator("[data-testid='stSidebar'][data-collapsed='false']").count() == 1
        )
        if screen == "laptop":
            sidebar = app.page.evaluate(
                "() => document.querySelector(\"[data-testid='stSidebar']\")"
                ".getBoundingClientRect().width"
            )
            width = round(sidebar) + LAPTOP_MAIN
            app.page.set_viewport_size({"width": width, "height": 900})
            app.wait_idle()
            result.main_width = app.page.evaluate(
                "() => document.querySelector(\"[data-testid='stMain']\")"
                ".getBoundingClientRect().width"
            )
        app.draw_every_chart()
    except _STAGE_ERRORS as exc:
        result.errors["load"] = _failure(exc)
        return _finish(app, result)
    shots = app.artifacts_dir
    if screen in READABLE:
        try:
            result.axes = app.page.evaluate(AXES_JS, CHART_SELECTOR)
            result.mark_texts = app.page.evaluate(MARK_TEXTS_JS, CHART_SELECTOR)
            result.cut_texts = app.page.evaluate(CUT_JS, CHART_SELECTOR)
        except _STAGE_ERRORS as exc:
            result.errors["readable"] = _failure(exc)
    narrow = screen in NARROW and lang == DEFAULT_LANG
    if narrow:
        try:
            result.narrow = measure_narrow(app)
            if any(v > 0 for v in result.narrow["overflow"].values()):
                result.wide_elements = app.page.evaluate(WIDE_ELEMENTS_JS)
            app.screenshot(f"narrow-{spec.name}-{NARROW[screen]}")
        except _STAGE_ERRORS as exc:
            result.errors["narrow"] = _failure(exc)
    if screen in READABLE and url_path in LOG_PAGES and lang == DEFAULT_LANG:
        shot = shots / f"readable-{url_path}-{width}.png"
        if narrow and "narrow" not in result.errors:  # the same page, drawn the same
            shutil.copyfile(shots / f"narrow-{spec.name}-{NARROW[screen]}.png", shot)
        else:
            app.screenshot(shot.stem)
    if screen in AUDITED and lang == DEFAULT_LANG:
        try:
            for theme in THEMES:
                switch_theme(app, theme)
                stretch(app, width)
                result.audits.append(audit(app, spec.name, theme, width))
            switch_theme(app, "light")
            app.page.set_viewport_size(SCREENS[screen]["viewport"])
            app.wait_charts_rendered()
        except _STAGE_ERRORS as exc:
            result.errors["accessibility"] = _failure(exc)
    if narrow and result.narrow and result.narrow["charts"]:
        try:
            result.tap = _tap(app, spec.name)
        except _STAGE_ERRORS as exc:
            result.errors["tap"] = _failure(exc)
    return _finish(app, result)


def _finish(app, result: PagePass) -> PagePass:
    exceptions = app.page.locator("[data-testid='stException']")
    if exceptions.count():
        result.exceptions = "\n---\n".join(exceptions.all_inner_texts())
    result.console_errors = list(app.console_errors)
    return result
