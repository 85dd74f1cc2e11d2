"""Chart-ready frames for the saturation page: cached results + translated labels.

Pure pandas on the small frames of :mod:`ui.saturation.data`. The functions under "The
charts' frames" make each chart's data from plain values (the deferred ``frame`` of
:func:`ui.common.workshop.chart`): the words a frame holds (legend labels) come in as
arguments, never from the current language, since the chart's cache key holds them. The
rest write the page's text (through :func:`ui.common.i18n.t` and
:func:`ui.common.controls.alpha_label`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from core.softmax import softmax
from ui.common.charts import COLORS, alpha_color
from ui.common.controls import alpha_label
from ui.common.data import is_preset
from ui.common.i18n import t
from ui.common.specs import text_table
from ui.saturation import data
from ui.story.frames import alpha_labels


# --- the charts' frames, from plain values ---------------------------------------------
def playground(versions: tuple[str, str], keys: tuple[str, str]) -> pd.DataFrame:
    """The rows of the two-score bars, whose weights the browser computes
    (:data:`ui.saturation.charts.two_score_weight()`): (key, k, version, divided, color)."""
    colors = (COLORS["unscaled"], COLORS["sqrt"])
    return pd.DataFrame(
        [
            {"key": keys[k - 1], "k": k, "version": versions[d], "divided": d, "color": colors[d]}
            for d in (0, 1)
            for k in (1, 2)
        ]
    )


#: The keys per row the Gaussian-limit chart spans (log-spaced, whole numbers).
GAUSS_KEYS = np.unique(np.round(np.geomspace(2, 4096, 80)).astype(int))


def gaussian_limit(labels: tuple[str, str]) -> pd.DataFrame:
    """The rows of the Gaussian-limit chart, whose chances the browser computes
    (:func:`ui.saturation.charts.gaussian_overflow`): (n, curve, fixed_std) for the
    slider's σ (``labels[0]``, ``fixed_std`` 0) and for σ = 1 (``labels[1]``)."""
    n = np.concatenate([GAUSS_KEYS, GAUSS_KEYS])
    fixed = np.repeat([0.0, 1.0], len(GAUSS_KEYS))
    curve = np.repeat(np.array(labels, dtype=object), len(GAUSS_KEYS))
    return pd.DataFrame({"n": n, "curve": curve, "fixed_std": fixed})


def row_side(d_k: int, n_keys: int, alpha: float, seed: int, scaled: bool) -> pd.DataFrame:
    """One side of the one-row bars (:func:`ui.saturation.data.one_row_sides`)."""
    return data.one_row_sides(d_k, n_keys, alpha, seed)[0][scaled]


def heat_cells(seq_len: int, d_k: int, seed: int, scaled: bool) -> pd.DataFrame:
    """One heatmap of the toy experiment (:func:`ui.saturation.data.classic_heatmap`)."""
    heat = data.classic_heatmap(seq_len, d_k, seed)
    return heat[heat.scaled == scaled].drop(columns="scaled")


def rowmax(
    batch: int, seq_len: int, d_k: int, seed: int, names: tuple[str, str], kinds: tuple[str, str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`rowmax_frames` of the toy experiment's replicates; ``names``: the legend
    labels of unscaled and scaled, ``kinds``: of the mean and the tensor-max rules."""
    hist, summary = data.classic_rowmax(batch, seq_len, d_k, seed)
    return rowmax_frames(hist, summary, names, kinds)


def overflow(
    n_keys: int, alpha: float, seed: int, labels: tuple[tuple[float, str], ...]
) -> pd.DataFrame:
    """The naive-softmax overflow shares of α = 0 and ½ and, if it is neither, ``alpha``
    (:func:`overflow_frame`); ``labels``: (α, legend label) pairs."""
    fixed = data.overflow_sweep(n_keys, (0.0, 0.5), seed)
    mine = None if is_preset(alpha, (0.0, 0.5)) else data.overflow_sweep(n_keys, (alpha,), seed)
    return overflow_frame(fixed, mine, dict(labels))


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


def overflow_frame(
    fixed: pd.DataFrame, chosen: pd.DataFrame | None, labels: dict[float, str] | None = None
) -> pd.DataFrame:
    """Tidy (d, series, color, dtype, rate, lo, hi) for :func:`ui.saturation.charts.overflow_lines`;
    ``labels``: α -> legend label (default :func:`ui.common.controls.alpha_label`)."""
    df = fixed if chosen is None else pd.concat([fixed, chosen], ignore_index=True)
    labels = alpha_labels(df["alpha"]) if labels is None else labels
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


def rowmax_frames(
    hist: pd.DataFrame,
    summary: dict[bool, dict[str, float]],
    names: tuple[str, str],
    kinds: tuple[str, str],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Histogram and rule frames for :func:`ui.saturation.charts.rowmax_histogram`;
    ``names``: the legend labels of unscaled and scaled; ``kinds``: of the rules at the
    mean and at the tensor's largest entry (median)."""
    names = dict(zip((False, True), names, strict=True))
    kind_label = dict(zip(("mean", "tensor_max"), kinds, strict=True))
    colors = {False: COLORS["unscaled"], True: COLORS["sqrt"]}
    bars = hist.assign(series=hist["scaled"].map(names), color=hist["scaled"].map(colors))
    marks = pd.DataFrame(
        [
            {
                "series": names[scaled],
                "color": colors[scaled],
                "kind": kind_label[kind],
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


def rowmax_table(summary: dict[bool, dict[str, float]]) -> pa.Table:
    """The row-max summary as a small table (:func:`ui.common.specs.text_table`): one row
    per statistic, one column per scaling."""
    rows = ("mean", "median", "q10", "q90", "high_share", "tensor_max_median", "tensor_high_share")
    shares = {"high_share", "tensor_high_share"}
    return text_table(
        [
            {
                t("saturation.col_statistic"): t(f"saturation.stat_{r}"),
                **{
                    t(f"saturation.series_{'scaled' if scaled else 'unscaled'}"): (
                        f"{100 * s[r]:.1f}%" if r in shares else fmt_weight(s[r])
                    )
                    for scaled, s in summary.items()
                },
            }
            for r in rows
        ]
    )
