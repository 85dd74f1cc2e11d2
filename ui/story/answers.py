"""Each story page's answering chart, described in full: the chart its page draws where it
answers the page's question, and that the recap draws in small at the same settings.

An :class:`Answer` holds what :func:`ui.common.workshop.chart` takes: the chart's key (its
catalog table), its builder, the deferred call that makes its frame, the builder's
options, the d_k it marks and the values of its words. The pages at initialisation draw
their answer from here (``answers.variance(...).draw()``); so does the recap, in small,
which is how both show the same data. So does the training lab (:func:`training_sweep`).
The language model's and the real models' pages still wire their chart themselves, from
the same frames and builders; :func:`language_model_loss` and :func:`real_model_entropy`
describe it as they draw it, for the recap (the words of its title and alt text, which the
recap replaces by its own, are not filled in).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

from core import experiments, scaling
from core import variance as variance_core
from core.real_models import DIVISORS as REAL_DIVISORS
from core.real_models import divisor_value as real_divisor_value
from core.training import LR_GRIDS, final_loss, lr_sensitivity
from core.which_d import DIVISORS_SELF, divisor_value
from ui.common import workshop
from ui.common.controls import ALPHA_PRESETS, alpha_label
from ui.common.i18n import t
from ui.common.pages import lr_text
from ui.story import charts, data, frames, language_model, lr_sweep, real_models, trained_charts


@dataclass(frozen=True)
class Answer:
    """One chart as :func:`ui.common.workshop.chart` draws it: ``key`` (its catalog table
    and, dots as underscores, its element key), ``builder``, ``frame`` (a deferred call of
    a module-level function with plain arguments), ``options`` (the builder's), ``marker``
    (the d_k marked, or None), ``values`` (the placeholders of its words), ``source`` (the
    core functions shown under it on its page), ``table`` (the catalog table of its
    words when several charts share one) and ``swap_data`` (its spec does not depend on
    its frame's values: :func:`ui.common.specs.drawn`)."""

    key: str
    builder: Callable
    frame: partial
    options: dict = field(default_factory=dict)
    marker: float | None = None
    values: dict = field(default_factory=dict)
    source: Callable | Sequence[Callable] | None = None
    table: str | None = None
    swap_data: bool = False

    @property
    def words(self) -> str:
        """The catalog table of the chart's words (its own key unless it shares one)."""
        return self.table or self.key

    def draw(self) -> None:
        """Draw the chart on its page, with its CSV and its code."""
        workshop.chart(
            self.key,
            self.builder,
            self.frame,
            marker=self.marker,
            source=self.source,
            options=self.options,
            table=self.table,
            swap_data=self.swap_data,
            **self.values,
        )


def alpha_series(alpha: float) -> tuple[tuple[float, str], ...]:
    """(α, legend label) of α = 0, ½, 1 and ``alpha`` (once if it is one of them), in the
    current language."""
    return tuple({a: alpha_label(a) for a in (*ALPHA_PRESETS, float(alpha))}.items())


# --- the steps at initialisation -----------------------------------------------------------
def variance(d_k: int, dist: str, sigma_q: float, sigma_k: float, seed: int) -> Answer:
    """Var(q·k) and Var(q·k/√d_k) against d_k, log–log, with theory; ``d_k`` marked."""
    series = (t("variance.sweep.series_raw"), t("variance.sweep.series_scaled"))
    return Answer(
        "variance.sweep",
        charts.variance_sweep,
        partial(frames.scaled_sweep, dist, seed, sigma_q, sigma_k, series),
        marker=d_k,
        source=variance_core.variance_sweep,
    )


#: Core functions behind the saturation sweeps (shown under the first).
SATURATION_SOURCE = (experiments.saturation_sweep, experiments.row_quantities)


def saturation(stat: str, d_k: int, n_keys: int, alpha: float, seed: int) -> Answer:
    """The mean of ``stat`` ("max_weight", the answer, or "entropy") against d_k for
    α = 0, ½, 1 and ``alpha``, with its reference line (uniform attention)."""
    ln_n = math.log(n_keys)
    y, label, top = {
        "max_weight": (1 / n_keys, t("saturation.ref_uniform_max", n=n_keys), 1.0),
        "entropy": (ln_n, t("saturation.ref_ln_n", n=n_keys), 1.05 * ln_n),
    }[stat]
    return Answer(
        f"saturation.sweep_{stat}",
        charts.saturation_sweep_lines,
        partial(frames.saturation_lines, stat, n_keys, alpha, seed, alpha_series(alpha),
                ((y, label),)),
        options={"y_domain": (0.0, top)},
        marker=d_k,
        values={"n": n_keys},
        source=SATURATION_SOURCE if stat == "max_weight" else None,
    )  # fmt: skip


def gradients_dead(d_k: int, n_keys: int, alpha: float, seed: int) -> Answer:
    """The share of dead rows (‖J‖_F < 10⁻³) against d_k for α = 0, ½, 1 and ``alpha``."""
    return Answer(
        "gradients.dead",
        charts.dead_share_lines,
        partial(frames.gradient_lines, "dead", n_keys, alpha, seed, alpha_series(alpha)),
        marker=d_k,
        source=[experiments.saturation_sweep, experiments.summarise],
    )


#: The theory of each logit-scale chart (its code shown under the chart, with the sweep's).
LOGIT_THEORY = {"std": scaling.independent_logit_std, "mean": scaling.relevant_logit_mean}


def logit_scale(
    which: str, d_k: int, n_keys: int, alpha: float, rho: float, seed: int, d_lo: int, d_hi: int
) -> Answer:
    """The independent keys' logit std (``which`` "std", the answer) or the relevant key's
    mean logit ("mean") against d_k from ``d_lo`` to ``d_hi``, per α, with theory."""
    return Answer(
        f"sqrt_vs_d.{which}",
        charts.logit_scale,
        partial(frames.logit, which, n_keys, alpha, rho, seed, d_lo, d_hi, alpha_series(alpha)),
        marker=d_k,
        values={"rho": f"{rho:g}"},
        source=[experiments.saturation_sweep, LOGIT_THEORY[which]],
    )


def divisor_labels(prefix: str, names, *, d_k: int, d_q: int, d_kv: int) -> dict[str, str]:
    """Axis label of each divisor with its value, e.g. ``÷√d_k = ÷8`` (``which_d.<prefix>_
    <name>`` in the catalogs)."""
    return {
        name: t(
            f"which_d.{prefix}_{name}",
            r=f"{divisor_value(name, d_k=d_k, d_q=d_q, d_kv=d_kv):.3g}",
        )
        for name in names
    }


#: The two bar charts of a "Which d?" experiment: the logit std with the theory's ticks and
#: the bars' values, the entropy with uniform attention's ln n as a dashed line.
DIVISOR_CHARTS = {
    "std": {"value": "std"},
    "entropy": {
        "value": "entropy", "theory": False, "value_labels": False,
        "reference_y": math.log(data.WHICH_D_TOKENS),
    },
}  # fmt: skip


def divisor_options(value: str, w_init: str) -> dict[str, object]:
    """The options of a divisor chart of ``value`` (:data:`DIVISOR_CHARTS`) for projections
    initialised by ``w_init``: with W_q = 0 (``zero_q``) every logit is 0, and the logit
    std's y-axis runs from 0 to 1 (``unit_y``)."""
    return {**DIVISOR_CHARTS[value], "unit_y": value == "std" and w_init == "zero_q"}


def which_d_heads(
    value: str,
    d_model: int,
    n_heads: int,
    divisor: str,
    w_init: str,
    seed: int,
    source: Sequence[Callable] | None = None,
) -> Answer:
    """Multi-head self-attention: each divisor's per-head ``value`` ("std", the answer, or
    "entropy") as bars, each head a dot; ``divisor`` highlighted."""
    d_k = d_model // n_heads
    labels = divisor_labels("div", DIVISORS_SELF, d_k=d_k, d_q=d_model, d_kv=d_model)
    return Answer(
        f"which_d.mh_{value}",
        charts.divisor_bars,
        partial(frames.head_divisors, d_model, n_heads, seed, w_init, divisor,
                tuple(labels.items())),
        options=divisor_options(value, w_init),
        values={"n_heads": n_heads, "n": data.WHICH_D_TOKENS},
        source=source,
        swap_data=True,
    )  # fmt: skip


# --- the trained models ----------------------------------------------------------------------
def training_sweep(
    m: int, d_k: int, optimizer: str, lr: float, steps: int, variants: tuple[str, ...], seed: int
) -> Answer:
    """The training lab's final loss against the learning rate at ``d_k`` (median of the
    sweep's seeds, a min–max band, each scaling's initial loss dashed, uniform attention
    grey, the learner's ``lr`` marked), as its page draws it (its sweep section). Its
    words name no d_k and its loss axis spans every shipped d_k
    (:func:`ui.story.lr_sweep.sweep_domain`): one spec serves each shipped d_k, and a new
    one moves the lines only."""
    grid = LR_GRIDS[optimizer]
    labels = lr_sweep.variant_labels(variants)
    return Answer(
        "training.lr",
        trained_charts.lr_lines,
        partial(frames.lr_sweep, m, optimizer, d_k, seed, steps, variants, labels),
        options={**lr_sweep.lines_options(optimizer, labels),
                 "y_domain": lr_sweep.sweep_domain(m, optimizer, d_k, seed, steps, variants),
                 "current_lr": lr if grid[0] <= lr <= grid[-1] else None,
                 "uniform": lr_sweep.uniform(m)},
        values={"m": m, "opt": t(f"training.opt_{optimizer}"), "last": lr_sweep.LAST,
                "n": lr_sweep.SWEEP_SEEDS, "uniform": f"{lr_sweep.uniform(m):.3g}"},
        source=[lr_sweep.sweep_cell, final_loss, lr_sensitivity],
        swap_data=True,
    )  # fmt: skip


def language_model_loss(d_h: int, rate: float) -> Answer:
    """The language model's final held-out loss against the learning rate at head size
    ``d_h``, each variant a line with its seeds' band and its best rate, the unigram loss
    dashed and the learner's ``rate`` marked, as its page draws it (its loss-against-rate
    section)."""
    s = language_model.sweep()
    unigram = s.meta["unigram_val_loss"]
    labels = tuple((v, t(f"language_model.variant_{v}")) for v in language_model.VARIANTS)
    return Answer(
        f"language_model.loss_lr_{d_h}",
        trained_charts.loss_against_rate,
        partial(frames.loss_against_rate, d_h, labels),
        options={"reference": unigram, "y_domain": language_model.loss_domain(),
                 "rates": (s.lrs[0], s.lrs[-1]), "current_lr": rate},
        values={"d_h": d_h, "unigram": f"{unigram:.3f}", "lo": lr_text(s.lrs[0]),
                "hi": lr_text(s.lrs[-1]), "rate": lr_text(rate)},
        table="language_model.loss_lr",
    )  # fmt: skip


def real_model_entropy() -> Answer:
    """The trained model's mean attention entropy per layer with its logits divided by 1,
    by √d_k as trained and by d_k, uniform attention's mean ln T dashed, as its page draws
    it (its counterfactual section)."""
    c = real_models.corpus()
    labels = tuple(
        (name, t(f"real_models.div_{name}", c=f"{real_divisor_value(name, c.d_k):.3g}"))
        for name in REAL_DIVISORS
    )
    return Answer(
        "real_models.cf_entropy",
        trained_charts.divisor_layer_bars,
        partial(frames.layers),
        options={"value": "entropy", "labels": labels, "fmt": ".3f", "axis_format": "~g",
                 "reference": c.mean_log_tokens},
        values={"layers": c.n_layers, "heads": c.n_heads, "cells": c.n_layers * c.n_heads,
                "d_k": c.d_k, "n": len(c.sentences), "log_t": f"{c.mean_log_tokens:.2f}"},
    )  # fmt: skip
