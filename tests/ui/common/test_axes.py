"""Log axes: where they are labelled, and in which one format."""

import numpy as np
import pandas as pd
import pytest

from ui.common import axes


def test_log_ticks_thin_the_decades_to_fit():
    # 15 decades (1e-14 … 1) in 240 px: 9 labels fit 26 px apart, so every other decade
    ticks = axes.log_ticks(9.4e-14, 0.5, length=240)
    assert ticks == [10.0**k for k in range(-14, 1, 2)]
    assert len(ticks) >= 4
    # room for every decade
    assert axes.log_ticks(0.02, 50, length=300) == [0.01, 0.1, 1.0, 10.0, 100.0]
    # a narrow range: 1, 2 and 5 times the powers of ten inside it
    assert axes.log_ticks(0.15, 0.9, length=200) == [0.2, 0.5]
    assert axes.log_ticks(3e-4, 1.4, length=200) == [1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0]
    # 34 decades in 150 px (room for 5 labels): every 10th, counted from 10⁰; in 220 px
    # (8 labels) every 5th
    assert axes.log_ticks(1e-33, 0.7, length=150) == [1e-30, 1e-20, 1e-10, 1.0]
    assert axes.log_ticks(1e-33, 0.7, length=220) == [10.0**k for k in range(-30, 1, 5)]
    # an x axis: labels side by side need more room each
    assert axes.log_ticks(1e-4, 1.0, length=170, orient="x") == [1e-4, 1e-2, 1.0]
    for lo, hi in ((0, 1), (-1, 1), (2, 1), (1, float("inf"))):
        with pytest.raises(ValueError, match="a log axis needs"):
            axes.log_ticks(lo, hi, length=100)


def test_log_axis_writes_one_format_per_axis():
    plain = axes.log_axis(0.02, 50, length=300).to_dict()
    assert plain["labelExpr"] == axes.PLAIN_LABEL
    assert plain["values"] == [0.01, 0.1, 1.0, 10.0, 100.0]
    assert plain["labelOverlap"] == "greedy"
    # 0.0009 … 1.2: the 1e-4 tick below the data is not drawn on a fixed domain
    assert axes.log_axis(9e-4, 1.2, length=300).to_dict()["labelExpr"] == axes.PLAIN_LABEL
    wide = axes.log_axis(1e-10, 1.0, length=220).to_dict()
    assert wide["labelExpr"] == axes.EXP_LABEL  # 1e0 too, not a mix of 1 and 1e-10
    assert axes.log_axis(1e-4, 1.0, length=300, grid=False).to_dict()["grid"] is False
    # the expression: d3's '.0e' ("1e-9", "1e+0") with the sign fixed and a real minus
    assert "'e+', 'e'" in axes.EXP_LABEL and "'-', '\u2212'" in axes.EXP_LABEL


def test_positive_range_skips_what_a_log_scale_cannot_draw():
    lo, hi = axes.positive_range(pd.Series([0.0, -1.0, 2e-9, np.nan]), pd.Series([np.inf, 3.0]))
    assert (lo, hi) == (2e-9, 3.0)
    assert axes.positive_range(pd.Series([0.0])) == (1.0, 10.0)
