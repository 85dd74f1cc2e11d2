"""The language-model page's picture: the 2-layer character GPT, the line that differs
between the four variants highlighted.

Inline SVG as on the home page (:mod:`ui.home.diagram`): its words are text in the
catalog's language, escaped, drawn in the page's own text colour (``currentColor``), so it
follows the light and the dark theme; the highlighted step is filled in the app's orange
at a third of its strength.
"""

from __future__ import annotations

from html import escape

from ui.common.charts import COLORS

#: Width and height of the drawing in its own units; the page scales it to ≤ WIDTH + 40 px.
WIDTH, HEIGHT = 340, 520
FONT_PX = 13
#: The main column: left edge and width of the boxes, and their centre.
X0, W = 50, 280
CX = X0 + W / 2
#: Boxes: (label key, top, height). Keys name the ``labels`` passed in.
BOXES = (
    ("input", 34, 34),
    ("ln1", 108, 28),
    ("qkv", 150, 28),
    ("softmax", 316, 28),
    ("mlp", 380, 28),
    ("output", 466, 34),
)
#: The highlighted box: the attention logit, one line per variant.
LOGIT_TOP, LOGIT_HEIGHT = 192, 110
#: The variants' lines in it: (name key, formula), the formula language-neutral.
FORMULAS = (
    ("sqrt", "q·k / √dₕ"),
    ("none", "q·k"),
    ("mup", "q·k / dₕ"),
    ("qk_ln", "LN(q)·LN(k) / √dₕ"),
)
#: The residual additions (⊕): their centres' heights.
PLUS = (358, 434)
#: The frame around one layer: top and bottom.
FRAME = (90, 450)


def _text(x: float, y: float, body: str, *, anchor: str = "middle", extra: str = "") -> str:
    return (
        f'<text x="{x:g}" y="{y:g}" text-anchor="{anchor}" dominant-baseline="central" '
        f'font-size="{FONT_PX}" fill="currentColor"{extra}>{escape(body)}</text>'
    )


def _arrow(x1: float, y1: float, x2: float, y2: float) -> str:
    return (
        f'<line x1="{x1:g}" y1="{y1:g}" x2="{x2:g}" y2="{y2:g}" stroke="currentColor" '
        'stroke-opacity="0.7" stroke-width="1.4" marker-end="url(#lm-arrow)"/>'
    )


def _box(label: str, top: float, height: float) -> str:
    rect = (
        f'<rect x="{X0}" y="{top}" width="{W}" height="{height}" rx="6" fill="none" '
        'stroke="currentColor" stroke-opacity="0.55"/>'
    )
    return rect + _text(CX, top + height / 2, label)


def _plus(y: float) -> str:
    return (
        f'<circle cx="{CX:g}" cy="{y}" r="8" fill="none" stroke="currentColor" '
        'stroke-opacity="0.7"/>' + _text(CX, y, "+")
    )


def model_svg(labels: dict[str, str]) -> str:
    """The SVG of the model.

    ``labels`` holds the texts, already translated: ``title`` (the figure's name, read by
    a screen reader), ``description`` (one sentence saying what it shows), one per box of
    :data:`BOXES`, ``logit`` (the highlighted box's heading), ``layers`` (the frame's
    label, e.g. "× 2 layers"), ``residual`` (the side path's label) and one name per
    variant of :data:`FORMULAS`. Every text is escaped: none is markup.
    """
    accent = COLORS["accent"]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="group" '
        'aria-labelledby="lm-title lm-desc" '
        f'style="width:100%;max-width:{WIDTH + 40}px;height:auto;color:inherit;'
        'font-family:inherit;display:block;margin:0 auto">',
        f'<title id="lm-title">{escape(labels["title"])}</title>',
        f'<desc id="lm-desc">{escape(labels["description"])}</desc>',
        '<defs><marker id="lm-arrow" viewBox="0 0 10 10" refX="9" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
        '<path d="M0,0 L10,5 L0,10 z" fill="currentColor"/></marker></defs>',
        _text(WIDTH / 2, 14, labels["title"], extra=' font-weight="700"'),
        # one layer, framed; the residual path runs down its left side
        f'<rect x="4" y="{FRAME[0]}" width="{WIDTH - 8}" height="{FRAME[1] - FRAME[0]}" rx="10" '
        'fill="none" stroke="currentColor" stroke-opacity="0.45" stroke-dasharray="5 4"/>',
        _text(
            WIDTH - 12,
            FRAME[0] + 9,
            labels["layers"],
            anchor="end",
            extra=' font-style="italic" font-size="12"',
        ),
        f'<path d="M{CX:g},{FRAME[0] + 8} H24 V{PLUS[0]} H{CX - 9:g}" fill="none" '
        'stroke="currentColor" stroke-opacity="0.6" stroke-width="1.2" '
        'marker-end="url(#lm-arrow)"/>',
        f'<path d="M{CX:g},{PLUS[0] + 12} H24 V{PLUS[1]} H{CX - 9:g}" fill="none" '
        'stroke="currentColor" stroke-opacity="0.6" stroke-width="1.2" '
        'marker-end="url(#lm-arrow)"/>',
        _text(
            18,
            (FRAME[0] + PLUS[0]) / 2,
            labels["residual"],
            extra=f' font-size="11" transform="rotate(-90 18 {(FRAME[0] + PLUS[0]) / 2:g})"',
        ),
    ]
    for key, top, height in BOXES:
        parts.append(_box(labels[key], top, height))
    # the one line that differs
    parts.append(
        f'<rect x="{X0}" y="{LOGIT_TOP}" width="{W}" height="{LOGIT_HEIGHT}" rx="6" '
        f'fill="{accent}" fill-opacity="0.33" stroke="{accent}" stroke-width="2.5"/>'
    )
    parts.append(_text(CX, LOGIT_TOP + 14, labels["logit"], extra=' font-weight="700"'))
    for i, (key, formula) in enumerate(FORMULAS):
        y = LOGIT_TOP + 36 + 20 * i
        parts.append(_text(X0 + 12, y, labels[key], anchor="start"))
        parts.append(_text(X0 + W - 12, y, formula, anchor="end", extra=' font-weight="700"'))
    arrows = (
        (BOXES[0][1] + BOXES[0][2], BOXES[1][1]),  # input → LayerNorm
        (BOXES[1][1] + BOXES[1][2], BOXES[2][1]),  # → q, k, v
        (BOXES[2][1] + BOXES[2][2], LOGIT_TOP),  # → logits
        (LOGIT_TOP + LOGIT_HEIGHT, BOXES[3][1]),  # → softmax
        (BOXES[3][1] + BOXES[3][2], PLUS[0] - 8),  # → +
        (PLUS[0] + 8, BOXES[4][1]),  # → MLP
        (BOXES[4][1] + BOXES[4][2], PLUS[1] - 8),  # → +
        (PLUS[1] + 8, BOXES[5][1]),  # → output
    )
    for y1, y2 in arrows:
        parts.append(_arrow(CX, y1, CX, y2 - 1))
    parts += [_plus(y) for y in PLUS]
    parts.append("</svg>")
    return "".join(parts)
