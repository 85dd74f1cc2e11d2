"""The frames of the story's answering charts, from plain values (the deferred ``frame`` of
:func:`ui.common.workshop.chart`): each reads the cached data of :mod:`ui.story.data` (or,
for the trained models, of their modules) and labels it with the words it is given, never
with the current language, since the chart's cache key holds them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ui.common.charts import alpha_color
from ui.common.controls import alpha_label
from ui.common.data import alpha_sweep
from ui.story import data, language_model, real_models
from ui.story import lr_sweep as sweeps


# --- variance -----------------------------------------------------------------------------
def scaled_sweep(
    dist: str, seed: int, sigma_q: float, sigma_k: float, series: tuple[str, str]
) -> pd.DataFrame:
    """:func:`ui.story.data.variance_sweep` at σ_q, σ_k: 26 rows of d, var, lo, hi, theory (each times
    σ_q²σ_k²) and ``series``, the legend label of the unscaled and the scaled rows."""
    c2v = (sigma_q * sigma_k) ** 2
    sweep = data.variance_sweep(dist, seed)
    return sweep.assign(
        var=sweep["var"] * c2v,
        lo=sweep.lo * c2v,
        hi=sweep.hi * c2v,
        theory=sweep.theory * c2v,
        series=sweep.scaled.map(dict(zip((False, True), series, strict=True))),
    ).drop(columns="scaled")


# --- saturation ---------------------------------------------------------------------------
def saturation_lines(
    stat: str,
    n_keys: int,
    alpha: float,
    seed: int,
    labels: tuple[tuple[float, str], ...],
    reference: tuple[tuple[float, str], ...],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Mean ``stat`` against d_k for α = 0, ½, 1 and ``alpha`` (:func:`sweep_frame`) and
    its horizontal ``reference`` lines ((y, label), …) as a frame."""
    fixed, mine = alpha_sweep(n_keys, alpha, 0.0, seed)
    return sweep_frame(fixed, mine, stat, dict(labels)), reference_frame(list(reference))


def reference_frame(lines: list[tuple[float, str]]) -> pd.DataFrame:
    """Horizontal reference lines (y, label) for :func:`ui.common.charts.sweep_lines`."""
    return pd.DataFrame(lines, columns=["y", "label"])


def alpha_labels(alphas: pd.Series) -> dict[float, str]:
    """Legend labels: named presets, "α = …" for any other exponent (kept short)."""
    return {a: alpha_label(a) for a in alphas.unique()}


def sweep_frame(
    fixed: pd.DataFrame,
    chosen: pd.DataFrame | None,
    stat: str,
    labels: dict[float, str] | None = None,
) -> pd.DataFrame:
    """Tidy (d, series, color, value, lo, hi = value ± 2 s.e.) for :func:`ui.common.charts.sweep_lines`.

    ``fixed`` holds α = 0, ½, 1; ``chosen`` the user's α (None when it is drawn already).
    ``stat`` is a :class:`core.experiments.SaturationStats` mean field with a ``_se``
    partner, e.g. ``"max_weight"`` or ``"entropy"``. ``labels`` maps each α to its
    legend label (default: :func:`ui.common.controls.alpha_label` in the current language).
    """
    df = fixed if chosen is None else pd.concat([fixed, chosen], ignore_index=True)
    mean, se = df[f"{stat}_mean"], df[f"{stat}_se"]
    labels = alpha_labels(df["alpha"]) if labels is None else labels
    return pd.DataFrame(
        {
            "d": df["d"],
            "series": df["alpha"].map(labels),
            "color": df["alpha"].map(alpha_color),
            "value": mean,
            "lo": mean - 2 * se,
            "hi": mean + 2 * se,
        }
    )


# --- gradients ----------------------------------------------------------------------------
def gradient_lines(
    name: str, n_keys: int, alpha: float, seed: int, labels: tuple[tuple[float, str], ...]
) -> pd.DataFrame:
    """One gradient sweep against d_k (:func:`ui.story.data.gradient_sweep_frames`:
    ``name`` is "jac", "grad" or "dead") with each exponent's ``series`` label and
    ``color``; ``labels``: (α, legend label) pairs."""
    df = data.gradient_sweep_frames(n_keys, alpha, seed)[name]
    names = dict(labels)
    return df.assign(series=df.alpha.map(names), color=df.alpha.map(alpha_color))


# --- √d_k vs d_k ----------------------------------------------------------------------------
def sweep_in_range(
    n_keys: int, alpha: float, rho: float, seed: int, d_lo: int, d_hi: int
) -> pd.DataFrame:
    return data.in_range(data.sqrt_vs_d_sweep(n_keys, alpha, rho, seed), d_lo, d_hi)


def logit(
    which: str,
    n_keys: int,
    alpha: float,
    rho: float,
    seed: int,
    d_lo: int,
    d_hi: int,
    labels: tuple[tuple[float, str], ...],
) -> pd.DataFrame:
    """The logit scale against d_k with its theory (:func:`ui.story.data.logit_frame`):
    ``which`` is "std" or "mean"."""
    sweep = sweep_in_range(n_keys, alpha, rho, seed, d_lo, d_hi)
    return data.logit_frame(sweep, which, rho, dict(labels))


# --- which d ------------------------------------------------------------------------------
def head_divisors(
    d_model: int,
    n_heads: int,
    seed: int,
    init: str,
    selected: str,
    labels: tuple[tuple[str, str], ...],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The multi-head charts' (points, bars): :func:`ui.story.data.divisor_frames` of
    :func:`ui.story.data.which_d_heads`; ``labels``: (divisor, axis label) pairs in display order."""
    frame, _ = data.which_d_heads(d_model, n_heads, seed)
    bars, points = data.divisor_frames(frame, init, selected, dict(labels))
    return points, bars


# --- the training lab ---------------------------------------------------------------------
#: (variant, legend text) pairs.
Labels = tuple[tuple[str, str], ...]


def lr_sweep(
    m: int,
    optimizer: str,
    d_k: int,
    seed: int,
    steps: int,
    variants: tuple[str, ...],
    labels: Labels,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The sweep at one d_k (:func:`lr_panel`, without its colours: the chart's legend
    holds them) and ℓ₀ of each variant (``series``, ``y``: the median over the seeds), as
    :func:`ui.story.trained_charts.lr_lines` draws them."""
    summary = lr_panel(m, optimizer, d_k, seed, steps, variants, labels)
    initial = summary.groupby("variant", sort=False)["initial_loss"].first().reset_index()
    initial = sweeps.labelled(initial, dict(labels)).rename(columns={"initial_loss": "y"})
    return summary.drop(columns="color"), initial[["series", "y"]]


def lr_panel(
    m: int,
    optimizer: str,
    d_k: int,
    seed: int,
    steps: int,
    variants: tuple[str, ...],
    labels: Labels,
) -> pd.DataFrame:
    """The sweep at one d_k, labelled: per (variant, rate) the final loss over the seeds
    (:func:`ui.story.lr_sweep.sweep_summary`), ``series``, ``color``."""
    return sweeps.labelled(sweeps.sweep_at(m, optimizer, d_k, seed, steps, variants), dict(labels))


# --- the language model ---------------------------------------------------------------------
def loss_against_rate(d_h: int, labels: tuple[tuple[str, str], ...]) -> pd.DataFrame:
    """Final held-out loss against the learning rate for every variant at ``d_h``.

    Returns
    -------
    DataFrame, one row per (variant, rate): ``series``, ``color``, ``lr``, ``value`` (seed
    mean of min(ℓ, ℓ₀), nats/character), ``lo``, ``hi`` (lowest and highest seed),
    ``best`` (the variant's best rate), ``sensitivity`` (the variant's LR sensitivity).
    """
    rates = np.asarray(language_model.sweep().lrs)
    frames = []
    for v, label in labels:
        cell = language_model.cells()[v, d_h]
        frames.append(
            pd.DataFrame(
                {
                    "series": label,
                    "color": language_model.VARIANT_COLORS[v],
                    "lr": rates,
                    "value": cell.loss,
                    "lo": cell.lo,
                    "hi": cell.hi,
                    "best": np.arange(len(rates)) == cell.best,
                    "sensitivity": cell.sensitivity,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


# --- the real model -------------------------------------------------------------------------
def layers() -> pd.DataFrame:
    """Section 3's statistics per (divisor, layer) (:func:`ui.story.real_models.layer_frame`)."""
    return real_models.layer_frame()
