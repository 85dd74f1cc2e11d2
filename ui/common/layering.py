"""Building Altair charts faster, with the same specs.

:func:`lean` runs a builder with Altair's validate-on-creation switch off, and
:func:`layer` builds a layered chart without the copies of every layer that
``alt.layer`` makes. ``ui.common.charts`` re-exports both: builders import them from
there.
"""

from __future__ import annotations

import functools

import altair as alt
from altair.vegalite.v6.api import _combine_subchart_data


def lean(builder):
    """Run ``builder`` with ``altair.utils.schemapi.DEBUG_MODE`` off (same output, faster).

    With it on, Altair validates every mark, channel and layer as it is created. The
    switch is a module global: a concurrent session may build with it off too, which
    only skips that validation there as well.
    """

    @functools.wraps(builder)
    def wrapper(*args, **kwargs):
        with alt.utils.schemapi.debug_mode(False):
            return builder(*args, **kwargs)

    return wrapper


#: Layer properties Altair lifts to the top of a layered chart (and so copies the layers for).
_LIFTED = ("params", "name", "height", "width", "view")


def _plain(chart: alt.TopLevelMixin) -> bool:
    """Whether ``chart`` (and every layer in it) is a view without selection parameters,
    a name, a size or facet channels: nothing :class:`altair.LayerChart` would move."""
    if not isinstance(chart, alt.Chart | alt.LayerChart):
        return False  # a facet or concatenation: alt.layer decides
    if any(chart._get(prop) is not alt.Undefined for prop in _LIFTED):
        return False
    encoding = chart._get("encoding")
    if encoding is not alt.Undefined and any(
        encoding._get(channel) is not alt.Undefined for channel in ("row", "column", "facet")
    ):
        return False
    return all(_plain(sub) for sub in chart._get("layer", []) or [])


class PlainLayerChart(alt.LayerChart):
    """An :class:`altair.LayerChart` of plain layers (:func:`_plain`), made without the
    two deep copies of every layer Altair makes to merge selection parameters and lift
    sizes: with plain layers those steps change nothing. Altair remakes a chart through
    its class to copy it (``to_dict`` does, once per layer chart), so the saving holds
    there too. Layers that are not all plain take ``alt.LayerChart``'s own way."""

    def __init__(self, data=alt.Undefined, layer=(), **kwargs):
        layers = list(layer)
        if not all(_plain(chart) for chart in layers):
            super().__init__(data=data, layer=layers, **kwargs)
            return
        alt.TopLevelLayerSpec.__init__(self, data=data, layer=layers, **kwargs)
        self.data, self.layer = _combine_subchart_data(self.data, self.layer)


def layer(*charts: alt.TopLevelMixin, **kwargs) -> alt.LayerChart:
    """``alt.layer(*charts, **kwargs)``, as a :class:`PlainLayerChart` when every layer
    is plain (every chart of this app): the same spec (the pinned-charts test compares
    them byte for byte) in about half the time."""
    if not all(_plain(chart) for chart in charts):
        return alt.layer(*charts, **kwargs)
    return PlainLayerChart(layer=charts, **kwargs)
