"""Sections of the gradients page, each drawn by one function.

The page script reads the controls and decides which sections are shown (presenter
steps); everything here reads its inputs from arguments and cached calls in
:mod:`ui.gradients.data`, and draws each chart by its key from a frame function of
:mod:`ui.gradients.frames`. The gap explorer is an ``st.fragment``: its gap moves in the browser
(:mod:`ui.common.live`) and its ``gap2`` control reruns that panel only.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import streamlit as st

from core.experiments import row_quantities, sample_scores, saturation_sweep, summarise
from core.gradients import gap_curve, jacobian_from_logits, query_grad_norms
from core.softmax import jacobian_norm, softmax
from ui.common import controls, fragments, live, workshop
from ui.common.data import sweep_rows
from ui.common.i18n import t
from ui.common.pages import page
from ui.common.specs import text_table
from ui.gradients import charts, data, frames
from ui.story import answers, cards
from ui.story import data as story_data
from ui.story import frames as story_frames

GAP2_OPTIONS = page("gradients").param("gap2").options
#: Edges of the answer bins of the ∂L/∂q question (median unscaled / median scaled).
QGRAD_BINS = (1e-3, 0.5, 2.0)
#: Two-key rows whose ‖J‖_F the formula's note quotes: the saturation page's playground,
#: unscaled and divided by √64.
TWO_KEYS = (("two_big", (10.0, 5.0)), ("two_small", (1.25, 0.625)))


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def sig3(x: float) -> str:
    """``x`` to 3 significant figures, as text: 0.145, 6.30·10⁻¹² (never ``1.45e-01``)."""
    if x == 0 or 1e-3 <= abs(x) < 1e4:
        return f"{x:.3g}"
    mantissa, exponent = f"{x:.2e}".split("e")
    return f"{mantissa}·10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def tex(x: float) -> str:
    """A number for st.latex: 0.3476 or 3.58\\times10^{-6}."""
    if x == 0 or 1e-3 <= abs(x) < 1e4:
        return f"{x:.4g}"
    e = math.floor(math.log10(abs(x)))
    return rf"{x / 10**e:.3g}\times10^{{{e}}}"


def cell(stat: str, value: float) -> str:
    """A table entry: shares in per cent, everything else to three digits."""
    return f"{100 * value:.1f} %" if stat == "dead_fraction" else f"{value:.3g}"


def times(x: float) -> str:
    """A factor for prose: 3.7, 48 or 3,050 (scientific beyond a million)."""
    if x < 10:
        return f"{x:.2g}"
    return f"{x:,.0f}" if x < 1e6 else f"{x:.1e}"


# --- 1. the formula and one sampled row ---------------------------------------------------
def formula_and_heatmaps(d_k: int, n_keys: int, alpha: float, seed: int, labels: dict) -> None:
    """The Jacobian, its bound at saturation, the live row, and its two heatmaps."""
    row, domain_max = data.jacobian_summary(d_k, n_keys, alpha, seed)
    st.header(t("gradients.formula_header"))
    workshop.takeaway(t("gradients.formula_takeaway"))
    st.latex(  # the gradient on a line of its own (side by side a phone showed a gap)
        r"\begin{gathered}"
        r"\frac{\partial p_i}{\partial z_j} = p_i(\delta_{ij} - p_j), \qquad J = \operatorname{diag}(p) - p\,p^{\top},\\"
        r"\frac{\partial p}{\partial s} = d_k^{-\alpha} J"
        r"\end{gathered}"
    )  # fmt: skip
    st.markdown(t("gradients.formula_cases"))
    st.latex(
        r"\begin{aligned} i = j = k &:\quad \frac{\partial p_k}{\partial z_k} = p_k(1 - p_k) \le 1 - p_k \;\to\; 0"
        r"\\ (i, j) \ne (k, k) &:\quad |J_{ij}| \le \min(p_i, p_j) \le \textstyle\sum_{l \ne k} p_l = 1 - p_k \;\to\; 0 \end{aligned}"
    )  # fmt: skip
    live = [
        rf"\alpha = {a:g}:&\quad p_k = {row[w]['p_top']:.6g},\quad 1 - p_k = {tex(row[w]['rest'])},\quad"
        rf"\max_{{ij}}|J_{{ij}}| = {tex(row[w]['max_abs'])},\quad \|J\|_F = {tex(row[w]['fro'])}"
        for w, a in (("unscaled", 0.0), ("scaled", alpha))
    ]  # fmt: skip
    st.latex(r"\begin{aligned}" + r"\\".join(live) + r"\end{aligned}")
    st.caption(t("gradients.formula_note", d_k=d_k))
    two = {
        name: f"{float(jacobian_norm(softmax(np.array(scores)))):.3g}" for name, scores in TWO_KEYS
    }
    st.caption(t("gradients.formula_facts", **two))

    # one row, unscaled beside scaled, one shared colour scale
    for col, (which, label) in zip(st.columns(2), labels.items(), strict=True):
        r = row[which]
        p_text = f"{r['p_top']:.4f}" if r["rest"] >= 1e-4 else f"1 − {sig3(r['rest'])}"
        with col:
            workshop.chart(
                f"gradients.heat_{which}", charts.jacobian_heatmap,
                partial(frames.heatmap, d_k, n_keys, alpha, seed, which),
                options={"domain_max": domain_max}, source=[sample_scores, jacobian_from_logits],
                label=label, d_k=d_k, p=p_text, fro=sig3(r["fro"]),
            )  # fmt: skip
    st.caption(t("gradients.heat_caption", d_k=d_k, n_keys=n_keys))
    if n_keys > data.HEATMAP_MAX_KEYS:
        st.caption(t("gradients.heat_truncated", shown=data.HEATMAP_MAX_KEYS, n_keys=n_keys))


# --- 2. the gap explorer: a fragment, so its two controls rerun only this panel -----------
@fragments.panel
def gap_explorer(n_keys: int) -> None:
    """The gap explorer: ``gap2`` is a control of this fragment; the gap moves in the
    browser (:func:`ui.common.live.live_chart`), and the formula under the chart follows
    it when a drag pauses."""
    st.header(t("gradients.gap_header"))
    workshop.takeaway(t("gradients.gap_takeaway"), t("gradients.gap_lead"))
    choice = controls.choice(
        "gap2", t("gradients.gap2"), widget="select_slider",
        labels=[t("gradients.gap2_none") if o == "none" else o for o in GAP2_OPTIONS],
        help=t("gradients.gap2_help"),
    )  # fmt: skip
    gap2 = None if choice == "none" else float(choice)
    # the curves' legend labels, as the chart's table names them
    names = tuple((name, t(f"gradients.gap.{name}")) for name in ("fro", "offdiag", "exact", "law"))
    g = live.live_chart(
        "gradients.gap", charts.gap_explorer, partial(frames.gap, n_keys, gap2, names),
        (("gap", t("gradients.gap_slider")),), options={"n_keys": n_keys, "gap2": gap2},
        source=[gap_curve, charts.gap_point], n_keys=n_keys,
    )["gap"]  # fmt: skip
    pt = data.gap_point(g, n_keys, gap2)

    # "≈ law" only where the chart draws the law too (elsewhere it is off by up to 35×)
    def close(q: str) -> bool:
        return bool(data.gap_law_holds(pt["p_top"], pt[f"{q}_law"], pt[q]))

    fro_law = (
        rf" \approx \sqrt{{(\textstyle\sum\varepsilon)^2 + 3\sum\varepsilon^2}} = {tex(pt['fro_law'])}"
        if close("fro")
        else ""
    )
    off_law = rf" \approx \max\varepsilon = {tex(pt['offdiag_law'])}" if close("offdiag") else ""
    law = close("fro") and close("offdiag")
    st.latex(
        rf"\begin{{aligned}} g = {g:g}:&\quad p_k = {pt['p_top']:.6g},\quad \|J\|_F = {tex(pt['fro'])}"
        rf"{fro_law}\\ &\quad \max_{{i\ne j}}|J_{{ij}}| = {tex(pt['offdiag'])}{off_law}"
        r" \end{aligned}"
    )
    if not law:
        st.caption(t("gradients.gap_law_na", p=f"{pt['p_top']:.3g}"))
    st.caption(t("gradients.gap_caption"))


# --- 3. many rows: predict the dead share, then median, band and mean against d_k ---------
def sweeps(d_k: int, n_keys: int, alpha: float, seed: int, labels: dict) -> bool:
    """The question on dead rows, then the ‖J‖_F and ‖∂p/∂s‖_F sweeps, dead rows, table.

    Returns whether the sweeps are shown (False while the question waits for a guess).
    """
    st.header(t("gradients.sweep_header"))
    top = st.container()  # the takeaway, once the question is answered
    n_rows = sweep_rows(n_keys)
    now = story_data.gradient_at(d_k, n_keys, alpha, seed)
    if not workshop.predict(**cards.gradients_dead_share(d_k, n_keys, alpha, seed)):
        return
    with top:
        workshop.takeaway(t("gradients.sweep_takeaway"))
    st.markdown(t("gradients.sweep_lead", n_rows=f"{n_rows:,}", n_keys=n_keys))
    series = tuple({a: controls.alpha_label(a) for a in (0.0, 0.5, 1.0, alpha)}.items())
    # the closed form of ‖J‖_F per row; medians, means, dead share and the factor d_k^−α
    source = {"jac": [saturation_sweep, row_quantities], "grad": [saturation_sweep, summarise]}
    # the medians as drawn (floored for the log axis)
    quotes = data.jacobian_quotes(n_keys, seed)
    med = {a: max(quotes[a, 1024]["median"], story_data.GRADIENT_LOG_FLOOR) for a in (0.0, 0.5)}
    for col, name in zip(st.columns(2), ("jac", "grad"), strict=True):
        with col:
            workshop.chart(
                f"gradients.{name}_sweep", charts.median_mean_sweep,
                partial(story_frames.gradient_lines, name, n_keys, alpha, seed, series),
                marker=d_k, source=source[name],
                n=n_keys, med_u=f"{med[0.0]:.2g}", med_s=f"{med[0.5]:.2g}",
            )  # fmt: skip
    left, right = st.columns(2)
    with left:
        answers.gradients_dead(d_k, n_keys, alpha, seed).draw()
        st.caption(t("gradients.dead_caption"))
    shown = [w for w in labels if alpha or w == "unscaled"]
    table = text_table([
        {t("gradients.col_quantity"): t(f"gradients.row_{k}"),
         **{labels[w]: cell(k, now[w][k]) for w in shown}}
        for k in story_data.GRADIENT_AT_FIELDS
    ])  # fmt: skip
    right.markdown(t("gradients.table_title", d_k=d_k, n_rows=f"{n_rows:,}"))
    workshop.draw_table(table, right)
    return True


# --- 4. the myth card: the mean is not what collapses -------------------------------------
def myth_reality(d_k: int, n_keys: int, seed: int) -> str:
    """The live counter-example: unscaled against 1/√d_k at the current d_k and n_keys."""
    at = story_data.gradient_at(d_k, n_keys, 0.5, seed)
    u, s = at["unscaled"], at["scaled"]
    mean_u, mean_s = u["grad_fro_mean"], s["grad_fro_mean"]
    med_u, med_s = u["grad_fro_median"], s["grad_fro_median"]
    if d_k == 1:
        verdict = t("gradients_workshop.myth_equal")
    elif mean_u >= mean_s:
        verdict = t("gradients_workshop.myth_larger", ratio=times(mean_u / mean_s))
    else:
        verdict = t("gradients_workshop.myth_smaller")
    nums = {"med_u": f"{med_u:.3g}", "med_s": f"{med_s:.3g}",
            "dead_u": f"{100 * u['dead_fraction']:.1f}", "dead_s": f"{100 * s['dead_fraction']:.1f}"}  # fmt: skip
    if med_u * 10 <= med_s:  # as for the query gradient: collapsed below a tenth
        typical = t("gradients_workshop.myth_collapsed", fold=times(med_s / med_u), **nums)
    elif u["dead_fraction"] > 0:
        typical = t("gradients_workshop.myth_not_yet", **nums)
    else:
        typical = t("gradients_workshop.myth_none_dead", **nums)
    mean = t("gradients_workshop.myth_mean", n_rows=f"{sweep_rows(n_keys):,}", d_k=d_k,
             n_keys=n_keys, mean_u=f"{mean_u:.3g}", mean_s=f"{mean_s:.3g}", verdict=verdict)  # fmt: skip
    logits = t("gradients_workshop.myth_logits", jmean_u=f"{u['jacobian_fro_mean']:.3g}",
               jmean_s=f"{s['jacobian_fro_mean']:.3g}")  # fmt: skip
    return f"{mean}\n\n{typical}\n\n{logits}"


def myth(d_k: int, n_keys: int, seed: int) -> None:
    """The misconception card, then why the mean and the median disagree."""
    workshop.myth(
        t("gradients_workshop.myth_claim"),
        myth_reality(d_k, n_keys, seed),
        source=t("gradients_workshop.myth_source"),
    )
    with st.expander(t("gradients_workshop.why_median_label")):
        st.markdown(t("gradients_workshop.why_median"))
    workshop.myth(t("gradients_workshop.myth_gap_claim"), gap_reality(n_keys, seed))


def gap_reality(n_keys: int, seed: int) -> str:
    """One row's ‖J‖_F at gaps 10 and 20 against the unscaled mean at σ = 16 and 32."""
    j1, j2 = (data.gap_point(g, n_keys, None)["fro"] for g in (10.0, 20.0))
    quotes = data.jacobian_quotes(n_keys, seed)
    at_256, at_1024 = quotes[0.0, 256], quotes[0.0, 1024]
    return t(
        "gradients_workshop.myth_gap_reality",
        n_keys=n_keys,
        j1=f"{j1:.3g}",
        j2=f"{j2:.3g}",
        ratio=f"{j2 / j1:.2g}",
        m1=f"{at_256['mean']:.3g}",
        m2=f"{at_1024['mean']:.3g}",
        mratio=f"{at_1024['mean'] / at_256['mean']:.2f}",
        med1=f"{at_256['median']:.3g}",
        med2=f"{at_1024['median']:.3g}",
    )


# --- 5. the gradient that reaches q ---------------------------------------------------------
def qgrad_caption(d_k: int, alpha: float, ratio: float, rel: float) -> str:
    """What the two query-gradient histograms show. ``ratio`` = median unscaled / median
    with d_k^−α; ``rel`` = median unscaled / median with 1/√d_k (the standard: with α ≠ ½
    the other side has its own factor d_k^(½−α)). The unscaled rows have collapsed when
    ``rel`` < 0.1.

    With α = 0 or d_k = 1 the two sides are the same rows; with α > ½ and ratio > 1 the
    over-scaled side is small by d_k^(½−α); with 0 < α < ½ both sides saturate, the scaled
    one later.
    """
    if alpha == 0 or d_k == 1:
        return t("gradients.qgrad_caption_same")
    collapsed = rel < 0.1
    if alpha > 0.5 and ratio > 1:
        factor = f"{d_k ** (0.5 - alpha):.3g}"
        tail = t(
            "gradients.qgrad_over_saturated" if collapsed else "gradients.qgrad_over_not_yet",
            rel=f"{rel:.3g}",
        )
        over = t(
            "gradients.qgrad_caption_over", alpha=f"{alpha:g}", ratio=f"{ratio:.3g}", factor=factor
        )
        return f"{over} {tail}"
    if collapsed:
        return t("gradients.qgrad_caption")
    fold = f"{max(ratio, 1 / ratio):.3g}"
    if alpha < 0.5:
        return t("gradients.qgrad_caption_partial", alpha=f"{alpha:g}", fold=fold)
    return t("gradients.qgrad_caption_early", d_k=d_k, fold=fold)


def query_gradient(
    d_k: int, n_keys: int, alpha: float, seed: int, labels: dict, colors: dict
) -> None:
    """The question on the median ‖∂L/∂q‖, then its two histograms."""
    st.header(t("gradients.qgrad_header"))
    top = st.container()  # the takeaway, once the question is answered
    n_rows = sweep_rows(n_keys)
    st.markdown(t("gradients.qgrad_lead", n_rows=f"{n_rows:,}"))
    qstats, geo = data.query_grad_stats(d_k, n_keys, alpha, seed)
    med_u, med_s = qstats["unscaled"]["median"], qstats["scaled"]["median"]
    ratio = med_u / med_s
    options = [t(f"gradients_workshop.qgrad_opt_{i}") for i in range(len(QGRAD_BINS) + 1)]
    explain = t("gradients_workshop.qgrad_explain", n_rows=f"{n_rows:,}", med_u=f"{med_u:.3g}",
                med_s=f"{med_s:.3g}", label=labels["scaled"], ratio=f"{ratio:.3g}")  # fmt: skip
    question = t("gradients_workshop.qgrad_q", d_k=d_k, n_keys=n_keys, label=labels["scaled"])
    answer = cards.bin_index(ratio, QGRAD_BINS)
    same = alpha == 0 or d_k == 1  # d_k^−α = 1: both sides are the same rows
    if not workshop.predict(
        "gradients_qgrad_median", question, options, answer=answer, explain=explain,
        about=(d_k, n_keys, alpha, seed),
        unanswerable=t("gradients_workshop.qgrad_same") if same else None,
    ):  # fmt: skip
        return
    with top:
        workshop.takeaway(t("gradients.qgrad_takeaway"))
    for col, (which, label) in zip(st.columns(2), labels.items(), strict=True):
        q = qstats[which]
        histogram = {"median": q["median"], "median_log10": q["median_log10"],
                     "x_domain": (geo["lo"], geo["hi"]), "color": colors[which]}  # fmt: skip
        with col:
            workshop.chart(
                f"gradients.qgrad_{which}", charts.log_histogram,
                partial(frames.qgrad, d_k, n_keys, alpha, seed, which),
                options=histogram, source=query_grad_norms,
                label=label, d_k=d_k, n_keys=n_keys, median=f"{q['median']:.2e}",
            )  # fmt: skip
            st.caption(t("gradients.qgrad_stats", median=f"{q['median']:.3g}", mean=f"{q['mean']:.3g}",
                         q10=f"{q['q10']:.2g}", q90=f"{q['q90']:.2g}"))  # fmt: skip
    med_half = med_s if alpha == 0.5 else data.query_grad_median(d_k, n_keys, 0.5, seed)
    rel = med_u / med_half
    st.caption(f"{qgrad_caption(d_k, alpha, ratio, rel)} {t('gradients.qgrad_sampler')}")
    if qstats["unscaled"]["clipped"] > 0:
        st.caption(t("gradients.qgrad_clipped", lo=f"{geo['lo']:.0f}",
                     share=f"{qstats['unscaled']['clipped']:.1f}"))  # fmt: skip
