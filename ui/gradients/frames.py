"""The charts' frames of the gradients page, from plain values.

Each function makes one chart's data (the deferred ``frame`` of
:func:`ui.common.workshop.chart`) from the cached results of :mod:`ui.gradients.data`.
The words a frame holds (legend labels) come in as arguments, never from the current
language: the chart's cache key holds them.
"""

from __future__ import annotations

import pandas as pd

from ui.gradients import data


def heatmap(d_k: int, n_keys: int, alpha: float, seed: int, which: str) -> pd.DataFrame:
    """One Jacobian heatmap (:func:`ui.gradients.data.jacobian_row`): ``which`` is
    "unscaled" or "scaled"; columns ``i``, ``j``, ``value``, ``p_i``, ``p_j``."""
    cells, _ = data.jacobian_row(d_k, n_keys, alpha, seed)
    return cells[cells.which == which].drop(columns="which")


def gap(n_keys: int, gap2: float | None, names: tuple[tuple[str, str], ...]) -> pd.DataFrame:
    """The gap explorer's curves (:func:`ui.gradients.data.gap_curves`) labelled:
    ``names`` maps "fro", "offdiag", "exact" and "law" to their legend labels."""
    return data.gap_curves(n_keys, gap2).replace(dict(names))


def qgrad(d_k: int, n_keys: int, alpha: float, seed: int, which: str) -> pd.DataFrame:
    """One ∂L/∂q histogram (:func:`ui.gradients.data.query_grad_histogram`): ``which``
    is "unscaled" or "scaled"; columns ``x0``, ``x1``, ``share``."""
    bins, _, _ = data.query_grad_histogram(d_k, n_keys, alpha, seed)
    return bins[bins.which == which].drop(columns="which")
