"""Cached data of the story's answers at initialisation (conventions of the cached
wrappers: :mod:`ui.common.data`): the variance sweep, the saturation sweep at its far end,
the gradient sweeps, the √d_k-vs-d_k sweep labelled for its charts, and the multi-head
experiment of "Which d?". The pages draw them, and the recap draws them in small.

Each cached function takes plain values only and returns small frames or plain numbers;
the words a frame holds come in as arguments (:mod:`ui.story.frames`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from core import variance as var_core
from core.scaling import independent_logit_std, relevant_logit_mean
from ui.common.charts import COLORS, alpha_color
from ui.common.controls import ALPHA_PRESETS
from ui.common.data import SWEEP_D, alpha_sweep, rng_for, saturation_sweep, sweep_rows

#: Random streams (:func:`ui.common.data.rng_for`): the variance sweep's is the variance
#: page's second, the multi-head experiment's the first of which-d's decade.
STREAM_VARIANCE_SWEEP, STREAM_WHICH_D_HEADS = 2, 50


# --- variance: Var(q·k) against d_k -------------------------------------------------------
SWEEP_SAMPLES = 20_000


MAX_UNIFORM_SWEEP_PRODUCTS = 2**24


@st.cache_data(max_entries=8, show_spinner=False)
def variance_sweep(dist: str, seed: int) -> pd.DataFrame:
    """Var(q·k) at unit σ over d_k = 1…4096, unscaled and divided by √d_k.

    Returns
    -------
    DataFrame, 26 rows: d, scaled (bool), var, lo, hi, theory — for σ_q = σ_k = 1;
    multiply var, lo, hi, theory by σ_q²σ_k² for other scales.
    """
    sw = var_core.variance_sweep(
        SWEEP_D,
        SWEEP_SAMPLES,
        rng=rng_for(seed, STREAM_VARIANCE_SWEEP),
        dist=dist,
        max_products=MAX_UNIFORM_SWEEP_PRODUCTS,
    )
    raw = pd.DataFrame({k: sw[k] for k in ("d", "var", "lo", "hi", "theory")}).assign(scaled=False)
    scaled = raw.assign(
        var=raw["var"] / raw.d, lo=raw.lo / raw.d, hi=raw.hi / raw.d, theory=1.0, scaled=True
    )
    return pd.concat([raw, scaled], ignore_index=True)


# --- saturation: the sweep's far end (the prediction) -------------------------------
def sweep_far_end(n_keys: int, seed: int) -> dict:
    """The saturation sweep (α = 0, ½, 1) at its largest d_k, for the prediction:
    ``d`` (that d_k), ``mean_0`` and ``se_0`` (mean largest weight at α = 0 and its
    s.e.), ``mean_half`` (at α = ½)."""
    fixed = saturation_sweep(n_keys, ALPHA_PRESETS, 0.0, seed, sweep_rows(n_keys))
    d = int(fixed["d"].max())
    cell = lambda alpha, field: sweep_at(fixed, alpha, d, field)  # noqa: E731
    return {
        "d": d,
        "mean_0": cell(0.0, "max_weight_mean"),
        "se_0": cell(0.0, "max_weight_se"),
        "mean_half": cell(0.5, "max_weight_mean"),
    }


def sweep_at(df: pd.DataFrame, alpha: float, d: int, field: str) -> float:
    """One cell of a :func:`ui.common.data.saturation_sweep` frame: ``field`` at (alpha, d)."""
    sel = df[np.isclose(df["alpha"], alpha) & (df["d"] == d)]
    if len(sel) != 1:
        raise ValueError(f"no single sweep cell at alpha={alpha}, d={d}")
    return float(sel[field].iloc[0])


# --- gradients: the sweeps against d_k -----------------------------------------------
#: log y-axes stop here; smaller values (never reached for d_k ≤ 4096) sit on the floor.
GRADIENT_LOG_FLOOR = 1e-40


#: Statistics of the gradient sweeps.
GRADIENT_SWEEP_FIELDS = (
    "jacobian_fro_mean",
    "jacobian_fro_median",
    "jacobian_fro_q10",
    "jacobian_fro_q90",
    "grad_fro_mean",
    "grad_fro_median",
    "grad_fro_q10",
    "grad_fro_q90",
    "dead_fraction",
    "dead_fraction_se",
)


def gradient_sweep(n_keys: int, alpha: float, seed: int) -> pd.DataFrame:
    """Jacobian statistics against d_k for α = 0, ½, 1 and ``alpha``, from two cached calls.

    The fixed exponents and the chosen one are separate :func:`saturation_sweep`
    calls, so moving α recomputes one exponent only (none when α is 0, ½ or 1).

    Returns
    -------
    DataFrame, one row per (alpha, d): ``alpha``, ``d`` and ``GRADIENT_SWEEP_FIELDS``.
    """
    fixed, mine = alpha_sweep(n_keys, alpha, 0.0, seed)
    return pd.concat([fixed, mine], ignore_index=True)[["alpha", "d", *GRADIENT_SWEEP_FIELDS]]


def gradient_sweep_frames(n_keys: int, alpha: float, seed: int) -> dict[str, pd.DataFrame]:
    """:func:`gradient_sweep` as chart frames (labels are added by the page).

    Returns
    -------
    dict with ``"jac"`` (‖J‖_F), ``"grad"`` (‖∂p/∂s‖_F) — columns ``alpha``, ``d``,
    ``value`` (median), ``lo``, ``hi`` (10 % and 90 % quantiles), ``mean``, all at least
    ``GRADIENT_LOG_FLOOR`` for a log axis — and ``"dead"``: ``value`` (share of rows with
    ‖J‖_F < 10⁻³), ``lo``, ``hi`` (±2 s.e., within [0, 1]).
    """
    sw = gradient_sweep(n_keys, alpha, seed)
    out = {}
    for name, stat in (("jac", "jacobian_fro"), ("grad", "grad_fro")):
        cols = {"value": "median", "lo": "q10", "hi": "q90", "mean": "mean"}
        out[name] = sw[["alpha", "d"]].assign(
            **{k: sw[f"{stat}_{v}"].clip(lower=GRADIENT_LOG_FLOOR) for k, v in cols.items()}
        )
    share, se = sw["dead_fraction"], sw["dead_fraction_se"]
    out["dead"] = sw[["alpha", "d"]].assign(
        value=share, lo=(share - 2 * se).clip(0, 1), hi=(share + 2 * se).clip(0, 1)
    )
    return out


#: The statistics of :func:`gradient_at`, in the order of the page's table.
GRADIENT_AT_FIELDS = (
    "jacobian_fro_median",
    "jacobian_fro_mean",
    "grad_fro_median",
    "grad_fro_mean",
    "dead_fraction",
)


@st.cache_data(max_entries=64, show_spinner=False)
def gradient_at(d_k: int, n_keys: int, alpha: float, seed: int) -> dict[str, dict[str, float]]:
    """The gradient statistics at the current d_k, unscaled (α = 0) and at ``alpha``.

    Returns
    -------
    dict: ``unscaled``, ``scaled``, each ``GRADIENT_AT_FIELDS`` -> value (plain numbers:
    a hit copies no frame).
    """
    at = saturation_sweep(n_keys, (0.0, float(alpha)), 0.0, seed, sweep_rows(n_keys), (int(d_k),))
    return {
        which: {field: float(at.iloc[row][field]) for field in GRADIENT_AT_FIELDS}
        for which, row in (("unscaled", 0), ("scaled", -1))
    }


# --- √d_k vs d_k: the sweep, labelled for its charts --------------------------------
#: Values at or below this are not drawn on a log axis (a numerically dead softmax).
SWEEP_LOG_FLOOR = 1e-12


def sqrt_vs_d_sweep(n_keys: int, alpha: float, rho: float, seed: int) -> pd.DataFrame:
    """Every statistic for d_k = 1…4096 and the α's shown: two cached calls.

    The fixed α ∈ {0, ½, 1} and the chosen α are separate cache entries, so moving α
    recomputes one α only. Both draw the same rows (same seed and stream), so a chosen
    α equal to a preset would reproduce its curve exactly.
    """
    return pd.concat(alpha_sweep(n_keys, alpha, rho, seed), ignore_index=True)


def in_range(df: pd.DataFrame, d_lo: int, d_hi: int) -> pd.DataFrame:
    return df[(df["d"] >= d_lo) & (df["d"] <= d_hi)].reset_index(drop=True)


@st.cache_data(max_entries=32, show_spinner=False)
def preset_cells(
    n_keys: int, rho: float, seed: int, d_values: tuple[int, ...]
) -> dict[tuple[float, int], dict[str, float]]:
    """Every statistic of the sweep of α = 0, ½, 1 (:func:`sqrt_vs_d_sweep`) at ``d_values``.

    Returns
    -------
    dict: (α, d_k) -> every statistic of :class:`core.experiments.SaturationStats`
    (plain numbers for the questions and the misconception card: a hit copies no frame).
    """
    fixed = saturation_sweep(n_keys, ALPHA_PRESETS, rho, seed, sweep_rows(n_keys))
    cells = fixed[fixed["d"].isin(d_values)].to_dict("records")
    return {
        (float(c["alpha"]), int(c["d"])): {
            k: float(v) for k, v in c.items() if k not in ("alpha", "d")
        }
        for c in cells
    }


def labelled_sweep(
    df: pd.DataFrame, value: np.ndarray, se: np.ndarray, log: bool, labels: dict[float, str]
) -> pd.DataFrame:
    alphas = df["alpha"].to_numpy()
    out = pd.DataFrame(
        {
            "d": df["d"].to_numpy(),
            "alpha": alphas,
            "series": [labels[a] for a in alphas],
            "color": [alpha_color(a) for a in alphas],
            "value": value,
            "lo": value - 2 * se,
            "hi": value + 2 * se,
        }
    )
    if log:  # a log axis needs positive values; a band reaching 0 is cut at a decade
        keep = out["value"] > SWEEP_LOG_FLOOR
        out = out[keep].assign(lo=np.maximum(out["lo"], out["value"] / 10))
    return out.reset_index(drop=True)


def logit_frame(df: pd.DataFrame, which: str, rho: float, labels: dict[float, str]) -> pd.DataFrame:
    """Measured logit scale with theory, per α: ``which`` is "std" (independent keys'
    spread, theory d_k^(½−α)) or "mean" (relevant key's mean logit, theory ρ d_k^(1−α));
    ``labels``: each α's legend label."""
    stat, se = (
        ("logit_std", "logit_std_se")
        if which == "std"
        else ("relevant_logit_mean", "relevant_logit_se")
    )
    out = labelled_sweep(df, df[stat].to_numpy(), df[se].to_numpy(), True, labels)
    theory = [
        independent_logit_std(int(d), a) if which == "std" else relevant_logit_mean(int(d), a, rho)
        for d, a in zip(out["d"], out["alpha"], strict=True)
    ]
    return out.assign(theory=theory)


# --- which d: the multi-head experiment ----------------------------------------------
#: Tokens per sequence (queries = keys) in the which-d experiments.
WHICH_D_TOKENS = 64


#: Heads computed at most (heads are exchangeable: the first 8 show the spread).
WHICH_D_MAX_HEADS = 8


def divisor_frame(
    raw: np.ndarray,
    divisor_values: dict[str, float],
    factors: dict[str, float],
    theory_sd: dict[str, float],
) -> pd.DataFrame:
    """Per-head statistics of ``raw`` (n_heads, n_q, n_k; divisor 1, fan-in) rescaled per
    init (``factors``) and divided per divisor: one row per (init, divisor, head), with
    ``theory_std`` = theory_sd[init] / divisor."""
    from core.which_d import head_statistics

    combos = [(i, d) for i in factors for d in divisor_values]
    mult = np.array([factors[i] / divisor_values[d] for i, d in combos])
    n_heads = raw.shape[0]
    live = mult != 0  # W_q = 0: every logit is exactly 0, one zero head stands for all
    stats = head_statistics((mult[live, None, None, None] * raw).reshape(-1, *raw.shape[1:]))
    zero = head_statistics(np.zeros((1, *raw.shape[1:])))
    columns = {}
    for key, values in stats.items():
        full = np.empty((len(combos), n_heads))
        full[live] = values.reshape(-1, n_heads)
        full[~live] = zero[key][0]
        columns[key] = full.ravel()
    return pd.DataFrame(
        {
            "init": np.repeat([i for i, _ in combos], n_heads),
            "divisor": np.repeat([d for _, d in combos], n_heads),
            "head": np.tile(np.arange(1, n_heads + 1), len(combos)),
            **columns,
            "theory_std": np.repeat([theory_sd[i] / divisor_values[d] for i, d in combos], n_heads),
        }
    )


@st.cache_data(max_entries=32, show_spinner=False)
def which_d_heads(d_model: int, n_heads: int, seed: int) -> tuple[pd.DataFrame, dict[str, float]]:
    """Multi-head self-attention on random tokens, every init × divisor from one draw.

    x (64, d_model) iid N(0, 1); fan-in projections drawn once for the first
    ``min(n_heads, 8)`` heads of width d_k = d_model / n_heads; std-1 and W_q = 0
    inits are the same draw rescaled (the scores are bilinear in W_q, W_k).

    Returns
    -------
    frame : DataFrame, one row per (init, divisor, head)
        ``init``, ``divisor`` (d_k, d_model, none), ``head``, ``std``, ``entropy``,
        ``max_weight``, ``theory_std`` (√Var(q·k) / divisor: the theory of docs/mathematics.md §7).
    extras : dict
        ``d_k``, ``heads_shown``, ``quarter_gap`` (max |difference| of d_k^-¼ on q and k
        against 1/√d_k on q·kᵀ, head 1, fan-in).
    """
    from core.which_d import (
        DIVISORS_SELF,
        INITS,
        divisor_value,
        init_stds,
        projected_multi_head_logits,
        projected_qk,
        quarter_scaling_gap,
        score_variance,
    )

    d_k = d_model // n_heads
    shown = min(n_heads, WHICH_D_MAX_HEADS)
    rng = rng_for(seed, STREAM_WHICH_D_HEADS)
    x = rng.standard_normal((WHICH_D_TOKENS, d_model))
    raw, _ = projected_multi_head_logits(x, shown, d_k, rng=rng, divisor=1.0)
    fan = d_model**-0.5
    stds = {init: init_stds(init, d_model, d_model) for init in INITS}
    factors = {init: sq * sk / fan**2 for init, (sq, sk) in stds.items()}
    values = {
        name: divisor_value(name, d_k=d_k, d_q=d_model, d_kv=d_model) for name in DIVISORS_SELF
    }
    sd = {init: math.sqrt(score_variance(d_k, d_model, d_model, *s)) for init, s in stds.items()}
    frame = divisor_frame(raw, values, factors, sd)
    q, k = projected_qk(x, d_k, rng=rng)
    extras = {"d_k": d_k, "heads_shown": shown, "quarter_gap": quarter_scaling_gap(q, k)}
    return frame, extras


#: Colour of each divisor, by meaning: blue the right one (√d_k), the others distinct.
DIVISOR_COLORS = {
    "d_k": COLORS["sqrt"],
    "d_model": COLORS["sky"],
    "d_q": COLORS["sky"],
    "d_kv": COLORS["custom"],
    "none": COLORS["unscaled"],
}


def divisor_frames(
    frame: pd.DataFrame, init: str, selected: str, labels: dict[str, str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Bars (mean over heads, theory, highlight) and per-head points for one init.

    Parameters
    ----------
    frame : DataFrame
        From :func:`which_d_heads` or :func:`which_d_cross`.
    init : str
        The initialisation shown.
    selected : str
        The divisor to highlight.
    labels : dict
        Divisor name -> axis label, in display order.

    Returns
    -------
    bars : DataFrame with ``rank`` (0, 1, …: the display order), ``label``, ``color``,
        ``selected``, ``std``, ``entropy``,
        ``max_weight``, ``theory_std``; as the charts draw them, ``opacity`` and
        ``outline`` (the highlighted bar opaque, with an outline) and ``top_std``,
        ``top_entropy``: the highest of the bar, its heads' dots and (std) its theory
        tick, where a bar's value is printed.
    points : DataFrame, one row per head and divisor: ``label``, ``head``, ``std``,
        ``entropy``, and the bar and tick the head belongs to: ``mean_std``,
        ``mean_entropy`` (mean over heads), ``theory_std`` and ``rank`` (the bar's place
        from the left). The charts' CSV download.
    """
    sub = frame[frame["init"].to_numpy() == init]
    names = sub["divisor"].to_numpy()
    columns = ("std", "entropy", "max_weight", "theory_std")
    values = {c: sub[c].to_numpy() for c in columns}
    masks = [names == name for name in labels]
    means = {c: np.array([values[c][m].mean() for m in masks]) for c in columns}
    chosen = np.array([name == selected for name in labels])
    highest = {c: np.array([values[c][m].max() for m in masks]) for c in ("std", "entropy")}
    bars = pd.DataFrame(
        {
            "rank": np.arange(len(labels)),
            "divisor": list(labels),
            "label": list(labels.values()),
            "color": [DIVISOR_COLORS[name] for name in labels],
            "selected": chosen,
            **means,
            "opacity": np.where(chosen, 1.0, 0.45),
            "outline": np.where(chosen, 2.5, 0.0),
            "top_std": np.fmax.reduce([means["std"], highest["std"], means["theory_std"]]),
            "top_entropy": np.fmax(means["entropy"], highest["entropy"]),
        }
    )
    bar = np.zeros(len(names), dtype=int)  # the bar of each point
    for i, mask in enumerate(masks):
        bar[mask] = i
    points = pd.DataFrame(
        {
            "label": [labels[name] for name in names],
            "head": sub["head"].to_numpy(),
            "std": values["std"],
            "entropy": values["entropy"],
            "mean_std": means["std"][bar],
            "mean_entropy": means["entropy"][bar],
            "theory_std": means["theory_std"][bar],
            "rank": bar,
        }
    )
    return bars, points


def divisor_means(
    frame: pd.DataFrame, init: str, columns: tuple[str, ...] = ("std", "entropy")
) -> dict[str, dict[str, float]]:
    """Mean over heads of each of ``columns`` per divisor, for the projections of
    ``init``: ``{divisor: {column: …}}``, divisors in the frame's order."""
    rows = frame["init"].to_numpy() == init
    names = frame["divisor"].to_numpy()[rows]
    stats = {c: frame[c].to_numpy()[rows] for c in columns}
    return {
        name: {c: float(v[names == name].mean()) for c, v in stats.items()}
        for name in dict.fromkeys(names)
    }


@st.cache_data(max_entries=32, show_spinner=False)
def head_means(d_model: int, n_heads: int, seed: int, init: str) -> dict[str, dict[str, float]]:
    """:func:`divisor_means` of :func:`which_d_heads` (``std``, ``entropy``,
    ``max_weight``): the bars of the multi-head charts as numbers."""
    frame, _ = which_d_heads(d_model, n_heads, seed)
    return divisor_means(frame, init, ("std", "entropy", "max_weight"))
