"""Each story page's answering chart, described in full: the chart its page draws where it
answers the page's question, and that the recap draws in small at the same settings.

An :class:`Answer` holds what :func:`ui.common.workshop.chart` takes: the chart's key (its
catalog table), its builder, the deferred call that makes its frame, the builder's
options, the d_k it marks and the values of its words. The pages at initialisation draw
their answer from here (``answers.variance(...).draw()``); so does the recap, through
its small-chart drawing, which is how both show the same data.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

from core import experiments, scaling
from core import variance as variance_core
from core.which_d import DIVISORS_SELF, divisor_value
from ui.common import workshop
from ui.common.controls import ALPHA_PRESETS, alpha_label
from ui.common.i18n import t
from ui.story import charts, data, frames


@dataclass(frozen=True)
class Answer:
    """One chart as :func:`ui.common.workshop.chart` draws it: ``key`` (its catalog table
    and, dots as underscores, its element key), ``builder``, ``frame`` (a deferred call of
    a module-level function with plain arguments), ``options`` (the builder's), ``marker``
    (the d_k marked, or None), ``values`` (the placeholders of its words) and ``source``
    (the core functions shown under it on its page)."""

    key: str
    builder: Callable
    frame: partial
    options: dict = field(default_factory=dict)
    marker: float | None = None
    values: dict = field(default_factory=dict)
    source: Callable | Sequence[Callable] | None = None

    def draw(self) -> None:
        """Draw the chart on its page, with its CSV and its code."""
        workshop.chart(
            self.key,
            self.builder,
            self.frame,
            marker=self.marker,
            source=self.source,
            options=self.options,
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
        options=DIVISOR_CHARTS[value],
        values={"d_model": d_model, "n_heads": n_heads, "d_k": d_k, "n": data.WHICH_D_TOKENS},
        source=source,
    )  # fmt: skip
