"""Chart-ready frames for the √d_k-vs-d_k page (cached sweeps → tidy rows with labels).

The sweeps come from :mod:`ui.cache`; here they are filtered to the page's d_k range,
labelled in the current language and shaped for :mod:`ui.charts`.
"""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from core.scaling import (
    independent_logit_std,
    linear_scaling_weight_limit,
    relevant_logit_mean,
    signal_to_noise,
)
from ui import cache, charts, workshop
from ui.controls import ALPHA_PRESETS, alpha_label
from ui.i18n import t

#: d_k values the range controls offer (the sweep's grid, powers of two).
D_OPTIONS = tuple(str(int(d)) for d in cache.SWEEP_D)
#: Values at or below this are not drawn on a log axis (a numerically dead softmax).
LOG_FLOOR = 1e-12


def sweep(n_keys: int, alpha: float, rho: float, seed: int) -> pd.DataFrame:
    """Every statistic for d_k = 1…4096 and the α's shown: two cached calls.

    The fixed α ∈ {0, ½, 1} and the chosen α are separate cache entries, so moving α
    recomputes one α only. Both draw the same rows (same seed and stream), so a chosen
    α equal to a preset would reproduce its curve exactly.
    """
    rows = cache.sqrt_vs_d_rows(n_keys)
    parts = [cache.saturation_sweep(n_keys, ALPHA_PRESETS, rho, seed, rows)]
    if alpha not in ALPHA_PRESETS:
        parts.append(cache.saturation_sweep(n_keys, (alpha,), rho, seed, rows))
    return pd.concat(parts, ignore_index=True)


def in_range(df: pd.DataFrame, d_lo: int, d_hi: int) -> pd.DataFrame:
    return df[(df["d"] >= d_lo) & (df["d"] <= d_hi)].reset_index(drop=True)


def _labelled(df: pd.DataFrame, value: np.ndarray, se: np.ndarray, log: bool) -> pd.DataFrame:
    out = pd.DataFrame(
        {
            "d": df["d"].to_numpy(),
            "alpha": df["alpha"].to_numpy(),
            "series": [alpha_label(a) for a in df["alpha"]],
            "color": [charts.alpha_color(a) for a in df["alpha"]],
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
    """Frame for :func:`ui.charts.sweep_lines`: mean ± 2 s.e. of ``stat`` per α and d_k."""
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
    return out.assign(series=t("sqrt_vs_d.series_any_alpha"), color=charts.COLORS["theory"])


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


def logit_latex(d_k: int, alpha: float, rho: float) -> str:
    """The three logit-scale formulas with the user's d_k, α and ρ substituted."""
    std = independent_logit_std(d_k, alpha)
    mean = relevant_logit_mean(d_k, alpha, rho)
    return (
        rf"d_k = {d_k},\ \alpha = {alpha:g},\ \rho = {rho:g}:\quad"
        rf"\operatorname{{std}}(z_j) = d_k^{{1/2-\alpha}} = {std:.4g},\quad"
        rf"\mathbb{{E}}[z_0] = \rho\, d_k^{{1-\alpha}} = {mean:.4g},\quad"
        rf"\frac{{\mathbb{{E}}[z_0]}}{{\operatorname{{std}}(z_j)}} = \rho\sqrt{{d_k}}"
        rf" = {signal_to_noise(d_k, rho):.4g}"
    )


def heatmap_rules() -> pd.DataFrame:
    """α = ½ and α = 1 for the heatmap (not the chosen α: moving α must not redraw it)."""
    shown = [0.5, 1.0]
    return pd.DataFrame(
        {
            "alpha": shown,
            "label": [alpha_label(a) for a in shown],
            "color": [charts.alpha_color(a) for a in shown],
        }
    )


def at_d(d_k: int, n_keys: int, alpha: float, rho: float, seed: int) -> pd.DataFrame:
    """Statistics at the user's d_k for the α's shown (presets and the chosen α cached apart)."""
    parts = [cache.sqrt_vs_d_at_d(d_k, n_keys, ALPHA_PRESETS, rho, seed)]
    if alpha not in ALPHA_PRESETS:
        parts.append(cache.sqrt_vs_d_at_d(d_k, n_keys, (alpha,), rho, seed))
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


def summary(d_k: int, n_keys: int, alpha: float, rho: float, seed: int) -> None:
    """The table of statistics at the user's d_k, with its caption."""
    stats = at_d(d_k, n_keys, alpha, rho, seed)
    st.subheader(t("sqrt_vs_d.summary_title", d_k=d_k, n=n_keys, rho=f"{rho:g}"))
    # a static table: its text follows the page's type size (larger in presenter mode)
    table = summary_table(stats, d_k, n_keys, rho)
    st.table(table.set_index(table.columns[0]))
    st.caption(
        t(
            "sqrt_vs_d.summary_caption",
            rate=f"{stats['relevant_argmax_rate'].iloc[0]:.3f}",
            chance=f"{1 / n_keys:.3g}",
            rows=f"{cache.sqrt_vs_d_rows(n_keys):,}",
        )
    )


def _set_rho(value: float) -> None:
    st.session_state["rho"] = value


#: ρ presets: independent keys (initialisation) and one aligned key (after training).
RHO_PRESETS = (("rho_init", 0.0), ("rho_aligned", 0.5))


def rho_presets(current: float) -> None:
    """Two buttons under the ρ slider: ρ = 0 and ρ = 0.5 (the values REFERENCE §1 quotes)."""
    cols = workshop.control_columns(len(RHO_PRESETS))  # stacked in the presenter sidebar
    for col, (name, value) in zip(cols, RHO_PRESETS, strict=True):
        col.button(
            t(f"sqrt_vs_d.{name}"),
            key=f"{name}_preset",
            on_click=_set_rho,
            args=(value,),
            type="primary" if current == value else "secondary",
            width="stretch",
        )


def chart(
    builder: str, *frames: pd.DataFrame, legend_cols: int | None = 2, **options
) -> alt.LayerChart:
    """``charts.<builder>(*frames, **options)``, styled for this page.

    ``legend_cols`` entries per legend row (half-width charts cannot fit four Chinese α
    labels in one row), with the plot made taller to keep its size; None keeps the
    builder's legend. Building is cheaper than hashing the frames for a cache lookup
    would be (about 2–3 ms a chart), so charts are built on every run.
    """
    if legend_cols:
        options = {**options, "legend_columns": legend_cols}
    out = getattr(charts, builder)(*frames, **options)
    if legend_cols:
        out.height = 360
    # full-strength legend symbols (a legend otherwise takes its band's opacity)
    out.config = alt.Config(legend=alt.LegendConfig(symbolOpacity=1))
    return out


# --- workshop: predictions and the misconception card, from the live sweep -------------
#: The d_k range the questions and the myth card talk about (the sweep's ends).
D_SMALL, D_START, D_LARGE = 1, 16, 4096


def value_at(df: pd.DataFrame, alpha: float, d: int, stat: str) -> float:
    """One statistic of the full (unfiltered) sweep at exponent ``alpha`` and d_k = ``d``."""
    rows = np.flatnonzero((df["alpha"].to_numpy() == alpha) & (df["d"].to_numpy() == d))
    if rows.size != 1:
        raise ValueError(f"the sweep has {rows.size} rows at alpha={alpha}, d={d}")
    return float(df[stat].to_numpy()[rows[0]])


#: When the d_k = 1 value and the 1/d_k limit are within this fraction of the limit,
#: "stays" and "settles at the limit" are the same answer (few keys and a large ρ): the
#: max-weight question is not asked. Relative, not absolute: with many keys both are
#: small, yet a fall from 0.025 to 0.003 (n_keys = 512, ρ = 0.5) is well worth asking.
MAX_WEIGHT_TIE = 0.25


def max_weight_question(df: pd.DataFrame, n_keys: int, rho: float) -> dict:
    """Predict-first question: with 1/d_k, where does the largest weight go from d_k = 1
    to 4096? The answer is the option whose level (1, the d_k = 1 value, the large-d_k
    limit e^ρ/(e^ρ + n_keys − 1), which is 1/n_keys at ρ = 0) lies nearest the measured
    value at d_k = 4096."""
    start = value_at(df, 1.0, D_SMALL, "max_weight_mean")
    end = value_at(df, 1.0, D_LARGE, "max_weight_mean")
    half = value_at(df, 0.5, D_LARGE, "max_weight_mean")
    chance = 1.0 / n_keys
    limit = linear_scaling_weight_limit(n_keys, rho)  # softmax(ρ, 0, …, 0)'s largest weight
    levels = (1.0, start, limit)
    tie = abs(start / limit - 1.0) < MAX_WEIGHT_TIE
    falls = (
        t("sqrt_vs_d_workshop.max_falls", chance=f"{chance:.3g}")
        if rho == 0
        else t("sqrt_vs_d_workshop.max_falls_rho", limit=f"{limit:.3g}")
    )
    options = [
        t("sqrt_vs_d_workshop.max_rises"),
        t("sqrt_vs_d_workshop.max_stays", value=f"{start:.2f}"),
        falls,
    ]
    return {
        "key": "sqrt_vs_d_max",
        "about": (n_keys, rho, start, end),
        "unanswerable": t(
            "sqrt_vs_d_workshop.max_tie",
            n=n_keys,
            rho=f"{rho:g}",
            start=f"{start:.3f}",
            limit=f"{limit:.3f}",
        )
        if tie
        else None,
        "question": t("sqrt_vs_d_workshop.max_q", n=n_keys, rho=f"{rho:g}", d=D_LARGE),
        "options": options,
        "answer": int(np.argmin([abs(end - level) for level in levels])),
        "explain": t(
            "sqrt_vs_d_workshop.max_explain_rho0" if rho == 0 else "sqrt_vs_d_workshop.max_explain",
            start=f"{start:.3f}",
            end=f"{end:.3f}",
            half=f"{half:.3f}",
            chance=f"{chance:.3g}",
            limit=f"{limit:.3g}",
            d=D_LARGE,
        ),
    }


def relevant_weight_question(df: pd.DataFrame, n_keys: int, rho: float) -> dict:
    """Predict-first question: with 1/√d_k, does the relevant key's weight rise, stay or
    fall from d_k = 16 to 4096? "Stays" when the change is within max(0.02, 4 s.e.)."""
    a = value_at(df, 0.5, D_START, "relevant_weight_mean")
    b = value_at(df, 0.5, D_LARGE, "relevant_weight_mean")
    se = math.hypot(
        value_at(df, 0.5, D_START, "relevant_weight_se"),
        value_at(df, 0.5, D_LARGE, "relevant_weight_se"),
    )
    tol = max(0.02, 4 * se)
    answer = 0 if b - a > tol else 2 if b - a < -tol else 1
    chance = 1.0 / n_keys
    options = [
        t("sqrt_vs_d_workshop.rel_rises"),
        t("sqrt_vs_d_workshop.rel_stays"),
        t("sqrt_vs_d_workshop.rel_falls", chance=f"{chance:.3g}"),
    ]
    return {
        "key": "sqrt_vs_d_relevant",
        "about": (n_keys, rho, a, b),
        # at ρ = 0 key 0 is one more independent key: nothing to predict
        "unanswerable": t("sqrt_vs_d_workshop.rel_rho0") if rho == 0 else None,
        "question": t("sqrt_vs_d_workshop.rel_q", n=n_keys, rho=f"{rho:g}", lo=D_START, hi=D_LARGE),
        "options": options,
        "answer": answer,
        "explain": t(
            "sqrt_vs_d_workshop.rel_explain",
            a=f"{a:.3f}",
            b=f"{b:.3f}",
            c=f"{value_at(df, 1.0, D_START, 'relevant_weight_mean'):.3f}",
            d=f"{value_at(df, 1.0, D_LARGE, 'relevant_weight_mean'):.3f}",
            lo=D_START,
            hi=D_LARGE,
        ),
    }


def myth_numbers(df: pd.DataFrame, n_keys: int) -> dict[str, str]:
    """Entropy share and largest weight at d_k = 4096 for α = ½ and α = 1, formatted."""
    ln_n = math.log(n_keys)
    out = {}
    for name, alpha in (("half", 0.5), ("one", 1.0)):
        out[f"h_{name}"] = f"{value_at(df, alpha, D_LARGE, 'entropy_mean') / ln_n:.3f}"
        out[f"m_{name}"] = f"{value_at(df, alpha, D_LARGE, 'max_weight_mean'):.3f}"
    return out


def myth_reality(df: pd.DataFrame, n_keys: int, rho: float) -> str:
    """The misconception card's answer, with the live counter-example at d_k = 4096."""
    return t(
        "sqrt_vs_d_workshop.myth_reality" if rho == 0 else "sqrt_vs_d_workshop.myth_reality_rho",
        d=D_LARGE,
        n=n_keys,
        rho=f"{rho:g}",
        chance=f"{1 / n_keys:.3g}",
        **myth_numbers(df, n_keys),
    )
