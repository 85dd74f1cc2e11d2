"""Chart-ready frames for the saturation page: cached results + translated labels.

Pure pandas on the small frames of :mod:`ui.saturation.data`; the only Streamlit dependency is
the current language (through :func:`ui.common.i18n.t` and
:func:`ui.common.controls.alpha_label`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.softmax import softmax
from ui.common.charts import COLORS, alpha_color
from ui.common.controls import alpha_label
from ui.common.i18n import t


def reference_frame(lines: list[tuple[float, str]]) -> pd.DataFrame:
    """Horizontal reference lines (y, label) for :func:`ui.common.charts.sweep_lines`."""
    return pd.DataFrame(lines, columns=["y", "label"])


def _labels(alphas: pd.Series) -> dict[float, str]:
    """Legend labels: named presets, "α = …" for any other exponent (kept short)."""
    return {a: alpha_label(a) for a in alphas.unique()}


def score_tips() -> dict[str, str]:
    """Tooltip titles of a score and a logit (:func:`ui.saturation.charts.weight_bars`)."""
    return {"score": t("saturation.tip_score"), "logit": t("saturation.tip_logit")}


def sweep_tips() -> dict[str, str]:
    """Tooltip titles of :func:`ui.common.charts.sweep_lines` with bands of ±2 s.e."""
    return {
        "series": t("common.tip_scaling"),
        "lo": t("common.tip_se_lo"),
        "hi": t("common.tip_se_hi"),
        "reference": t("common.tip_reference"),
    }


def two_scores(score_1: float, score_2: float, divisor: float) -> tuple[np.ndarray, np.ndarray]:
    """softmax([s₁, s₂]) and softmax([s₁, s₂] / c)."""
    z = np.array([score_1, score_2], dtype=float)
    return softmax(z), softmax(z / divisor)


def two_score_frame(
    raw: np.ndarray, divided: np.ndarray, labels: tuple[str, str], key_labels: tuple[str, str]
) -> pd.DataFrame:
    """Rows (key, version, color, weight) for :func:`ui.saturation.charts.two_score_bars`."""
    rows = []
    for label, color, p in (
        (labels[0], COLORS["unscaled"], raw),
        (labels[1], COLORS["sqrt"], divided),
    ):
        rows += [
            {"key": key_labels[i], "version": label, "color": color, "weight": float(p[i])}
            for i in range(2)
        ]
    return pd.DataFrame(rows)


def series_labels(alphas: tuple[float, ...]) -> tuple[tuple[float, str], ...]:
    """(α, legend label) pairs in the current language, e.g. ((0.0, "none (α = 0)"), …)."""
    return tuple((float(a), alpha_label(a)) for a in dict.fromkeys(alphas))


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
    labels = _labels(df["alpha"]) if labels is None else labels
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


def overflow_frame(fixed: pd.DataFrame, chosen: pd.DataFrame | None) -> pd.DataFrame:
    """Tidy (d, series, color, dtype, rate, lo, hi) for :func:`ui.saturation.charts.overflow_lines`."""
    df = fixed if chosen is None else pd.concat([fixed, chosen], ignore_index=True)
    labels = _labels(df["alpha"])
    return pd.DataFrame(
        {
            "d": df["d"],
            "series": df["alpha"].map(labels),
            "color": df["alpha"].map(alpha_color),
            "dtype": df["dtype"],
            "rate": df["rate"],
            "lo": (df["rate"] - 2 * df["se"]).clip(lower=0.0),
            "hi": (df["rate"] + 2 * df["se"]).clip(upper=1.0),
        }
    )


def half_crossing(df: pd.DataFrame, alpha: float, dtype: str) -> float | None:
    """d_k at which the overflow share first reaches ½ (log-linear interpolation), or None."""
    sel = df[(df["alpha"] == alpha) & (df["dtype"] == dtype)].sort_values("d")
    d, rate = sel["d"].to_numpy(float), sel["rate"].to_numpy(float)
    above = np.flatnonzero(rate >= 0.5)
    if above.size == 0:
        return None
    i = int(above[0])
    if i == 0:
        return float(d[0])
    frac = (0.5 - rate[i - 1]) / (rate[i] - rate[i - 1])
    return float(2 ** (np.log2(d[i - 1]) + frac * (np.log2(d[i]) - np.log2(d[i - 1]))))


def rowmax_frames(
    hist: pd.DataFrame, summary: dict[bool, dict[str, float]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Histogram and rule frames for :func:`ui.saturation.charts.rowmax_histogram`."""
    names = {False: t("saturation.series_unscaled"), True: t("saturation.series_scaled")}
    colors = {False: COLORS["unscaled"], True: COLORS["sqrt"]}
    bars = hist.assign(series=hist["scaled"].map(names), color=hist["scaled"].map(colors))
    marks = pd.DataFrame(
        [
            {
                "series": names[scaled],
                "color": colors[scaled],
                "kind": t(f"saturation.mark_{kind}"),
                "value": summary[scaled][field],
            }
            for kind, field in (("mean", "mean"), ("tensor_max", "tensor_max_median"))
            for scaled in (False, True)
        ]
    )
    return bars.drop(columns="scaled"), marks


def fmt_weight(x: float) -> str:
    """A weight in [0, 1] to 4 decimals, or as 1 − ε when it would round to 1.0000."""
    gap = 1.0 - x
    return f"1 − {gap:.1e}" if 0 < gap < 5e-5 else f"{x:.4f}"


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def fmt_chance(p: float) -> str:
    """A small probability as 7.0·10⁻²⁸ (0 as 0; 10⁻³ and above as a plain number)."""
    if p == 0 or p >= 1e-3:
        return f"{p:.3g}"
    mantissa, exponent = f"{p:.1e}".split("e")
    return f"{mantissa}·10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def fmt_chance_se(p: float, se: float) -> str:
    """A small probability with its standard error on one power of ten: (3.6 ± 0.1)·10⁻⁴."""
    exponent = int(np.floor(np.log10(p)))
    scale = 10.0**exponent
    return f"({p / scale:.2f} ± {se / scale:.2f})·10{str(exponent).translate(_SUPERSCRIPT)}"


def rowmax_table(summary: dict[bool, dict[str, float]]) -> pd.DataFrame:
    """The row-max summary as a small table: one column per scaling, one row per statistic."""
    rows = ("mean", "median", "q10", "q90", "high_share", "tensor_max_median", "tensor_high_share")
    shares = {"high_share", "tensor_high_share"}
    data = {
        t(f"saturation.series_{'scaled' if scaled else 'unscaled'}"): [
            f"{100 * s[r]:.1f}%" if r in shares else fmt_weight(s[r]) for r in rows
        ]
        for scaled, s in summary.items()
    }
    return pd.DataFrame(data, index=[t(f"saturation.stat_{r}") for r in rows])


# --- workshop mode: predict-first answers -------------------------------------------------
#: Lower edges (above the uniform value 1/n) of the answer ranges for a largest weight.
WEIGHT_EDGES = (0.99, 0.9, 0.5)


def weight_bins(n_keys: int) -> list[tuple[float, float]]:
    """Answer ranges [lo, hi) for "how large is the largest weight?", highest first.

    The ranges cover [1/n_keys, 1]: ≥ 0.99, 0.9–0.99, 0.5–0.9 and 1/n_keys–0.5 (an
    edge at or below 1/n_keys is dropped: with 2 keys the lowest range is 0.5–0.9).
    """
    if n_keys < 2:
        raise ValueError(f"n_keys must be >= 2, got {n_keys}")
    uniform = 1.0 / n_keys
    edges = [1.0, *(e for e in WEIGHT_EDGES if e > uniform), uniform]
    return list(zip(edges[1:], edges[:-1], strict=True))


def bin_index(x: float, bins: list[tuple[float, float]]) -> int:
    """Index of the range of :func:`weight_bins` holding x (the lowest if x < every edge)."""
    return next((i for i, (lo, _) in enumerate(bins) if x >= lo), len(bins) - 1)


def weight_options(n_keys: int) -> list[str]:
    """The ranges of :func:`weight_bins` as answer options in the current language."""
    bins = weight_bins(n_keys)
    options = []
    for i, (lo, hi) in enumerate(bins):
        if i == 0:
            options.append(t("saturation_workshop.opt_top", lo=f"{lo:g}"))
        elif i == len(bins) - 1:
            options.append(t("saturation_workshop.opt_low", lo=f"{lo:.3g}", hi=f"{hi:g}", n=n_keys))
        else:
            options.append(f"{lo:g} – {hi:g}")
    return options


def sweep_at(df: pd.DataFrame, alpha: float, d: int, field: str) -> float:
    """One cell of a :func:`ui.common.data.saturation_sweep` frame: ``field`` at (alpha, d)."""
    sel = df[np.isclose(df["alpha"], alpha) & (df["d"] == d)]
    if len(sel) != 1:
        raise ValueError(f"no single sweep cell at alpha={alpha}, d={d}")
    return float(sel[field].iloc[0])
