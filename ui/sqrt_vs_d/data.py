"""Data of the √d_k-vs-d_k page: cached sweeps, chart-ready frames, plain numbers.

The sweeps are filtered to the page's d_k range, labelled with the legend labels they
are given (:mod:`ui.sqrt_vs_d.frames` passes them in) and shaped for
:mod:`ui.sqrt_vs_d.charts` and :func:`ui.common.charts.sweep_lines`; the texts read
plain numbers from cached calls. Conventions of the cached wrappers: :mod:`ui.common.data`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st

from core.scaling import independent_logit_std, relevant_logit_mean
from ui.common.charts import COLORS, alpha_color
from ui.common.controls import ALPHA_PRESETS, alpha_label
from ui.common.data import SWEEP_D, is_preset, rng_for, sweep_rows
from ui.common.i18n import t
from ui.common.pages import page
from ui.common.specs import text_table
from ui.story.data import labelled_sweep

STREAM_SQRT_VS_D_HEATMAP, STREAM_SQRT_VS_D_AT_D = 40, 41


#: α grid of the (d_k, α) heatmap: 0, 0.05, …, 1.5 (31 values).
HEATMAP_ALPHAS = tuple(round(0.05 * i, 2) for i in range(31))


def sqrt_vs_d_heatmap_rows(n_keys: int) -> int:
    """Rows per heatmap cell: 600 at n_keys ≤ 10, fewer for longer rows (≤ 6k scores).

    The cell's colour is a mean entropy share, whose standard error at 600 rows is
    below 0.01 — finer than the colour scale resolves.
    """
    return min(600, max(40, 6_000 // int(n_keys)))


@st.cache_data(max_entries=16, show_spinner=False)
def sqrt_vs_d_heatmap(n_keys: int, rho: float, seed: int) -> pd.DataFrame:
    """Mean entropy / ln n_keys over d_k = 1…4096 × α = 0, 0.05, …, 1.5.

    Independent of the page's α and d_k controls, so moving them never recomputes it.
    About 0.03 s of CPU at any n_keys (600 rows per cell at n_keys = 10).

    Returns
    -------
    DataFrame, 13 × 31 = 403 rows: ``d``, ``alpha``, ``share`` (mean H / ln n_keys),
    ``share_se``.
    """
    from core.experiments import saturation_sweep as sweep

    out = sweep(
        [int(d) for d in SWEEP_D],
        n_keys,
        list(HEATMAP_ALPHAS),
        rng=rng_for(seed, STREAM_SQRT_VS_D_HEATMAP),
        n_rows=sqrt_vs_d_heatmap_rows(n_keys),
        rho=rho,
    )
    ln_n = math.log(n_keys)
    return pd.DataFrame(
        {
            "d": out["d"].ravel(),
            "alpha": out["alpha"].ravel(),
            "share": out["entropy_mean"].ravel() / ln_n,
            "share_se": out["entropy_se"].ravel() / ln_n,
        }
    )


@st.cache_data(max_entries=64, show_spinner=False)
def sqrt_vs_d_at_d(
    d_k: int, n_keys: int, alphas: tuple[float, ...], rho: float, seed: int
) -> pd.DataFrame:
    """Saturation statistics at one d_k for a few α (the page's summary table).

    Returns
    -------
    DataFrame, one row per alpha: ``alpha`` and every statistic of
    :class:`core.experiments.SaturationStats`.
    """
    from core.experiments import saturation_sweep as sweep

    out = sweep(
        [int(d_k)],
        n_keys,
        list(alphas),
        rng=rng_for(seed, STREAM_SQRT_VS_D_AT_D),
        n_rows=sweep_rows(n_keys),
        rho=rho,
    )
    return pd.DataFrame({name: np.asarray(values).ravel() for name, values in out.items()})


#: d_k values the range controls offer (the sweep's grid, powers of two).
D_OPTIONS = page("sqrt_vs_d").param("d_min").options


def lines(
    df: pd.DataFrame,
    stat: str,
    labels: dict[float, str],
    *,
    divide_by: float = 1.0,
    log: bool = False,
) -> pd.DataFrame:
    """Frame for :func:`ui.common.charts.sweep_lines`: mean ± 2 s.e. of ``stat`` per α and
    d_k; ``labels``: each α's legend label."""
    se_name = (
        "relevant_argmax_se"
        if stat == "relevant_argmax_rate"
        else stat.replace("_mean", "") + "_se"
    )
    value = df[stat].to_numpy() / divide_by
    return labelled_sweep(df, value, df[se_name].to_numpy() / divide_by, log, labels)


def argmax_line(df: pd.DataFrame, label: str) -> pd.DataFrame:
    """The relevant key's argmax share: one series (legend ``label``), since no α changes
    the order of logits."""
    one = df[df["alpha"] == 0.5]
    value = one["relevant_argmax_rate"].to_numpy()
    out = labelled_sweep(one, value, one["relevant_argmax_se"].to_numpy(), False, {0.5: label})
    return out.assign(color=COLORS["theory"])


def reference_frame(lines: tuple[tuple[float, str], ...]) -> pd.DataFrame:
    """Horizontal reference lines (y, label) for :func:`ui.common.charts.sweep_lines`."""
    return pd.DataFrame(list(lines), columns=["y", "label"])


def heatmap_rules(labels: tuple[tuple[float, str], ...]) -> pd.DataFrame:
    """The exponents ruled across the heatmap, (α, legend label) pairs, with their colours
    (α = ½ and α = 1, not the chosen α: moving α must not redraw it)."""
    return pd.DataFrame(
        {
            "alpha": [a for a, _ in labels],
            "label": [label for _, label in labels],
            "color": [alpha_color(a) for a, _ in labels],
        }
    )


@st.cache_data(max_entries=64, show_spinner=False)
def at_d(d_k: int, n_keys: int, alpha: float, rho: float, seed: int) -> list[dict[str, float]]:
    """Statistics at the user's d_k for the α's shown (presets and the chosen α cached
    apart), one dict per α: ``alpha`` and every statistic of
    :class:`core.experiments.SaturationStats` (plain numbers: a hit copies no frame)."""
    parts = [sqrt_vs_d_at_d(d_k, n_keys, ALPHA_PRESETS, rho, seed)]
    if not is_preset(alpha):
        parts.append(sqrt_vs_d_at_d(d_k, n_keys, (alpha,), rho, seed))
    rows = pd.concat(parts, ignore_index=True).to_dict("records")
    return [{k: float(v) for k, v in row.items()} for row in rows]


def summary_table(at_d: list[dict[str, float]], d_k: int, n_keys: int, rho: float) -> pa.Table:
    """One row per α at the user's d_k (:func:`at_d`): measured (theory) logit scale,
    entropy share and weights."""
    ln_n = math.log(n_keys)
    rows = []
    for r in at_d:
        a = r["alpha"]
        std, mean = independent_logit_std(d_k, a), relevant_logit_mean(d_k, a, rho)
        rows.append(
            {
                t("sqrt_vs_d.col_alpha"): alpha_label(a),
                t("sqrt_vs_d.col_std"): f"{r['logit_std']:.3g} ({std:.3g})",
                t("sqrt_vs_d.col_mean"): f"{r['relevant_logit_mean']:.3g} ({mean:.3g})",
                t("sqrt_vs_d.col_entropy"): f"{r['entropy_mean'] / ln_n:.3f}",
                t("sqrt_vs_d.col_max"): f"{r['max_weight_mean']:.3f}",
                t("sqrt_vs_d.col_relevant"): f"{r['relevant_weight_mean']:.3f}",
            }
        )
    return text_table(rows)
