"""The charts' frames of the √d_k-vs-d_k page, from plain values.

Each function makes one chart's data (the deferred ``frame`` of
:func:`ui.common.workshop.chart`) from the cached sweeps of :mod:`ui.sqrt_vs_d.data`,
within the charted d_k range [``d_lo``, ``d_hi``]. The words a frame holds (legend and
reference labels) come in as arguments, never from the current language: the chart's
cache key holds them. ``labels`` are (α, legend label) pairs; ``reference`` the
horizontal reference lines, (y, label) pairs.
"""

from __future__ import annotations

import math

import pandas as pd

from ui.common.data import SWEEP_D
from ui.sqrt_vs_d import data
from ui.story import data as story_data
from ui.story.frames import sweep_in_range


def stat_lines(
    stat: str,
    n_keys: int,
    alpha: float,
    rho: float,
    seed: int,
    d_lo: int,
    d_hi: int,
    labels: tuple[tuple[float, str], ...],
    reference: tuple[tuple[float, str], ...] = (),
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One statistic against d_k per α (:func:`ui.sqrt_vs_d.data.lines`) and its reference
    lines as a frame.

    ``stat``: "entropy" (mean entropy as a share of ln n_keys), "max" (mean largest
    weight), "weight" (the relevant key's mean weight) or "grad" (mean ‖∂p/∂s‖_F, for a
    log axis: values at or below ``ui.story.data.SWEEP_LOG_FLOOR`` left out).
    """
    sweep = sweep_in_range(n_keys, alpha, rho, seed, d_lo, d_hi)
    names = dict(labels)
    if stat == "entropy":
        df = data.lines(sweep, "entropy_mean", names, divide_by=math.log(n_keys))
    elif stat == "grad":
        df = data.lines(sweep, "grad_fro_mean", names, log=True)
    else:
        field = {"max": "max_weight_mean", "weight": "relevant_weight_mean"}[stat]
        df = data.lines(sweep, field, names)
    return df, data.reference_frame(reference)


def argmax(
    n_keys: int,
    rho: float,
    seed: int,
    d_lo: int,
    d_hi: int,
    label: str,
    reference: tuple[tuple[float, str], ...],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """How often the relevant key has the largest logit (:func:`ui.sqrt_vs_d.data.argmax_line`,
    one series ``label``: the same for every α) and its reference lines as a frame."""
    sweep = sweep_in_range(n_keys, 0.5, rho, seed, d_lo, d_hi)
    return data.argmax_line(sweep, label), data.reference_frame(reference)


def heatmap(
    n_keys: int,
    rho: float,
    seed: int,
    d_lo: int,
    d_hi: int,
    rules: tuple[tuple[float, str], ...],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The entropy share over (d_k, α) (:func:`ui.sqrt_vs_d.data.sqrt_vs_d_heatmap`) and
    the exponents ruled across it, (α, legend label) pairs
    (:func:`ui.sqrt_vs_d.data.heatmap_rules`)."""
    heat = story_data.in_range(data.sqrt_vs_d_heatmap(n_keys, rho, seed), d_lo, d_hi)
    return heat, data.heatmap_rules(rules)


def logit_theory(labels: tuple[tuple[str, str], tuple[str, str]]) -> pd.DataFrame:
    """The rows of the closed-form chart, whose values the browser computes
    (:func:`ui.sqrt_vs_d.charts.logit_theory`): (d, divisor, quantity, alpha, signal) at every
    d_k of the sweeps (:data:`ui.common.data.SWEEP_D`) for
    ÷√d_k and ÷d_k (``labels[0]``) and the mean and the std (``labels[1]``)."""
    (sqrt, linear), (mean, std) = labels
    return pd.DataFrame(
        [
            {"d": d, "divisor": div, "quantity": q, "alpha": alpha, "signal": signal}
            for div, alpha in ((sqrt, 0.5), (linear, 1.0))
            for q, signal in ((mean, 1), (std, 0))
            for d in SWEEP_D.tolist()
        ]
    )
