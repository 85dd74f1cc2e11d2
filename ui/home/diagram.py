"""The home page's picture: one Transformer layer, the attention line highlighted.

Inline SVG, not an image: its words are text a screen reader and the browser's find can
read, in the catalog's language, and it draws in the page's own text colour
(``currentColor``), so it follows the light and the dark theme. The one highlighted step,
÷√d_k, is filled in the app's orange at a third of its strength, under text in the
theme's ink.
"""

from __future__ import annotations

from html import escape

from ui.common.charts import COLORS

#: Width of the drawing in its own units; the page scales it to ≤ this many px.
WIDTH = 340
#: Boxes: (label key, x, y, width, height). Keys name the ``labels`` passed in.
BOXES = (
    ("tokens", 60, 30, 220, 34),
    ("q", 12, 90, 100, 40),
    ("k", 120, 90, 100, 40),
    ("v", 228, 90, 100, 40),
    ("scores", 12, 156, 208, 34),
    ("scale", 12, 208, 208, 34),
    ("softmax", 12, 260, 208, 34),
    ("sum", 12, 318, 316, 34),
    ("rest", 12, 378, 316, 34),
)
#: Arrows: (x1, y1, x2, y2), each ending in an arrowhead.
ARROWS = (
    (120, 64, 62, 90),
    (170, 64, 170, 90),
    (220, 64, 278, 90),
    (62, 130, 62, 156),
    (170, 130, 170, 156),
    (116, 190, 116, 208),
    (116, 242, 116, 260),
    (116, 294, 116, 318),
    (300, 130, 300, 318),
    (170, 352, 170, 378),
)
HEIGHT = 420
FONT_PX = 13


def _box(label: str, x: int, y: int, w: int, h: int, highlight: bool) -> str:
    lines = label.split("\n")
    if highlight:
        rect = (
            f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="6" fill="{COLORS["accent"]}" '
            f'fill-opacity="0.33" stroke="{COLORS["accent"]}" stroke-width="2.5"/>'
        )
    else:
        rect = (
            f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="6" fill="none" '
            'stroke="currentColor" stroke-opacity="0.55"/>'
        )
    cx, top = x + w / 2, y + h / 2 - (len(lines) - 1) * (FONT_PX + 2) / 2
    weight = ' font-weight="700"' if highlight else ""
    spans = "".join(
        f'<tspan x="{cx:g}" y="{top + n * (FONT_PX + 2):g}">{escape(line)}</tspan>'
        for n, line in enumerate(lines)
    )
    return (
        f'{rect}<text text-anchor="middle" dominant-baseline="central" '
        f'font-size="{FONT_PX}"{weight} fill="currentColor">{spans}</text>'
    )


def layer_svg(labels: dict[str, str]) -> str:
    """The SVG of one Transformer layer.

    ``labels`` holds the texts, already translated: ``title`` (the figure's name, read
    by a screen reader), ``description`` (one sentence saying what it shows), one per box
    of :data:`BOXES` (a ``\\n`` breaks a line) and ``attention``, the name of the dashed
    frame around the attention step. Every text is escaped: none is markup.
    """
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="group" '
        f'aria-labelledby="layer-title layer-desc" '
        f'style="width:100%;max-width:{WIDTH + 40}px;height:auto;color:inherit;'
        'font-family:inherit;display:block;margin:0 auto">',
        f'<title id="layer-title">{escape(labels["title"])}</title>',
        f'<desc id="layer-desc">{escape(labels["description"])}</desc>',
        '<defs><marker id="layer-arrow" viewBox="0 0 10 10" refX="9" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
        '<path d="M0,0 L10,5 L0,10 z" fill="currentColor"/></marker></defs>',
        # the attention step, framed
        '<rect x="4" y="82" width="332" height="278" rx="10" fill="none" '
        'stroke="currentColor" stroke-opacity="0.45" stroke-dasharray="5 4"/>',
        f'<text x="228" y="229" text-anchor="start" font-size="{FONT_PX - 1}" '
        f'font-style="italic" fill="currentColor">{escape(labels["attention"])}</text>',
        f'<text x="{WIDTH / 2:g}" y="16" text-anchor="middle" font-size="{FONT_PX}" '
        f'font-weight="700" fill="currentColor">{escape(labels["title"])}</text>',
    ]
    for x1, y1, x2, y2 in ARROWS:
        parts.append(
            f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2 - 1}" stroke="currentColor" '
            'stroke-opacity="0.7" stroke-width="1.4" marker-end="url(#layer-arrow)"/>'
        )
    for key, x, y, w, h in BOXES:
        parts.append(_box(labels[key], x, y, w, h, highlight=key == "scale"))
    parts.append("</svg>")
    return "".join(parts)
