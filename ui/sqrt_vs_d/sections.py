"""Sections of the √d_k-vs-d_k page, each drawn by one function.

The page script reads the controls into a :class:`View` and decides which sections are
shown (presenter steps). Each chart is drawn by its key from a frame function of
:mod:`ui.sqrt_vs_d.frames` (the cached sweeps of :mod:`ui.sqrt_vs_d.data` within the
chosen d_k range); the predict-first questions and the misconception card read the full
sweep (d_k = 1…4096) as plain numbers, whatever range the page shows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, partial

import streamlit as st

from core import scaling
from core.experiments import saturation_sweep
from core.scaling import (
    independent_logit_std,
    linear_scaling_weight_limit,
    relevant_logit_mean,
    signal_to_noise,
)
from ui.common import controls, fragments, live, workshop
from ui.common.controls import ALPHA_PRESETS, alpha_label
from ui.common.data import sweep_row_limits, sweep_rows
from ui.common.i18n import t
from ui.sqrt_vs_d import charts, data, frames
from ui.story import answers, cards
from ui.story import data as story_data
from ui.story.cards import D_LARGE, D_START, Cells, value_at

#: The core function behind every chart.
SWEEP = saturation_sweep


@dataclass(frozen=True)
class View:
    """The page's settings; the charts show d_k from ``d_lo`` to ``d_hi``."""

    d_k: int
    n_keys: int
    alpha: float
    rho: float
    seed: int
    d_lo: int
    d_hi: int

    @property
    def sweep(self) -> tuple[int, float, float, int, int, int]:
        """The arguments of a sweep's frame functions (:mod:`ui.sqrt_vs_d.frames`):
        ``n_keys``, ``alpha``, ``rho``, ``seed``, ``d_lo``, ``d_hi``."""
        return self.n_keys, self.alpha, self.rho, self.seed, self.d_lo, self.d_hi

    @property
    def labels(self) -> tuple[tuple[float, str], ...]:
        """(α, legend label) of α = 0, ½, 1 and the chosen α, in the current language."""
        return tuple({a: alpha_label(a) for a in (*ALPHA_PRESETS, self.alpha)}.items())

    @cached_property
    def cells(self) -> dict[tuple[float, int], dict[str, float]]:
        """The full sweep's statistics where the questions and the myth card read them
        (:func:`ui.story.data.preset_cells`; fetched once a run: a cache hit copies its
        value)."""
        return story_data.preset_cells(
            n_keys=self.n_keys, rho=self.rho, seed=self.seed, d_values=cards.QUOTED_D
        )


def view(
    d_k: int, d_min: str, d_max: str, n_keys: int, alpha: float, rho: float, seed: int
) -> View:
    """The settings as a :class:`View`, with notes on the d_k range (swapped ends, a
    single value, the learner's d_k outside it)."""
    d_lo, d_hi = sorted((int(d_min), int(d_max)))
    if int(d_min) > int(d_max):
        st.caption(t("sqrt_vs_d.range_swapped", lo=d_lo, hi=d_hi))
    if d_lo == d_hi:
        st.info(t("sqrt_vs_d.range_single", d=d_lo), icon=":material/info:")
    if not d_lo <= d_k <= d_hi:
        st.caption(t("sqrt_vs_d.outside_range", d_k=d_k, lo=d_lo, hi=d_hi))
    return View(d_k, n_keys, float(alpha), rho, seed, d_lo, d_hi)


def reference(n_keys: int, rho: float, *, limit: bool) -> tuple[float, str]:
    """One horizontal reference line (y, label): 1/n_keys, or (``limit`` and rho > 0) the
    large-d_k weight of 1/d_k scaling, labelled with 1/n_keys too (two lines so close
    would clash)."""
    chance = 1.0 / n_keys
    if limit and rho > 0:
        w = linear_scaling_weight_limit(n_keys, rho)
        return w, t("sqrt_vs_d.ref_limit", value=f"{w:.3g}", chance=f"{chance:.3g}")
    return chance, t("sqrt_vs_d.ref_one_over_n", value=f"{chance:.3g}")


def floor_label(y: float) -> str:
    """Below a floor ``y`` no line goes under — unless the floor hugs the x-axis (many
    keys: 1/512), where a label below it would sit on the tick labels: the label needs
    ~20 px under the line (7 px clear of the markers, then the text), 0.09 of the 220 px
    plot on a 0–1 axis."""
    return "below_right" if y >= 0.09 else "above_right"


# --- 1: at your d_k, and the logit scale ------------------------------------------------------
def logit_scale(v: View) -> None:
    """The summary table at the learner's d_k, the three logit-scale formulas, and the
    measured logit std and mean against d_k with their theory."""
    d_k, n_keys, alpha, rho = v.d_k, v.n_keys, v.alpha, v.rho
    st.info(t("sqrt_vs_d.model"), icon=":material/info:")
    summary(d_k, n_keys, alpha, rho, v.seed)
    st.header(t("sqrt_vs_d.s1_title"))
    workshop.takeaway(t("sqrt_vs_d.s1_takeaway"), t("sqrt_vs_d.s1_text"))
    st.latex(logit_latex(d_k, alpha, rho))
    left, right = st.columns(2)
    for col, which in ((left, "std"), (right, "mean")):
        with col:
            if which == "mean" and rho == 0:
                st.info(t("sqrt_vs_d.mean_rho0"), icon=":material/info:")
                continue
            answers.logit_scale(which, d_k, *v.sweep).draw()
    st.caption(t("sqrt_vs_d.logit_caption_rho0" if rho == 0 else "sqrt_vs_d.logit_caption"))


# --- 2: what softmax does with them (predict first) ------------------------------------------
def softmax_response(v: View) -> None:
    """Predict the largest weight at d_k = 4096, then entropy share and largest weight."""
    st.header(t("sqrt_vs_d.s2_title"))
    top = st.container()  # the takeaway, once the question is answered
    if workshop.predict(**cards.max_weight_question(v.cells, v.n_keys, v.rho)):
        with top:
            workshop.takeaway(t("sqrt_vs_d.s2_takeaway"))
        n_keys, rho = v.n_keys, v.rho
        uniform = ((1.0, t("sqrt_vs_d.ref_uniform")),)
        chance = reference(n_keys, rho, limit=False)
        left, right = st.columns(2)
        with left:
            workshop.chart(
                "sqrt_vs_d.entropy", charts.stat_lines,
                partial(frames.stat_lines, "entropy", *v.sweep, v.labels, uniform),
                options={"y_domain": (0, 1)}, marker=v.d_k, source=SWEEP, n=n_keys,
            )  # fmt: skip
        with right:
            workshop.chart(
                "sqrt_vs_d.max", charts.stat_lines,
                partial(frames.stat_lines, "max", *v.sweep, v.labels, (chance,)),
                options={"y_domain": (0, 1), "reference_label": floor_label(chance[0])},
                marker=v.d_k, source=SWEEP, n=n_keys,
            )  # fmt: skip
        caption = "softmax_caption_rho0" if v.rho == 0 else "softmax_caption_rho"
        # the main effect first, then (ρ = 0) the aligned key's caveat: one element
        caveat = "\n\n" + t("sqrt_vs_d.softmax_caveat") if v.rho == 0 else ""
        st.caption(t(f"sqrt_vs_d.{caption}") + caveat)


# --- 3: every exponent at once ---------------------------------------------------------------
def heatmap(v: View) -> None:
    """Mean entropy share over d_k × α (independent of the α and d_k controls)."""
    st.header(t("sqrt_vs_d.s3_title"))
    workshop.takeaway(t("sqrt_vs_d.s3_takeaway"))
    rules = tuple((a, alpha_label(a)) for a in (0.5, 1.0))
    workshop.chart(
        "sqrt_vs_d.heatmap", charts.alpha_heatmap,
        partial(frames.heatmap, v.n_keys, v.rho, v.seed, v.d_lo, v.d_hi, rules),
        source=SWEEP, rho=f"{v.rho:g}",
    )  # fmt: skip
    st.caption(t("sqrt_vs_d.heat_caption", rows=f"{data.sqrt_vs_d_heatmap_rows(v.n_keys):,}"))


# --- 4: discrimination (predict first) -------------------------------------------------------
def discrimination(v: View) -> None:
    """Predict the relevant key's weight, then its argmax share and mean weight (with
    ρ = 0 no key is special: both would be flat at 1/n_keys, so a note says why and
    offers the aligned case instead)."""
    n_keys, rho = v.n_keys, v.rho
    st.header(t("sqrt_vs_d.s4_title"))
    top = st.container()  # the takeaway, once the question is answered
    answered = workshop.predict(**relevant_weight_question(v.cells, v.n_keys, v.rho))
    if answered:
        with top:
            workshop.takeaway(t("sqrt_vs_d.s4_takeaway"))
    if answered and rho == 0:  # the note of the question says why: no chart to draw
        st.button(
            t("sqrt_vs_d.rho_aligned"), key="rho_aligned_disc", on_click=_set_rho, args=(0.5,),
            icon=":material/arrow_upward:",
        )  # fmt: skip
    elif answered:
        chance = reference(n_keys, rho, limit=False)
        # 1/n_keys is a floor; the 1/d_k limit is one only for α ≤ 1 (with α > 1 the
        # weight falls through it toward 1/n_keys, and α < 1 rises to 1)
        limit = reference(n_keys, rho, limit=True)
        left, right = st.columns(2)
        with left:
            workshop.chart(
                "sqrt_vs_d.argmax", charts.stat_lines,
                partial(frames.argmax, n_keys, rho, v.seed, v.d_lo, v.d_hi,
                        t("sqrt_vs_d.series_any_alpha"), (chance,)),
                options={"y_domain": (0, 1), "reference_label": floor_label(chance[0])},
                marker=v.d_k, source=SWEEP, n=n_keys,
            )  # fmt: skip
        with right:
            placement = floor_label(limit[0]) if v.alpha <= 1 else "above_right"
            workshop.chart(
                "sqrt_vs_d.weight", charts.stat_lines,
                partial(frames.stat_lines, "weight", *v.sweep, v.labels, (limit,)),
                options={"y_domain": (0, 1), "reference_label": placement}, marker=v.d_k,
                source=[SWEEP, scaling.linear_scaling_weight_limit], n=n_keys,
            )  # fmt: skip
        limit_text = f"{scaling.linear_scaling_weight_limit(n_keys, rho):.3g}"
        st.caption(t("sqrt_vs_d.disc_caption", limit=limit_text))


# --- 5: gradient scale -----------------------------------------------------------------------
def gradient_scale(v: View) -> None:
    """‖∂p/∂s‖_F against d_k on a log axis, with why it matters."""
    st.header(t("sqrt_vs_d.s5_title"))
    workshop.takeaway(t("sqrt_vs_d.s5_takeaway"))
    left, right = st.columns([3, 2])
    with left:
        workshop.chart(
            "sqrt_vs_d.grad", charts.stat_lines, partial(frames.stat_lines, "grad", *v.sweep, v.labels),
            options={"log_y": True}, marker=v.d_k, source=SWEEP, n=v.n_keys,
        )  # fmt: skip
    with right:
        st.markdown(t("sqrt_vs_d.grad_text", floor=f"{story_data.SWEEP_LOG_FLOOR:g}"))


# --- 6: when each is right, and the misconception --------------------------------------------
def when_each(v: View) -> None:
    """Why √d_k for independent q, k and d_k for aligned ones (μP), and the myth card."""
    st.header(t("sqrt_vs_d.s6_title"))
    workshop.takeaway(t("sqrt_vs_d.s6_takeaway"))
    left, right = st.columns(2)
    with left.container(border=True):
        st.markdown(t("sqrt_vs_d.why_sqrt"))
    with right.container(border=True):
        st.markdown(t("sqrt_vs_d.why_d"))
    closed_form(v.d_k)
    workshop.myth(t("sqrt_vs_d_workshop.myth_claim"), myth_reality(v.cells, v.n_keys, v.rho))


@fragments.panel
def closed_form(d_k: int) -> None:
    """The relevant key's mean logit and the other keys' std against d_k under ÷√d_k and
    ÷d_k, for an alignment ρ the learner moves in the browser (``alignment``; the page's
    ρ sets the simulations); reruns on its own when the drag pauses."""
    st.markdown(t("sqrt_vs_d.theory_lead"))
    labels = (
        (t("sqrt_vs_d.theory.sqrt"), t("sqrt_vs_d.theory.linear")),
        (t("sqrt_vs_d.theory.mean"), t("sqrt_vs_d.theory.std")),
    )
    live.live_chart(
        "sqrt_vs_d.theory", charts.logit_theory_lines, partial(frames.logit_theory, labels),
        (("alignment", t("sqrt_vs_d.alignment")),), marker=d_k,
        source=[relevant_logit_mean, independent_logit_std, charts.logit_theory],
    )  # fmt: skip
    st.caption(t("sqrt_vs_d.theory_caption"))


def logit_latex(d_k: int, alpha: float, rho: float) -> str:
    """The three logit-scale formulas with the user's d_k, α and ρ substituted, one a
    line (on one line they ran past a half-page column at 800 px)."""
    std = independent_logit_std(d_k, alpha)
    mean = relevant_logit_mean(d_k, alpha, rho)
    return (
        r"\begin{gathered}"
        rf"d_k = {d_k},\ \alpha = {alpha:g},\ \rho = {rho:g}:\\"
        rf"\operatorname{{std}}(z_j) = d_k^{{1/2-\alpha}} = {std:.4g},\\"
        rf"\mathbb{{E}}[z_0] = \rho\, d_k^{{1-\alpha}} = {mean:.4g},\\"
        rf"\frac{{\mathbb{{E}}[z_0]}}{{\operatorname{{std}}(z_j)}} = \rho\sqrt{{d_k}}"
        rf" = {signal_to_noise(d_k, rho):.4g}"
        r"\end{gathered}"
    )


def summary(d_k: int, n_keys: int, alpha: float, rho: float, seed: int) -> None:
    """The table of statistics at the user's d_k, with its caption."""
    st.header(t("sqrt_vs_d.summary_title", d_k=d_k, n=n_keys, rho=f"{rho:g}"))
    workshop.takeaway(t("sqrt_vs_d.summary_takeaway"))
    # a static table: its text follows the page's type size (larger in presenter mode)
    stats = data.at_d(d_k=d_k, n_keys=n_keys, alpha=alpha, rho=rho, seed=seed)
    table = data.summary_table(stats, d_k, n_keys, rho)
    caption = t(
        "sqrt_vs_d.summary_caption",
        rate=f"{stats[0]['relevant_argmax_rate']:.3f}",
        chance=f"{1 / n_keys:.3g}",
        rows=f"{sweep_rows(n_keys):,}",
    )
    workshop.draw_table(table)
    st.caption(caption)


def chart_settings() -> tuple[int, float, str, str]:
    """n_keys, ρ and the d_k range of the charts, in a popover whose label shows their
    values (boxes of their own beside d_k and α left each a stub at 800 px); ρ's two
    presets stay on the page (:func:`rho_presets`)."""
    now = {
        key: st.session_state[key] if key in st.session_state else controls.link_value(key)
        for key in ("n_keys", "rho", "d_min", "d_max")
    }
    lo, hi = sorted((int(now["d_min"]), int(now["d_max"])))
    label = t("sqrt_vs_d.settings", n=now["n_keys"], rho=f"{now['rho']:g}", lo=lo, hi=hi)
    with st.popover(label, icon=":material/tune:", width="stretch"):
        rho = controls.float_slider("rho", t("sqrt_vs_d.rho"), help=t("sqrt_vs_d.rho_help"))
        n_keys = controls.int_input(
            "n_keys", t("sqrt_vs_d.n_keys"), help=t("sqrt_vs_d.n_keys_help", **sweep_row_limits())
        )
        d_min = controls.choice("d_min", t("sqrt_vs_d.d_min"), widget="select_slider")
        d_max = controls.choice("d_max", t("sqrt_vs_d.d_max"), widget="select_slider")
    return n_keys, rho, d_min, d_max


def _set_rho(value: float) -> None:
    st.session_state["rho"] = value


#: ρ presets: independent keys (initialisation) and one aligned key (after training).
RHO_PRESETS = (("rho_init", 0.0), ("rho_aligned", 0.5))


def rho_presets() -> None:
    """Two buttons: ρ = 0 and ρ = 0.5 (independent at initialisation; one aligned key),
    the current one highlighted (the ρ slider is in :func:`chart_settings`)."""
    current = st.session_state["rho"] if "rho" in st.session_state else controls.link_value("rho")
    # content-wide buttons in one row that wraps (equal columns cut the labels to "ρ = …")
    row = st.container(horizontal=True, gap="small")
    for name, value in RHO_PRESETS:
        row.button(
            t(f"sqrt_vs_d.{name}"),
            key=f"{name}_preset",
            on_click=_set_rho,
            args=(value,),
            type="primary" if current == value else "secondary",
            width="content",
            help=t("sqrt_vs_d.rho_help"),
        )


def relevant_weight_question(cells: Cells, n_keys: int, rho: float) -> dict:
    """Predict-first question: with 1/√d_k, does the relevant key's weight rise, stay or
    fall from d_k = 16 to 4096? "Stays" when the change is within max(0.02, 4 s.e.)."""
    a = value_at(cells, 0.5, D_START, "relevant_weight_mean")
    b = value_at(cells, 0.5, D_LARGE, "relevant_weight_mean")
    se = math.hypot(
        value_at(cells, 0.5, D_START, "relevant_weight_se"),
        value_at(cells, 0.5, D_LARGE, "relevant_weight_se"),
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
            c=f"{value_at(cells, 1.0, D_START, 'relevant_weight_mean'):.3f}",
            d=f"{value_at(cells, 1.0, D_LARGE, 'relevant_weight_mean'):.3f}",
            lo=D_START,
            hi=D_LARGE,
        ),
    }


def myth_numbers(cells: Cells, n_keys: int) -> dict[str, str]:
    """Entropy share and largest weight at d_k = 4096 for α = ½ and α = 1, formatted."""
    ln_n = math.log(n_keys)
    out = {}
    for name, alpha in (("half", 0.5), ("one", 1.0)):
        out[f"h_{name}"] = f"{value_at(cells, alpha, D_LARGE, 'entropy_mean') / ln_n:.3f}"
        out[f"m_{name}"] = f"{value_at(cells, alpha, D_LARGE, 'max_weight_mean'):.3f}"
    return out


def myth_reality(cells: Cells, n_keys: int, rho: float) -> str:
    """The misconception card's answer, with the live counter-example at d_k = 4096."""
    return t(
        "sqrt_vs_d_workshop.myth_reality" if rho == 0 else "sqrt_vs_d_workshop.myth_reality_rho",
        d=D_LARGE,
        n=n_keys,
        rho=f"{rho:g}",
        chance=f"{1 / n_keys:.3g}",
        **myth_numbers(cells, n_keys),
    )
