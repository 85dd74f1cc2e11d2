"""The recap's small charts: a story page's finished chart (:func:`ui.common.specs.drawn`)
made small. The sentence above it says what it shows, so it loses its title; its plot is
:data:`SMALL_PLOT_PX` tall; it draws no legend, since every story chart gives the scalings
the same colours, named once above the charts (:data:`KEY`); its data, marks, axes and
tooltips (which name each series) are its page's.
"""

from __future__ import annotations

import copy

from ui.common.charts import COLORS
from ui.common.specs import PADDING

#: Height of a small chart's plot, px (its x-axis adds to it).
SMALL_PLOT_PX = 90
#: The colours every story chart gives the scalings, in the order of the recap's key
#: (catalog ``recap.key_<name>``): no scale, ÷√dₖ, ÷dₖ, and another (the √dₖ-vs-dₖ
#: page's own α, the language model's QK-LayerNorm).
KEY = (
    ("none", COLORS["unscaled"]),
    ("sqrt", COLORS["sqrt"]),
    ("linear", COLORS["linear"]),
    ("other", COLORS["custom"]),
)
#: Font size of a small chart's axis labels, px (a page's charts: 12).
SMALL_LABEL_PX = 11
#: Room between the x-axis line and its labels, px: a point drawn on the line (radius
#: ~4 px, the gradients answer's ÷√dₖ at a share of 0) stays clear of them.
SMALL_X_LABEL_PADDING = 7
#: Room around a small chart: less above than a page's chart, which makes room for a title.
SMALL_PADDING = {**PADDING, "top": 6}
#: The spec keys of a composite chart (a facet, a concatenation), which the recap does not
#: draw small: every story page answers with a single or layered view.
COMPOSITE = frozenset({"facet", "hconcat", "vconcat", "concat", "repeat"})


def small(spec: dict) -> dict:
    """``spec`` (a finished single or layered view) drawn small: no title, no legend, the
    plot :data:`SMALL_PLOT_PX` tall, less padding above. A copy: ``spec``, the page's
    chart shared by every session (:func:`ui.common.specs.chart_spec`), is left as it is;
    its datasets, never changed, are the copy's too.

    Raises
    ------
    ValueError
        If ``spec`` is a composite chart (its height is its panels').
    """
    if COMPOSITE.intersection(spec):
        raise ValueError(f"a small chart is a single or layered view, got {sorted(spec)}")
    datasets = spec.get("datasets")
    spec = copy.deepcopy({part: value for part, value in spec.items() if part != "datasets"})
    if datasets is not None:
        spec["datasets"] = datasets
    spec.pop("title", None)
    _small_encodings(spec)
    spec["height"] = SMALL_PLOT_PX
    # axis labels a size smaller, clear of the points on the axis line (a share of 0 at
    # every d_k), the x-axis title close under them
    config = spec.setdefault("config", {})
    config["axis"] = {**config.get("axis", {}), "labelFontSize": SMALL_LABEL_PX}
    config["axisX"] = {
        **config.get("axisX", {}),
        "titlePadding": 2,
        "labelPadding": SMALL_X_LABEL_PADDING,
    }
    spec["padding"] = dict(SMALL_PADDING)
    return spec


#: Encoding channels that draw a legend of their field unless told not to.
LEGEND_CHANNELS = frozenset({"color", "fill", "stroke", "shape", "strokeDash", "size"})


def _small_encodings(node: object) -> None:
    """In every layer of ``node`` (in place): no legend on any channel, and every label of
    a categorical x-axis drawn, a size smaller still (three divisors, six layers: each
    names a bar; Vega would drop one that comes near its neighbour on a narrow plot)."""
    if isinstance(node, list):
        for item in node:
            _small_encodings(item)
    elif isinstance(node, dict):
        for channel, definition in node.get("encoding", {}).items():
            if not isinstance(definition, dict):
                continue
            if channel in LEGEND_CHANNELS:
                definition["legend"] = None
            categorical = definition.get("type") in ("nominal", "ordinal")
            if channel == "x" and categorical and definition.get("axis") is not None:
                definition["axis"] = {
                    **definition["axis"],
                    "labelOverlap": False,
                    "labelFontSize": SMALL_LABEL_PX - 1,
                }
        for key in ("layer", "spec"):
            _small_encodings(node.get(key))
