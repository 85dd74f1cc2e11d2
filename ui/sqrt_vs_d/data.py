"""Data of the √d_k-vs-d_k page: cached sweeps, and chart-ready frames with labels.

The sweeps are filtered to the page's d_k range, labelled in the current language and
shaped for :mod:`ui.sqrt_vs_d.charts` and :func:`ui.common.charts.sweep_lines`.
Conventions of the cached wrappers: :mod:`ui.common.data`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from core.scaling import independent_logit_std, linear_scaling_weight_limit, relevant_logit_mean
from ui.common.charts import COLORS, alpha_color
from ui.common.controls import ALPHA_PRESETS, alpha_label
from ui.common.data import SWEEP_D, alpha_sweep, is_preset, rng_for, sweep_rows
from ui.common.i18n import t
from ui.common.pages import page

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


#: Values at or below this are not drawn on a log axis (a numerically dead softmax).
LOG_FLOOR = 1e-12


def sweep(n_keys: int, alpha: float, rho: float, seed: int) -> pd.DataFrame:
    """Every statistic for d_k = 1…4096 and the α's shown: two cached calls.

    The fixed α ∈ {0, ½, 1} and the chosen α are separate cache entries, so moving α
    recomputes one α only. Both draw the same rows (same seed and stream), so a chosen
    α equal to a preset would reproduce its curve exactly.
    """
    return pd.concat(alpha_sweep(n_keys, alpha, rho, seed), ignore_index=True)


def in_range(df: pd.DataFrame, d_lo: int, d_hi: int) -> pd.DataFrame:
    return df[(df["d"] >= d_lo) & (df["d"] <= d_hi)].reset_index(drop=True)


def _labelled(df: pd.DataFrame, value: np.ndarray, se: np.ndarray, log: bool) -> pd.DataFrame:
    alphas = df["alpha"].to_numpy()
    names = {a: (alpha_label(a), alpha_color(a)) for a in np.unique(alphas)}
    out = pd.DataFrame(
        {
            "d": df["d"].to_numpy(),
            "alpha": alphas,
            "series": [names[a][0] for a in alphas],
            "color": [names[a][1] for a in alphas],
            "value": value,
            "lo": value - 2 * se,
            "hi": value + 2 * se,
        }
    )
    if log:  # a log axis needs positive values; a band reaching 0 is cut at a decade
        keep = out["value"] > LOG_FLOOR
        out = out[keep].assign(lo=np.maximum(out["lo"], out["value"] / 10))
    return out.reset_index(drop=True)


def lines(df: pd.DataFrame, stat: str, *, divide_by: float = 1.0, log: bool = False):
    """Frame for :func:`ui.common.charts.sweep_lines`: mean ± 2 s.e. of ``stat`` per α and d_k."""
    se_name = (
        "relevant_argmax_se"
        if stat == "relevant_argmax_rate"
        else stat.replace("_mean", "") + "_se"
    )
    value = df[stat].to_numpy() / divide_by
    return _labelled(df, value, df[se_name].to_numpy() / divide_by, log)


def argmax_line(df: pd.DataFrame) -> pd.DataFrame:
    """The relevant key's argmax share: one series, since no α changes the order of logits."""
    one = df[df["alpha"] == 0.5]
    value = one["relevant_argmax_rate"].to_numpy()
    out = _labelled(one, value, one["relevant_argmax_se"].to_numpy(), log=False)
    return out.assign(series=t("sqrt_vs_d.series_any_alpha"), color=COLORS["theory"])


def logit_frame(df: pd.DataFrame, which: str, rho: float) -> pd.DataFrame:
    """Measured logit scale with theory, per α: ``which`` is "std" (independent keys'
    spread, theory d_k^(½−α)) or "mean" (relevant key's mean logit, theory ρ d_k^(1−α))."""
    stat, se = (
        ("logit_std", "logit_std_se")
        if which == "std"
        else ("relevant_logit_mean", "relevant_logit_se")
    )
    out = _labelled(df, df[stat].to_numpy(), df[se].to_numpy(), log=True)
    theory = [
        independent_logit_std(int(d), a) if which == "std" else relevant_logit_mean(int(d), a, rho)
        for d, a in zip(out["d"], out["alpha"], strict=True)
    ]
    return out.assign(theory=theory)


def references(n_keys: int, rho: float, *, limit: bool) -> pd.DataFrame:
    """One horizontal reference line: 1/n_keys, or (``limit`` and rho > 0) the large-d_k
    weight of 1/d_k scaling, labelled with 1/n_keys too (two lines so close would clash)."""
    chance = 1.0 / n_keys
    if limit and rho > 0:
        w = linear_scaling_weight_limit(n_keys, rho)
        label = t("sqrt_vs_d.ref_limit", value=f"{w:.3g}", chance=f"{chance:.3g}")
        return pd.DataFrame({"y": [w], "label": [label]})
    return pd.DataFrame(
        {"y": [chance], "label": [t("sqrt_vs_d.ref_one_over_n", value=f"{chance:.3g}")]}
    )


def uniform_reference() -> pd.DataFrame:
    """The entropy share of uniform attention, 1."""
    return pd.DataFrame({"y": [1.0], "label": [t("sqrt_vs_d.ref_uniform")]})


def heatmap_rules() -> pd.DataFrame:
    """α = ½ and α = 1 for the heatmap (not the chosen α: moving α must not redraw it)."""
    shown = [0.5, 1.0]
    return pd.DataFrame(
        {
            "alpha": shown,
            "label": [alpha_label(a) for a in shown],
            "color": [alpha_color(a) for a in shown],
        }
    )


def at_d(d_k: int, n_keys: int, alpha: float, rho: float, seed: int) -> pd.DataFrame:
    """Statistics at the user's d_k for the α's shown (presets and the chosen α cached apart)."""
    parts = [sqrt_vs_d_at_d(d_k, n_keys, ALPHA_PRESETS, rho, seed)]
    if not is_preset(alpha):
        parts.append(sqrt_vs_d_at_d(d_k, n_keys, (alpha,), rho, seed))
    return pd.concat(parts, ignore_index=True)


def summary_table(at_d: pd.DataFrame, d_k: int, n_keys: int, rho: float) -> pd.DataFrame:
    """One row per α at the user's d_k: measured (theory) logit scale, entropy share and weights."""
    ln_n = math.log(n_keys)
    rows = []
    for r in at_d.itertuples():
        rows.append(
            {
                t("sqrt_vs_d.col_alpha"): alpha_label(r.alpha),
                t(
                    "sqrt_vs_d.col_std"
                ): f"{r.logit_std:.3g} ({independent_logit_std(d_k, r.alpha):.3g})",
                t(
                    "sqrt_vs_d.col_mean"
                ): f"{r.relevant_logit_mean:.3g} ({relevant_logit_mean(d_k, r.alpha, rho):.3g})",
                t("sqrt_vs_d.col_entropy"): f"{r.entropy_mean / ln_n:.3f}",
                t("sqrt_vs_d.col_max"): f"{r.max_weight_mean:.3f}",
                t("sqrt_vs_d.col_relevant"): f"{r.relevant_weight_mean:.3f}",
            }
        )
    return pd.DataFrame(rows)
