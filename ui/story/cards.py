"""The story's prediction cards that the recap asks again: each card's question, options,
right answer and explanation, made from the live measurement (the keyword arguments of
:func:`ui.common.workshop.predict`). Its page and the recap's self-check ask the same card
through the same function, so both grade a guess alike.
"""

from __future__ import annotations

import math

import numpy as np

from core.scaling import linear_scaling_weight_limit
from ui.common.controls import alpha_label
from ui.common.data import sweep_rows
from ui.common.i18n import t
from ui.story import data

# --- saturation: the mean largest weight at the largest d_k --------------------------------
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


def weight_index(x: float, bins: list[tuple[float, float]]) -> int:
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


def saturation_mean_max(n_keys: int, seed: int) -> dict:
    """Unscaled, at the sweep's largest d_k: what is a row's largest weight, on average?
    Graded by the range of :func:`weight_bins` holding the measured mean."""
    far = data.sweep_far_end(n_keys, seed)
    d_top = far["d"]
    return {
        "key": "saturation_mean_max",
        "question": t(
            "saturation_workshop.predict_mean_q",
            rows=f"{sweep_rows(n_keys):,}",
            n=n_keys,
            d=d_top,
            std=f"{math.sqrt(d_top):g}",
        ),
        "options": weight_options(n_keys),
        "answer": weight_index(far["mean_0"], weight_bins(n_keys)),
        "explain": t(
            "saturation_workshop.predict_mean_explain",
            mean=f"{far['mean_0']:.4f}",
            se=f"{far['se_0']:.4f}",
            mean_s=f"{far['mean_half']:.3f}",
        ),
        "about": (n_keys, seed),
    }


# --- gradients: the share of dead rows ---------------------------------------------------
#: Upper edges of the answer bins of the dead-row question (shares of rows).
DEAD_BINS = (0.01, 0.10, 0.50)


def bin_index(value: float, edges: tuple[float, ...]) -> int:
    """Index of the bin holding ``value``: 0 below ``edges[0]``, len(edges) at the top."""
    return sum(value >= e for e in edges)


def gradients_dead_share(d_k: int, n_keys: int, alpha: float, seed: int) -> dict:
    """Unscaled, at the learner's d_k: what share of query rows are dead (‖J‖_F < 10⁻³)?
    Graded on the share as printed (to 0.1 %): 49.96 % reads 50.0 %, "50 % or more"."""
    n_rows = sweep_rows(n_keys)
    now = data.gradient_at(d_k, n_keys, alpha, seed)
    dead = {which: stats["dead_fraction"] for which, stats in now.items()}
    return {
        "key": "gradients_dead_share",
        "question": t("gradients_workshop.dead_q", d_k=d_k, n_keys=n_keys),
        "options": [t(f"gradients_workshop.dead_opt_{i}") for i in range(len(DEAD_BINS) + 1)],
        "answer": bin_index(round(100 * dead["unscaled"], 1) / 100, DEAD_BINS),
        "explain": t(
            "gradients_workshop.dead_explain",
            n_rows=f"{n_rows:,}",
            d_k=d_k,
            share=f"{100 * dead['unscaled']:.1f}",
            label=alpha_label(alpha),
            share_s=f"{100 * dead['scaled']:.1f}",
        ),
        "about": (d_k, n_keys, seed),
    }


# --- √d_k vs d_k: the largest weight with 1/d_k ------------------------------------------
#: The d_k range the questions and the myth card talk about (the sweep's ends).
D_SMALL, D_START, D_LARGE = 1, 16, 4096


#: The d_k at which they read the sweep.
QUOTED_D = (D_SMALL, D_START, D_LARGE)


#: The full sweep's statistics by (α, d_k) (:func:`ui.story.data.preset_cells`).
Cells = dict[tuple[float, int], dict[str, float]]


def value_at(cells: Cells, alpha: float, d: int, stat: str) -> float:
    """One statistic of the full (unfiltered) sweep at exponent ``alpha`` and d_k = ``d``."""
    if (alpha, d) not in cells:
        raise ValueError(f"the sweep has no cell at alpha={alpha}, d={d}")
    return cells[alpha, d][stat]


#: When the d_k = 1 value and the 1/d_k limit are within this fraction of the limit,
#: "stays" and "settles at the limit" are the same answer (few keys and a large ρ): the
#: max-weight question is not asked. Relative, not absolute: with many keys both are
#: small, yet a fall from 0.025 to 0.003 (n_keys = 512, ρ = 0.5) is well worth asking.
MAX_WEIGHT_TIE = 0.25


def max_weight_question(cells: Cells, n_keys: int, rho: float) -> dict:
    """Predict-first question: with 1/d_k, where does the largest weight go from d_k = 1
    to 4096? The answer is the option whose level (1, the d_k = 1 value, the large-d_k
    limit e^ρ/(e^ρ + n_keys − 1), which is 1/n_keys at ρ = 0) lies nearest the measured
    value at d_k = 4096."""
    start = value_at(cells, 1.0, D_SMALL, "max_weight_mean")
    end = value_at(cells, 1.0, D_LARGE, "max_weight_mean")
    half = value_at(cells, 0.5, D_LARGE, "max_weight_mean")
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
        "question": t(
            "sqrt_vs_d_workshop.max_q", n=n_keys, rho=f"{rho:g}", d=D_LARGE, start=f"{start:.2f}"
        ),
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


def sqrt_vs_d_max(n_keys: int, rho: float, seed: int) -> dict:
    """:func:`max_weight_question` of the sweep at these settings."""
    return max_weight_question(data.preset_cells(n_keys, rho, seed, QUOTED_D), n_keys, rho)


# --- which d: one head's logit std under √d_model ----------------------------------------
def std_options(n_heads: int) -> tuple[list[float], list[str]]:
    """Candidate per-head logit stds under ÷√d_model, ascending: 1/n, 1/√n, 1, √n.

    Distinct for every n_heads ≥ 2 (neighbours differ by at least √2).
    """
    r = math.sqrt(n_heads)
    values = [1 / n_heads, 1 / r, 1.0, r]
    labels = [
        f"{values[0]:.3g} (1/{n_heads})",
        f"{values[1]:.3g} (1/√{n_heads})",
        "1",
        f"{values[3]:.3g} (√{n_heads})",
    ]
    return values, labels


def closest_option(values: list[float], measured: float) -> int:
    """Index of the positive value closest to ``measured`` on a log scale."""
    if not measured > 0:
        return 0
    return min(range(len(values)), key=lambda i: abs(math.log(values[i] / measured)))


def which_d_std(
    d_model: int, n_heads: int, seed: int, w_init: str = "fan_in", means: dict | None = None
) -> dict | None:
    """Divide one head's q·k by √d_model instead of √d_k (fan-in projections): what is the
    std of its logits? The answer is the option nearest the measured mean over the heads
    (:func:`ui.story.data.head_means`); with another ``w_init`` the explanation says the
    charts use it. None with one head (d_k = d_model: nothing to ask). ``means``: those
    head means, if the caller has them."""
    if n_heads == 1:
        return None
    d_k = d_model // n_heads
    if means is None:
        means = data.head_means(d_model=d_model, n_heads=n_heads, seed=seed, init="fan_in")
    measured = means["d_model"]["std"]
    values, labels = std_options(n_heads)
    other = ""
    if w_init != "fan_in":
        other = " " + t("which_d_workshop.predict_other_init", init=t(f"which_d.init_{w_init}"))
        if w_init == "zero_q":
            other += " " + t("which_d_workshop.predict_zero_q")
    return {
        "key": "which_d_std",
        "question": t("which_d_workshop.predict_q", d_model=d_model, n_heads=n_heads, d_k=d_k),
        "options": labels,
        "answer": closest_option(values, measured),
        "explain": t(
            "which_d_workshop.predict_explain",
            std=f"{measured:.3g}",
            std_k=f"{means['d_k']['std']:.3g}",
            shown=min(n_heads, data.WHICH_D_MAX_HEADS),
            d_k=d_k,
            n_heads=n_heads,
            r=f"{math.sqrt(n_heads):.3g}",
        )
        + other,
        "about": (d_model, n_heads, round(measured, 6)),
    }
