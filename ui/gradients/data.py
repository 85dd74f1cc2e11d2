"""Cached data of the gradients page: one Jacobian row, the gap explorer's curves, the
gradient sweeps against d_k and the ∂L/∂q histograms.

Conventions (hashable inputs, small frames, one random stream per picture):
:mod:`ui.common.data`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from ui.common.controls import ALPHA_PRESETS
from ui.common.data import rng_for, saturation_sweep, sweep_rows

STREAM_JACOBIAN_ROW, STREAM_QUERY_GRAD = 30, 31


#: Keys shown in a Jacobian heatmap (the largest scores when a row has more).
HEATMAP_MAX_KEYS = 32


#: Gap explorer grid (logit units) and histogram geometry (decades).
GAP_GRID = tuple(float(g) for g in np.arange(0.0, 30.0 + 1e-9, 0.5))  # the slider's steps


HIST_BIN, HIST_SPAN = 0.25, 24.0


#: The d_k at which the page's texts quote the sweep's ‖J‖_F (an alt text, a myth card).
QUOTED_D = (256, 1024)


@st.cache_data(max_entries=32, show_spinner=False)
def jacobian_quotes(n_keys: int, seed: int) -> dict[tuple[float, int], dict[str, float]]:
    """Mean and median ‖J‖_F of the sweep of α = 0, ½, 1 (:func:`gradient_sweep`) at
    the d_k of ``QUOTED_D``.

    Returns
    -------
    dict: (α, d_k) -> ``mean``, ``median`` (plain numbers: a hit copies no frame).
    """
    fixed = saturation_sweep(n_keys, ALPHA_PRESETS, 0.0, seed, sweep_rows(n_keys))
    cells = fixed[fixed["d"].isin(QUOTED_D)]
    return {
        (float(a), int(d)): {"mean": float(mean), "median": float(median)}
        for a, d, mean, median in zip(
            cells["alpha"],
            cells["d"],
            cells["jacobian_fro_mean"],
            cells["jacobian_fro_median"],
            strict=True,
        )
    }


@st.cache_data(max_entries=64, show_spinner=False)
def jacobian_row(
    d_k: int, n_keys: int, alpha: float, seed: int
) -> tuple[pd.DataFrame, dict[str, dict[str, float]]]:
    """J = ∂p/∂z of one sampled query row, unscaled (α = 0) and at ``alpha``.

    Returns
    -------
    cells : DataFrame (≤ 2 × 32² rows)
        ``which`` ("unscaled" / "scaled"), ``i``, ``j`` (1-based key numbers),
        ``value`` (J_ij), ``p_i``, ``p_j`` — for the ``HEATMAP_MAX_KEYS`` keys with the
        largest scores when the row is longer.
    summary : dict
        Per ``which``: ``p_top``, ``rest`` (1 − p_top, summed from the small weights),
        ``fro`` (‖J‖_F over all keys), ``max_abs`` (largest |J_ij|), ``c`` (d_k^−α).
    """
    from core.experiments import sample_scores
    from core.gradients import jacobian_from_logits
    from core.softmax import jacobian_norm

    scores = sample_scores(d_k, n_keys, rng=rng_for(seed, STREAM_JACOBIAN_ROW))[0]
    shown = np.sort(np.argsort(-scores, kind="stable")[:HEATMAP_MAX_KEYS])
    frames, summary = [], {}
    for which, a in (("unscaled", 0.0), ("scaled", float(alpha))):
        c = float(d_k) ** -a
        p, jac = jacobian_from_logits(c * scores)
        top = int(np.argmax(p))
        summary[which] = {
            "p_top": float(p[top]),
            "rest": float(np.delete(p, top).sum()),
            "fro": float(jacobian_norm(p)),
            "max_abs": float(np.abs(jac).max()),
            "c": c,
        }
        sub = jac[np.ix_(shown, shown)]
        ii, jj = np.meshgrid(shown, shown, indexing="ij")
        frames.append(
            pd.DataFrame(
                {
                    "which": which,
                    "i": ii.ravel() + 1,
                    "j": jj.ravel() + 1,
                    "value": sub.ravel(),
                    "p_i": p[ii.ravel()],
                    "p_j": p[jj.ravel()],
                }
            )
        )
    return pd.concat(frames, ignore_index=True), summary


@st.cache_data(max_entries=64, show_spinner=False)
def jacobian_summary(
    d_k: int, n_keys: int, alpha: float, seed: int
) -> tuple[dict[str, dict[str, float]], float]:
    """The summary of :func:`jacobian_row` alone, and the largest |J_ij| of its cells (the
    colour scale both heatmaps share): plain numbers, so a hit copies no frame."""
    cells, summary = jacobian_row(d_k, n_keys, alpha, seed)
    return summary, float(cells["value"].abs().max())


#: The gap explorer draws and prints a law only within this relative error of the exact value.
GAP_LAW_TOLERANCE = 0.25


def gap_law_holds(p_top, law, exact):
    """Where a gap-explorer law is shown (chart and formula alike): the top key holds at
    least half the weight (Σε ≤ 1, where the laws are leading-order expansions) and the
    law is within ``GAP_LAW_TOLERANCE`` of the exact value. Scalars or arrays."""
    p_top, law, exact = np.asarray(p_top), np.asarray(law), np.asarray(exact)
    with np.errstate(divide="ignore", invalid="ignore"):
        near = np.abs(law / exact - 1) <= GAP_LAW_TOLERANCE
    return (p_top >= 0.5) & (exact > 0) & near


@st.cache_data(max_entries=64, show_spinner=False)
def gap_curves(n_keys: int, gap2: float | None) -> pd.DataFrame:
    """‖J‖_F and the largest off-diagonal |J_ij| against the gap g, exact and law.

    Returns
    -------
    DataFrame (≤ 4 × 61 rows): ``g``, ``quantity`` ("fro" / "offdiag"), ``kind``
    ("exact" / "law"), ``value``. Laws only where the top key holds at least half the
    weight (Σε ≤ 1), the regime in which they are leading-order expansions, and where
    they are within ``GAP_LAW_TOLERANCE`` of the exact value.
    """
    from core.gradients import gap_curve

    cur = gap_curve(GAP_GRID, n_keys, gap2)
    frames = []
    for quantity in ("fro", "offdiag"):
        frames.append(pd.DataFrame({"g": cur["g"], "kind": "exact", "value": cur[quantity]}))
        law, exact = cur[f"{quantity}_law"], cur[quantity]
        valid = gap_law_holds(cur["p_top"], law, exact)
        frames.append(pd.DataFrame({"g": cur["g"][valid], "kind": "law", "value": law[valid]}))
        frames[-2]["quantity"] = frames[-1]["quantity"] = quantity
    return pd.concat(frames, ignore_index=True)


def gap_point(g: float, n_keys: int, gap2: float | None) -> dict[str, float]:
    """:func:`core.gradients.gap_curve` at one gap (microseconds: not cached)."""
    from core.gradients import gap_curve

    return {k: float(v[0]) for k, v in gap_curve([g], n_keys, gap2).items()}


@st.cache_data(max_entries=32, show_spinner=False)
def query_grad_median(d_k: int, n_keys: int, alpha: float, seed: int) -> float:
    """Median ‖∂L/∂q‖ at exponent ``alpha`` over the rows of :func:`query_grad_histogram`
    (same seed stream: the same rows)."""
    from core.gradients import query_grad_norms

    rng = rng_for(seed, STREAM_QUERY_GRAD)
    return float(
        np.median(query_grad_norms(d_k, n_keys, float(alpha), rng=rng, n_rows=sweep_rows(n_keys)))
    )


@st.cache_data(max_entries=32, show_spinner=False)
def query_grad_histogram(
    d_k: int, n_keys: int, alpha: float, seed: int
) -> tuple[pd.DataFrame, dict[str, dict[str, float]], dict[str, float]]:
    """Histogram of log10 ‖∂L/∂q‖ over random rows, unscaled (α = 0) and at ``alpha``.

    Both series use the same rows (same seed stream), so they differ only by the
    scaling. Bins are ``HIST_BIN`` decades wide over at most ``HIST_SPAN`` decades
    below the largest value; rows further down are counted in the leftmost bin.

    Returns
    -------
    bins : DataFrame (≤ 2 × 97 rows): ``which``, ``x0``, ``x1``, ``share`` (% of rows).
    stats : dict per ``which``: ``median``, ``median_log10``, ``mean``, ``q10``, ``q90``,
        ``clipped`` (share of rows below the leftmost edge, %).
    geometry : dict: ``lo``, ``hi`` (outer edges, decades; ``lo`` a whole decade), ``n_rows``.
    """
    from core.gradients import query_grad_norms

    n_rows = sweep_rows(n_keys)
    norms = {
        which: query_grad_norms(d_k, n_keys, a, rng=rng_for(seed, STREAM_QUERY_GRAD), n_rows=n_rows)
        for which, a in (("unscaled", 0.0), ("scaled", float(alpha)))
    }
    logs = {w: np.log10(np.maximum(x, 1e-300)) for w, x in norms.items()}
    top = max(float(v.max()) for v in logs.values())
    bottom = min(float(v.min()) for v in logs.values())
    hi = math.ceil(top / HIST_BIN) * HIST_BIN
    lo = float(max(math.floor(bottom), math.ceil(hi - HIST_SPAN)))  # a whole decade
    edges = np.arange(lo, hi + HIST_BIN / 2, HIST_BIN)
    if edges.size < 2:
        edges = np.array([lo, lo + HIST_BIN])
    frames, stats = [], {}
    for which, lx in logs.items():
        counts, _ = np.histogram(np.clip(lx, edges[0], edges[-1]), bins=edges)
        frames.append(
            pd.DataFrame(
                {"which": which, "x0": edges[:-1], "x1": edges[1:], "share": 100 * counts / n_rows}
            )
        )
        x = norms[which]
        stats[which] = {
            "median": float(np.median(x)),
            "median_log10": float(np.log10(max(np.median(x), 1e-300))),
            "mean": float(x.mean()),
            "q10": float(np.quantile(x, 0.1)),
            "q90": float(np.quantile(x, 0.9)),
            "clipped": float(100 * np.mean(lx < edges[0])),
        }
    geometry = {"lo": float(edges[0]), "hi": float(edges[-1]), "n_rows": n_rows}
    return pd.concat(frames, ignore_index=True), stats, geometry


@st.cache_data(max_entries=32, show_spinner=False)
def query_grad_stats(
    d_k: int, n_keys: int, alpha: float, seed: int
) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """The stats and the geometry of :func:`query_grad_histogram` alone: plain numbers,
    so a hit copies no frame."""
    _, stats, geometry = query_grad_histogram(d_k, n_keys, alpha, seed)
    return stats, geometry
