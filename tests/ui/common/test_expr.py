"""ui.common.expr: one formula, a Vega expression and its NumPy value."""

import math

import numpy as np
import pytest
from scipy.stats import norm

from ui.common import expr
from ui.common.expr import field, param


def test_arithmetic_renders_and_evaluates_alike():
    gap, c = field("gap"), param("divisor")
    p = 1 / (1 + expr.exp(-gap / c))
    assert p.vega == "(1.0 / (1.0 + exp(((-datum.gap) / divisor.divisor))))"
    g = np.array([0.0, 5.0, 10.0])
    np.testing.assert_allclose(p.evaluate({"gap": g, "divisor": 8.0}), 1 / (1 + np.exp(-g / 8)))
    assert (2 - gap).evaluate({"gap": 0.5}) == 1.5  # the reflected operators keep the order
    assert (gap / 4).evaluate({"gap": 2.0}) == 0.5
    assert (3 / gap).evaluate({"gap": 2.0}) == 1.5


def test_functions_and_where():
    x = field("x")
    values = {"x": np.array([0.25, 1.0, 4.0])}
    np.testing.assert_allclose(expr.sqrt(x).evaluate(values), [0.5, 1.0, 2.0])
    np.testing.assert_allclose(expr.log(x).evaluate(values), np.log(values["x"]))
    np.testing.assert_allclose(expr.power(x, 2).evaluate(values), values["x"] ** 2)
    np.testing.assert_allclose(expr.maximum(x, 1).evaluate(values), [1.0, 1.0, 4.0])
    np.testing.assert_allclose(expr.minimum(x, 1).evaluate(values), [0.25, 1.0, 1.0])
    step = expr.where(x >= 1, 1, 0)
    assert step.vega == "((datum.x >= 1.0) ? 1.0 : 0.0)"
    np.testing.assert_array_equal(step.evaluate(values), [0.0, 1.0, 1.0])


def test_normal_cdf_is_vegas_cumulative_normal():
    z = np.linspace(-8, 8, 33)
    got = expr.normal_cdf(field("z")).evaluate({"z": z})
    np.testing.assert_allclose(got, norm.cdf(z), rtol=1e-12, atol=1e-300)
    assert expr.normal_cdf(field("z")).vega == "cumulativeNormal(datum.z)"


def test_only_finite_numbers_lift():
    for bad in (math.inf, math.nan, "1", True):
        with pytest.raises(TypeError, match="finite number"):
            expr.lift(bad)


def test_a_bound_input_is_a_named_point_selection_over_its_field():
    spec = expr.bound_input("divisor", "divisor c", 0.25, 64.0, 0.25, 8.0).param.to_dict()
    assert spec["name"] == "divisor"
    assert spec["select"] == {"type": "point", "fields": ["divisor"]}
    assert spec["value"] == 8.0
    assert spec["bind"] == {"input": "range", "min": 0.25, "max": 64.0, "step": 0.25,
                            "name": "divisor c "}  # fmt: skip


def test_vega_text_writes_a_catalog_template_with_formatted_fields():
    from ui.common.expr import vega_text

    got = vega_text('g = {g}: "p" {p}', g=("g", ".3~f"), p=("p top", ".4~g"))
    assert (
        got
        == "\"g = \" + format(datum.g, '.3~f') + \": \\\"p\\\" \" + format(datum['p top'], '.4~g')"
    )
    assert vega_text("") == '""'
    with pytest.raises(KeyError):
        vega_text("{missing}", g=("g", ".1f"))
