"""Log axes that a learner can read: one label format per axis, no two labels colliding.

Vega's own labels for a log scale mix formats on one axis (0.000001 beside 1e-7) and
collide where decades are close together. :func:`log_axis` labels chosen powers of ten
(every k-th one, so that they fit the axis) in one format for the whole axis: plain
numbers while every label is between 0.001 and 10000, otherwise 1e−9 throughout, with a
real minus sign.
"""

from __future__ import annotations

import math

import altair as alt
import pandas as pd

#: A log axis whose labelled ticks all lie in this range writes them as plain numbers
#: (0.001 … 1000); any other writes every label as 1e−9 (a real minus sign).
PLAIN_LOG_RANGE = (1e-3, 1e4)
#: Room one label takes along a log axis, px: a y axis (labels stacked, 11 px type, 15 px
#: when presenting) and an x axis (labels side by side, "1e−10" is about 35 px wide).
LOG_LABEL_PX = {"y": 26, "x": 48}
#: Decades between two labels: the smallest of these that fits.
NICE_STEPS = (1, 2, 3, 5, 10, 20, 50, 100)
#: Vega expressions writing a tick's value: "1e−9" (d3's "1e-9" with "e+" and the hyphen
#: replaced), or a plain number.
EXP_LABEL = "replace(replace(format(datum.value, '.0e'), 'e+', 'e'), '-', '\u2212')"
PLAIN_LABEL = "format(datum.value, '~g')"


def log_ticks(lo: float, hi: float, *, length: float, orient: str = "y") -> list[float]:
    """Where a base-10 log axis spanning the data range [lo, hi] is labelled.

    Powers of ten, every k-th one counted from 10⁰ so that they fit ``length`` px of axis
    (at least :data:`LOG_LABEL_PX` apart); a range of less than two decades adds 2 and 5 times
    them. Only ticks within [lo, hi] widened to whole decades (the scale's nice domain).

    Raises
    ------
    ValueError
        If ``lo`` or ``hi`` is not positive and finite, or ``lo > hi``.
    """
    if not (0 < lo <= hi < math.inf):
        raise ValueError(f"a log axis needs 0 < lo <= hi < inf, got lo={lo!r}, hi={hi!r}")
    first, last = math.floor(math.log10(lo) + 1e-9), math.ceil(math.log10(hi) - 1e-9)
    last = max(last, first + 1)
    room = max(2, int(length // LOG_LABEL_PX[orient]))
    need = math.ceil((last - first + 1) / room)
    step = next((n for n in NICE_STEPS if n >= need), need)
    # every step-th power of ten counted from 10⁰ (1e0, 1e−5, 1e−10, … not 1e−3, 1e−8, …)
    decades = [10.0**k for k in range(first, last + 1) if k % step == 0]
    if last - first >= 2:
        return decades
    # fewer than two decades: 1, 2 and 5 times each power of ten inside the data's range
    return [
        m * 10.0**k for k in range(first, last + 1) for m in (1, 2, 5) if lo <= m * 10.0**k <= hi
    ] or decades


def log_axis(lo: float, hi: float, *, length: float, orient: str = "y", **options) -> alt.Axis:
    """The axis of a base-10 log scale over the data range [lo, hi]: labels at
    :func:`log_ticks`, in one format for the whole axis (plain numbers inside
    :data:`PLAIN_LOG_RANGE`, else 1e−9 throughout), never two overlapping. ``length``:
    the plot's height (a y axis) or narrowest width (an x axis), px. ``options`` go to
    ``alt.Axis``."""
    values = log_ticks(lo, hi, length=length, orient=orient)
    # the format follows the ticks inside the data's range: an outer one is not drawn on
    # a fixed domain (and on a nice one it is a plain number's neighbour anyway)
    inner = [v for v in values if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)] or values
    plain = PLAIN_LOG_RANGE[0] <= min(inner) and max(inner) <= PLAIN_LOG_RANGE[1]
    options.setdefault("labelOverlap", "greedy")
    return alt.Axis(values=values, labelExpr=PLAIN_LABEL if plain else EXP_LABEL, **options)


def positive_range(*columns: pd.Series) -> tuple[float, float]:
    """The smallest and largest positive finite value of ``columns`` (what a log scale
    can draw); (1, 10) if there is none."""
    values = pd.concat([pd.Series(c, dtype=float) for c in columns], ignore_index=True)
    values = values[(values > 0) & values.map(math.isfinite)]
    return (float(values.min()), float(values.max())) if len(values) else (1.0, 10.0)
