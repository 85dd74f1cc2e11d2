"""The quadratures of tests/core/closed_forms.py against closed forms and Harter's table."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest

from tests.core.closed_forms import expected_max, top_two_gap_cdf, top_two_gap_median


def test_expected_max_closed_form_and_table():
    # n = 2: E[max(Z₁, Z₂)] = E|Z₁ − Z₂|/2 = 1/√π exactly
    assert expected_max(2) == pytest.approx(1 / math.sqrt(math.pi), abs=1e-9)
    # Harter 1961 tabulates 5 decimals: ± half a unit of the last one
    assert expected_max(10) == pytest.approx(1.53875, abs=5e-6)


def test_gap_median_closed_form_and_density_at_zero():
    # n = 2: the gap is |Z₁ − Z₂|, half-normal with scale √2: median √2 Φ⁻¹(¾)
    assert top_two_gap_median(2) == pytest.approx(
        math.sqrt(2) * NormalDist().inv_cdf(0.75), abs=1e-8
    )
    # docs/mathematics.md §3.2: the gap's density at 0 is e_n (central difference, O(h²))
    h = 1e-4
    density = (top_two_gap_cdf(h, 10) - top_two_gap_cdf(-h, 10)) / (2 * h)
    assert density == pytest.approx(expected_max(10), rel=1e-6)
