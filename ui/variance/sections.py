"""Sections of the variance page, each drawn by one function.

The page script reads the controls into a :class:`View` and decides which sections are
shown (presenter steps); the samples come from the cached calls of
:mod:`ui.variance.data`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import streamlit as st

from core import variance as variance_core
from core.sampling import dot_products, sample_qk
from core.theory import dot_product_excess_kurtosis, dot_product_variance
from ui.common import controls, fragments, workshop
from ui.common.charts import COLORS
from ui.common.i18n import t
from ui.common.pages import page
from ui.story import answers
from ui.story import data as story_data
from ui.variance import charts, data

#: The histograms' x-axes (``?hist_axes=``): one for both (the default: the unscaled one is
#: visibly wider) or each its own (to compare their shapes).
HIST_AXES = page("variance").param("hist_axes").options


@dataclass(frozen=True)
class View:
    """The page's settings: the width, the sample size, the law of the components."""

    d_k: int
    n_samples: int
    dist: str
    sigma_q: float
    sigma_k: float
    seed: int

    @property
    def c(self) -> float:
        """σ_q σ_k: the spread of one product q_i·k_i, and of q·k/√d_k."""
        return self.sigma_q * self.sigma_k

    @property
    def samples(self) -> tuple[int, int, str, float, float, int]:
        """The arguments of :func:`ui.variance.data.score_histograms` at these settings."""
        return self.d_k, self.n_samples, self.dist, self.sigma_q, self.sigma_k, self.seed

    @property
    def pair(self) -> tuple[int, str, float, float, int]:
        """The arguments of the running sums and the pair's terms at these settings."""
        return self.d_k, self.dist, self.sigma_q, self.sigma_k, self.seed


# --- 1. predict the spread, then the sum's measured moments and the derivation ----------
def spread(v: View) -> bool:
    """The question on the spread of q·k, then the moments and the derivation.

    The metrics state the answer, so they come after the question, as do the
    histograms: returns whether the question is answered (or skipped).
    """
    d_k, n_samples, sigma_q, sigma_k, c = v.d_k, v.n_samples, v.sigma_q, v.sigma_k, v.c
    st.header(t("variance.step_1"))
    top = st.container()  # the takeaway, once the question is answered
    moments = data.score_stats(*v.samples)
    var_theory = dot_product_variance(d_k, sigma_q, sigma_k)
    drawn = data.samples_for(v.dist, d_k, n_samples)
    if drawn < n_samples:
        st.info(
            t("variance.uniform_capped", drawn=f"{drawn:,}", requested=f"{n_samples:,}", d_k=d_k)
        )
    options = [f"{c:g}", f"{math.sqrt(d_k) * c:.3g}", f"{d_k * c:g}", f"{d_k * d_k * c:g}"]
    revealed = workshop.predict(
        "variance_std",
        t("variance.predict_q", d_k=d_k, sigma_q=f"{sigma_q:g}", sigma_k=f"{sigma_k:g}"),
        options,
        answer=1,
        explain=t(
            "variance.predict_explain",
            std=f"{moments['std']:.3g}",
            theory=f"{math.sqrt(var_theory):.3g}",
        ),
        about=(d_k, sigma_q, sigma_k),
        unanswerable=t("variance.predict_one") if d_k == 1 else None,  # every option is c
    )
    if revealed:
        with top:
            workshop.takeaway(t("variance.s1_takeaway"))
        variance_metrics(moments, var_theory, dot_product_excess_kurtosis(d_k, v.dist))
        variance_derivation(d_k, sigma_q, sigma_k)
    return revealed


# --- 2. histograms, unscaled beside scaled ----------------------------------------------
def histograms(v: View, revealed: bool) -> None:
    """Histograms of q·k and q·k/√d_k with the exact and Gaussian laws (after the guess)."""
    st.header(t("variance.step_2"))
    if not revealed:
        st.caption(t("variance.hist_after_guess"))
        return
    workshop.takeaway(t("variance.s2_takeaway"))
    histogram_pair(v)
    score_size_cards()


@fragments.panel
def histogram_pair(v: View) -> None:
    """The two histograms and their x-axis choice (``hist_axes``, read by this panel only:
    a fragment, so moving it reruns the panel, not the page)."""
    axes = controls.choice(
        "hist_axes",
        t("variance.hist_axes"),
        labels=[t(f"variance.hist_axes_{a}") for a in HIST_AXES],
    )
    # one x-axis (the unscaled histogram's range, the wider one) unless asked otherwise
    shared = axes == "shared"
    left, right = st.columns(2)
    # the charts' words name no d_k: one spec serves every d_k, and only the data moves
    for col, key, scaled, options, values in (
        (left, "variance.hist_raw", False, {"color": COLORS["unscaled"]}, {}),
        (right, "variance.hist_scaled", True, {}, {"std": f"{v.c:.3g}"}),
    ):
        laws = (t(f"{key}.law_exact"), t(f"{key}.law_gauss"))
        with col:
            workshop.chart(
                key, charts.histogram_with_law,
                partial(data.histogram_frames, *v.samples, scaled, laws, shared),
                options={**options, "shared_axis": shared}, swap_data=True,
                source=None if scaled else [dot_products, variance_core.expected_density],
                **values,
            )  # fmt: skip
    hist_note = t("variance.hist_caption", uniform_max=variance_core.UNIFORM_EXACT_MAX_D)
    st.caption(f"{hist_note}\n\n{t(f'variance.hist_axes_note_{axes}')}")  # one element


def score_size_cards() -> None:
    """Two often-quoted sizes of q·k, asked as questions and answered by the exact law."""
    q = data.quoted_sizes()
    workshop.myth(
        t("variance.myth_hundreds_claim"),
        t(
            "variance.myth_hundreds_reality",
            share=percent(q["share_100"]),
            one_in=f"{round(1 / q['share_100'], -1):,.0f}",
            share_200=power_of_ten(q["share_200"]),
            median=f"{q['median_1024']:.1f}",
        ),
    )
    workshop.myth(
        t("variance.myth_range_claim"),
        t(
            "variance.myth_range_reality",
            median=f"{q['median_512']:.1f}",
            share=percent(q["share_20_30"]),
            below=percent(q["share_0_20"]),
        ),
    )


def power_of_ten(p: float) -> str:
    """A small share as 5.8·10⁻¹⁰."""
    mantissa, exponent = f"{p:.1e}".split("e")
    return f"{mantissa}·10{str(int(exponent)).translate(_SUPERSCRIPT)}"


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def percent(p: float) -> str:
    """A share as a percentage with 2 significant figures: 0.18 %, 19 %."""
    return f"{100 * p:.2g} %"


# --- 3. Var(q·k) against d_k ---------------------------------------------------------------
def variance_against_d_k(v: View) -> None:
    """Var(q·k) and Var(q·k/√d_k) over d_k = 1…4096 with theory (log–log)."""
    st.header(t("variance.step_3"))
    workshop.takeaway(t("variance.s3_takeaway"))
    answers.variance(v.d_k, v.dist, v.sigma_q, v.sigma_k, v.seed).draw()
    note = t("variance.sweep_caption", n=f"{story_data.SWEEP_SAMPLES:,}")
    if v.dist == "uniform":
        note += f"\n\n{t('variance.sweep_uniform_note')}"
    st.caption(note)


# --- 4. the sum, dimension by dimension --------------------------------------------------
def dimension_by_dimension(v: View) -> None:
    """Running sums of q_i k_i with their ±√i envelopes, and one pair's terms."""
    st.header(t("variance.step_4"))
    workshop.takeaway(t("variance.s4_takeaway"))
    d_k = v.d_k
    left, right = st.columns(2)
    with left:
        bands = (t("variance.band_1"), t("variance.band_2"))
        workshop.chart(
            "variance.paths", charts.running_sums, partial(data.walks, *v.pair, bands),
            source=variance_core.running_sums, n=data.N_PATHS, d_k=d_k,
        )  # fmt: skip
        st.caption(t("variance.paths_caption"))
    with right:
        signs = (t("variance.terms.sign_pos"), t("variance.terms.sign_neg"))
        total = f"{data.pair_sum(*v.pair):.3g}"
        workshop.chart(
            "variance.terms", charts.term_bars, partial(data.signed_terms, *v.pair, signs),
            source=sample_qk, d_k=d_k, total=total,
        )  # fmt: skip
        if d_k > data.MAX_TERMS_SHOWN:
            st.caption(t("variance.terms_truncated", shown=data.MAX_TERMS_SHOWN, d_k=d_k))


def variance_metrics(m: dict[str, float], var_theory: float, kurt_theory: float) -> None:
    """Metric row: sample mean, variance, std and excess kurtosis of q·k against theory."""
    std_theory = math.sqrt(var_theory)
    # one row that wraps where a value would not fit: four columns cut the mean to "0.02…"
    # at 800 px with the sidebar open
    row = st.container(horizontal=True)
    row.metric(
        t("variance.m_mean"),
        f"{m['mean']:.4g}",
        t("variance.m_mean_delta", z=m["mean"] / m["mean_se"]),
        delta_color="off",
        delta_arrow="off",
        help=t("variance.m_mean_help"),
    )
    for key, theory in (("var", var_theory), ("std", std_theory)):
        row.metric(
            t(f"variance.m_{key}"),
            f"{m[key]:.4g}",
            t("variance.m_delta", theory=f"{theory:.4g}", err=100 * (m[key] - theory) / theory),
            delta_color="off",
            delta_arrow="off",
            help=t("variance.m_se_help", se=f"{m[key + '_se']:.2g}"),
        )
    z_kurt = (m["kurt"] - kurt_theory) / m["kurt_se"] if m["kurt_se"] > 0 else 0.0
    row.metric(
        t("variance.m_kurt"),
        f"{m['kurt']:.3f}",
        t("variance.m_kurt_delta", theory=f"{kurt_theory:.4g}", z=z_kurt),
        delta_color="off",
        delta_arrow="off",
        help=t("variance.m_kurt_help"),
    )


def _tex(x: float) -> str:
    """An exact number for LaTeX without exponent notation: 1{,}048{,}576, 0.00390625 (the
    σ sliders step by ¼, so every value here is a short binary fraction)."""
    return f"{x:,.12g}".replace(",", "{,}")


def derivation_latex(d_k: int, sigma_q: float, sigma_k: float) -> str:
    """The variance of q·k derived step by step, five aligned lines, with the live numbers
    substituted (written in full: 1{,}048{,}576, not 1.05e+06)."""
    c2v_num = (sigma_q * sigma_k) ** 2
    var_num = d_k * c2v_num
    c2v, var = _tex(c2v_num), _tex(var_num)
    steps = [
        r"\mathbb{E}[q_i k_i] &= \mathbb{E}[q_i]\,\mathbb{E}[k_i] = 0",
        rf"\mathrm{{Var}}(q_i k_i) &= \mathbb{{E}}[q_i^2]\,\mathbb{{E}}[k_i^2] = \sigma_q^2\sigma_k^2"
        rf" = {sigma_q:g}^2 \cdot {sigma_k:g}^2 = {c2v}",
        rf"\mathrm{{Var}}(q\cdot k) &= \sum_{{i=1}}^{{d_k}} \mathrm{{Var}}(q_i k_i)"
        rf" = d_k\,\sigma_q^2\sigma_k^2 = {_tex(d_k)} \cdot {c2v} = {var}",
        rf"\mathrm{{std}}(q\cdot k) &= \sqrt{{d_k}}\,\sigma_q\sigma_k = {_tex(round(math.sqrt(var_num), 4))}",
        rf"\mathrm{{Var}}\!\left(\frac{{q\cdot k}}{{\sqrt{{d_k}}}}\right) &= \frac{{{var}}}{{{_tex(d_k)}}}"
        rf" = \sigma_q^2\sigma_k^2 = {c2v}",
    ]
    return r"\begin{aligned}" + r" \\[4pt] ".join(steps) + r"\end{aligned}"


def variance_derivation(d_k: int, sigma_q: float, sigma_k: float) -> None:
    """:func:`derivation_latex` in a box closed by default, made only when it is open:
    closed, it draws nothing inside (opening it reruns the page). Typeset, the five lines
    are 850 of the page's 1,900 elements in the browser, redrawn at every d_k."""
    box = st.expander(
        t("variance.derivation_title"),
        icon=":material/function:",
        key="variance_derivation",
        on_change="rerun",
    )
    if box.open:
        box.latex(derivation_latex(d_k, sigma_q, sigma_k))
        box.caption(t("variance.derivation_note"))
