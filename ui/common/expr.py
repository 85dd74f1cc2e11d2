"""Closed-form formulas written once, computed in the browser and checked in Python.

A chart that redraws in the browser as its inputs move (no round trip to the server)
computes its values with Vega expressions (``transform_calculate``). Such a formula is
written here once, as an :class:`Expr`: ``expr.vega`` is the Vega expression the chart
uses, ``expr.evaluate(values)`` the same formula in NumPy, which the tests compare with the
core function it stands for at sample points.

Names: :func:`field` is a column of the chart's data (``datum.gap``), :func:`param` the
value of a chart parameter (a selection bound to an input, :mod:`ui.common.live`:
``score_1.score_1``). Functions: :func:`exp`, :func:`log`, :func:`sqrt`, :func:`power`,
:func:`maximum`, :func:`minimum`, :func:`normal_cdf`, :func:`where`.
"""

from __future__ import annotations

import json
import math
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import altair as alt
import numpy as np

from ui.common.charts import ChartText, chart_title

Values = Mapping[str, object]


@dataclass(frozen=True)
class Expr:
    """A formula: its Vega expression and its NumPy evaluation.

    ``vega``: the expression's text, parenthesised where it could bind wrongly;
    ``evaluate(values)``: its value given ``values`` (names of fields and parameters ->
    numbers or arrays).
    """

    vega: str
    evaluate: Callable[[Values], np.ndarray]

    def binary(self, other: object, op: str, fn: Callable) -> Expr:
        """``self op other``: the operator in Vega (``op``) and in NumPy (``fn``)."""
        right = lift(other)
        return Expr(
            f"({self.vega} {op} {right.vega})",
            lambda v, a=self, b=right: fn(a.evaluate(v), b.evaluate(v)),
        )

    def reflected(self, other: object, op: str, fn: Callable) -> Expr:
        """``other op self`` (a number on the left)."""
        return lift(other).binary(self, op, fn)

    def __add__(self, other: object) -> Expr:
        return self.binary(other, "+", np.add)

    def __radd__(self, other: object) -> Expr:
        return self.reflected(other, "+", np.add)

    def __sub__(self, other: object) -> Expr:
        return self.binary(other, "-", np.subtract)

    def __rsub__(self, other: object) -> Expr:
        return self.reflected(other, "-", np.subtract)

    def __mul__(self, other: object) -> Expr:
        return self.binary(other, "*", np.multiply)

    def __rmul__(self, other: object) -> Expr:
        return self.reflected(other, "*", np.multiply)

    def __truediv__(self, other: object) -> Expr:
        return self.binary(other, "/", np.divide)

    def __rtruediv__(self, other: object) -> Expr:
        return self.reflected(other, "/", np.divide)

    def __neg__(self) -> Expr:
        return Expr(f"(-{self.vega})", lambda v, a=self: np.negative(a.evaluate(v)))

    def __ge__(self, other: object) -> Expr:
        return self.binary(other, ">=", np.greater_equal)

    def __le__(self, other: object) -> Expr:
        return self.binary(other, "<=", np.less_equal)

    def __gt__(self, other: object) -> Expr:
        return self.binary(other, ">", np.greater)

    def __lt__(self, other: object) -> Expr:
        return self.binary(other, "<", np.less)


def lift(value: object) -> Expr:
    """``value`` as an :class:`Expr` (a number becomes a constant).

    Raises
    ------
    TypeError
        If ``value`` is neither an Expr nor a finite real number.
    """
    if isinstance(value, Expr):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        number = float(value)
        return Expr(repr(number), lambda v, x=number: np.float64(x))
    raise TypeError(f"an expression needs a finite number or an Expr, got {value!r}")


def field(name: str) -> Expr:
    """Column ``name`` of the chart's data (``datum.name``)."""
    ref = f"datum.{name}" if name.isidentifier() else f"datum[{name!r}]"
    return Expr(ref, lambda v: np.asarray(v[name], dtype=float))


def param(name: str) -> Expr:
    """The value of the chart's bound input ``name`` (:func:`ui.common.live.input_param`:
    a point selection over the field of the same name)."""
    return Expr(f"{name}.{name}", lambda v: np.asarray(v[name], dtype=float))


def _function(vega: str, fn: Callable) -> Callable[..., Expr]:
    def make(*args: object) -> Expr:
        parts = [lift(a) for a in args]
        text = f"{vega}({', '.join(p.vega for p in parts)})"
        return Expr(text, lambda v: fn(*(p.evaluate(v) for p in parts)))

    make.__name__ = vega
    return make


exp = _function("exp", np.exp)
log = _function("log", np.log)
sqrt = _function("sqrt", np.sqrt)
power = _function("pow", np.power)
maximum = _function("max", np.maximum)
minimum = _function("min", np.minimum)


def _normal_cdf(x: np.ndarray) -> np.ndarray:
    return 0.5 * np.vectorize(math.erfc)(-np.asarray(x, dtype=float) / math.sqrt(2.0))


#: Φ(x), the standard normal's cumulative distribution (Vega's ``cumulativeNormal``).
normal_cdf = _function("cumulativeNormal", _normal_cdf)


def where(condition: Expr, then: object, otherwise: object) -> Expr:
    """``then`` where ``condition`` holds, else ``otherwise`` (Vega's ``c ? a : b``)."""
    a, b = lift(then), lift(otherwise)
    return Expr(
        f"({condition.vega} ? {a.vega} : {b.vega})",
        lambda v: np.where(condition.evaluate(v), a.evaluate(v), b.evaluate(v)),
    )


def vega_text(template: str, **fields: tuple[str, str]) -> str:
    """A Vega string expression writing ``template`` (a catalog text with ``{name}``
    fields) with each field replaced by a column of the chart's data in a d3 format:
    ``fields`` maps name -> (column, format), e.g. ``p=("p_top", ".4~g")``.

    Raises
    ------
    KeyError
        If the template names a field that ``fields`` lacks.
    """
    parts = []
    for literal, name, _spec, _conv in string.Formatter().parse(template):
        if literal:
            parts.append(json.dumps(literal))
        if name is not None:
            column, fmt = fields[name]
            parts.append(f"format({field(column).vega}, {fmt!r})")
    return " + ".join(parts) or '""'


def bound_input(
    key: str, label: str, lo: float, hi: float, step: float, value: float
) -> alt.SelectionParameter:
    """A slider under the chart for input ``key`` (range ``lo`` … ``hi`` in steps of
    ``step``, starting at ``value``): a point selection over the field ``key``, named
    ``key``, so that :func:`param` reads it in an expression and the chart reports it to
    the server when a drag pauses (:func:`ui.common.live.live_chart`)."""
    return alt.selection_point(
        name=key,
        fields=[key],
        value=value,
        bind=alt.binding_range(min=lo, max=hi, step=step, name=f"{label} "),
    )


def live_layer(*layers: alt.Chart, text: ChartText, height: int, inputs: tuple) -> alt.LayerChart:
    """A chart computed in the browser: ``layers`` under ``text``'s title, subtitle and alt
    text, a plot ``height`` px tall that fits the width, and a slider
    (:func:`bound_input`) per input of ``inputs``, the (key, label, lo, hi,
    step, value) tuples :func:`ui.common.live.live_chart` hands the builder."""
    return alt.layer(
        *layers,
        title=chart_title(text.title, text.subtitle),
        description=text.description,
        height=height,
        autosize=alt.AutoSizeParams(type="fit-x", contains="padding"),
    ).add_params(*(bound_input(*spec) for spec in inputs))
