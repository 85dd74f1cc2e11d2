"""Every page, light and dark, at 1400 px and on a 390-px phone: axe-core finds no serious
or critical violation, every text in every chart reaches 4.5:1 against what it is drawn
on, every selected (primary) button's label 4.5:1 against its fill, and the page asks no
other host than the app's for anything (a workshop network may be closed).

Pages come from ui.common.pages.PAGES. Each page is loaded twice (a 1400x1000 window and
a 390x844 touch phone) and both themes are read from each load: the app follows the
system setting, so ``emulate_media(color_scheme=...)`` switches it in place, and the test
waits until the app and every chart are drawn on the new background.

axe-core (tests/e2e/vendor/axe-core, from the npm registry) checks the colour contrast of
on-screen elements only: Streamlit's main area scrolls inside the window, so the window
is stretched to the page's full height before axe runs. axe cannot read chart text (an
SVG ``<text>`` over marks is "incomplete" for it), so the test measures it itself: each
chart is drawn as SVG (``ui.common.specs.for_drawing`` asks for the SVG renderer; a canvas
chart fails the test rather than being skipped), and each ``<text>`` is composited with
its opacity over what lies under its centre (the rect marks drawn before it, such as a
heatmap cell, over the chart's background), then compared with WCAG 2's contrast ratio.

Results per page, theme and width go to artifacts/accessibility.jsonl.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ui.common.pages import PAGES

pytestmark = pytest.mark.e2e

AXE_JS = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
#: WCAG 2 AA contrast for normal-size text (1.4.3); chart text is 9–19 px.
MIN_CONTRAST = 4.5
IMPACTS = ("serious", "critical")
THEMES = ("light", "dark")
DESKTOP = {"viewport": {"width": 1400, "height": 1000}}
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
}
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


def _switch_theme(app, theme: str) -> None:
    app.page.emulate_media(color_scheme=theme)
    app.page.wait_for_function(THEME_APPLIED_JS, arg=theme == "dark", timeout=15_000)
    app.wait_charts_rendered()


def _stretch(app, width: int) -> None:
    """Make the window as tall as the page, so that axe sees every element on screen."""
    height = min(MAX_HEIGHT, int(app.page.evaluate(CONTENT_HEIGHT_JS)))
    app.page.set_viewport_size({"width": width, "height": max(height, 844)})
    app.page.wait_for_timeout(300)
    app.wait_charts_rendered()


def _audit(app, page: str, theme: str, width: int) -> dict:
    """axe's serious/critical violations, chart texts and primary buttons below
    MIN_CONTRAST, and canvas charts, for the page as it is drawn now."""
    if not app.page.evaluate("() => !!window.axe"):
        app.page.add_script_tag(path=str(AXE_JS))
    violations = [v for v in app.page.evaluate(AXE_RUN_JS) if v["impact"] in IMPACTS]
    charts = app.page.evaluate(CHART_TEXT_CONTRAST_JS, "[data-testid='stVegaLiteChart']")
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


def _problems(result: dict) -> list[str]:
    where = f"{result['page']} {result['theme']} {result['width']} px"
    out = [
        f"{where}: axe {v['impact']} {v['id']} ({v['help']}) on {n['target']}: {n['summary']}"
        for v in result["axe_details"]
        for n in v["nodes"][:5]
    ]
    out += [f"{where}: chart {i} drawn on a canvas" for i in result["canvas_charts"]]
    out += [
        f"{where}: chart {t['chart']} text {t['text']!r} ({t['role']}) {t['ink']} on "
        f"{t['bg']}: {t['ratio']:.2f}:1"
        for t in result["low_chart_text"]
    ]
    out += [
        f"{where}: selected button {b['text']!r} {b['ink']} on {b['bg']}: {b['ratio']:.2f}:1"
        for b in result["low_buttons"]
    ]
    return out


@pytest.mark.parametrize("spec", PAGES, ids=[p.name for p in PAGES])
def test_accessible_and_self_contained(make_app, spec):
    problems: list[str] = []
    foreign: set[str] = set()
    log = []
    for options in (DESKTOP, PHONE):
        app = make_app(color_scheme="light", **options)
        host = urlsplit(app.base_url).netloc

        def record(request, host=host) -> None:
            parts = urlsplit(request.url)
            if parts.scheme in ("http", "https", "ws", "wss") and parts.netloc != host:
                foreign.add(request.url)

        app.page.on("request", record)
        app.open(spec.url_path)
        app.draw_every_chart()
        width = options["viewport"]["width"]
        for theme in THEMES:
            _switch_theme(app, theme)
            _stretch(app, width)
            result = _audit(app, spec.name, theme, width)
            problems += _problems(result)
            log.append({k: v for k, v in result.items() if k != "axe_details"})
        if spec.name != "home":
            assert sum(r["charts"] for r in log[-2:]) > 0, f"{spec.name}: no chart was measured"
            assert all(r["chart_texts"] for r in log[-2:] if r["charts"]), "no chart text read"
    with open(app.artifacts_dir / "accessibility.jsonl", "a") as out:
        for row in log:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    problems += [f"{spec.name}: request to another host: {url}" for url in sorted(foreign)]
    assert not problems, "\n".join(problems)


#: The question a room asks on the variance page (tests/e2e/test_rooms.py walks a room).
ROOM_QUESTION = "variance_std"
#: The presenter's counts refresh every 2 s.
ROOM_TIMEOUT_MS = 15_000


def test_a_room_is_accessible(make_app):
    """A room: the presenter's page (room panel, the room's answers chart) at 1400 px and
    a learner's page after the reveal (its card with the room's chart) on a 390-px phone, each light and dark, by the same measures as the pages."""
    presenter = make_app(color_scheme="light", **DESKTOP)
    presenter.open("variance", "present=1")
    presenter.interact(presenter.button("room_open").click, expect_chart_change=False)
    sidebar = presenter.page.locator("[data-testid='stSidebar']")
    link = sidebar.locator("[data-testid='stCode']").filter(has_text="room=").first.inner_text()
    learner = make_app(color_scheme="light", **PHONE)
    learner.open("variance", urlsplit(link.strip()).query)
    guess = learner.widget(f"{ROOM_QUESTION}_guess")
    guess.wait_for(state="visible")
    learner.interact(
        lambda: guess.locator("label").filter(has_text="8").first.click(),
        expect_chart_change=False,
    )
    learner.interact(learner.button(f"{ROOM_QUESTION}_reveal").click, expect_chart_change=False)
    main = presenter.page.locator("[data-testid='stMain']")
    main.get_by_text("1 answered", exact=True).wait_for(timeout=ROOM_TIMEOUT_MS)
    presenter.button(f"{ROOM_QUESTION}_room_reveal").click()
    main.get_by_text("Revealed to the room.").wait_for(timeout=ROOM_TIMEOUT_MS)
    # the learner's next interaction (opening a chart's code panel) shows the room's answers
    code = learner.page.locator("[class*='st-key-'][class*='_code'] summary").first
    learner.interact(code.click, expect_chart_change=False)
    learner.page.locator("[data-testid='stMain'] p").filter(has_text="1 answered").first.wait_for(
        timeout=ROOM_TIMEOUT_MS
    )
    problems: list[str] = []
    for name, driver, width in (
        ("room presenter", presenter, 1400),
        ("room learner", learner, 390),
    ):
        driver.wait_charts_rendered()
        for theme in THEMES:
            _switch_theme(driver, theme)
            _stretch(driver, width)
            result = _audit(driver, name, theme, width)
            assert result["charts"], f"{name}: no chart drawn"
            problems += _problems(result)
    assert not problems, "\n".join(problems)
