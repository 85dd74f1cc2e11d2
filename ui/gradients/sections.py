"""Sections of the gradients page, each drawn by one function.

The page script reads the controls and decides which sections are shown (presenter
steps); everything here reads its inputs from arguments and cached calls in
:mod:`ui.gradients.data`. The gap explorer is an ``st.fragment`` with its own URL-bound controls
(``gap``, ``gap2``), so moving them reruns that panel only.
"""

from __future__ import annotations

import math
from functools import partial

import pandas as pd
import streamlit as st

from core.experiments import row_quantities, sample_scores, saturation_sweep, summarise
from core.gradients import gap_curve, jacobian_from_logits, query_grad_norms
from ui.common import controls, workshop
from ui.common.charts import alpha_color, legacy_sweep_lines
from ui.common.data import sweep_rows
from ui.common.i18n import t
from ui.common.pages import page
from ui.gradients import charts, data

GAP2_OPTIONS = page("gradients").param("gap2").options
#: Upper edges of the answer bins of the dead-row question (shares of rows).
DEAD_BINS = (0.01, 0.10, 0.50)
#: Edges of the answer bins of the ∂L/∂q question (median unscaled / median scaled).
QGRAD_BINS = (1e-3, 0.5, 2.0)


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


def bin_index(value: float, edges: tuple[float, ...]) -> int:
    """Index of the bin holding ``value``: 0 below ``edges[0]``, len(edges) at the top."""
    return sum(value >= e for e in edges)


# --- 1. the formula and one sampled row ---------------------------------------------------
def formula_and_heatmaps(d_k: int, n_keys: int, alpha: float, seed: int, labels: dict) -> None:
    """The Jacobian, its bound at saturation, the live row, and its two heatmaps."""
    cells, row = data.jacobian_row(d_k, n_keys, alpha, seed)
    st.header(t("gradients.formula_header"))
    workshop.takeaway(t("gradients.formula_takeaway"))
    st.latex(
        r"\frac{\partial p_i}{\partial z_j} = p_i(\delta_{ij} - p_j), \qquad J = \operatorname{diag}(p) - p\,p^{\top},"
        r"\qquad \frac{\partial p}{\partial s} = d_k^{-\alpha} J"
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

    # one row, unscaled beside scaled, one shared colour scale
    for col, (which, label) in zip(st.columns(2), labels.items(), strict=True):
        r = row[which]
        p_text = f"{r['p_top']:.4f}" if r["rest"] >= 1e-4 else f"1 − {sig3(r['rest'])}"
        frame = cells[cells.which == which].drop(columns="which")
        with col:
            workshop.legacy_chart(
                partial(charts.jacobian_heatmap,
                    frame, domain_max=cells.value.abs().max(), title=label,
                    subtitle=t("gradients.heat_subtitle", p=p_text, fro=sig3(r["fro"])),
                    x_title=t("gradients.axis_j"), y_title=t("gradients.axis_i"),
                    color_title=t("gradients.heat_legend"),
                    tips={"p_i": t("gradients.tip_p_i"), "p_j": t("gradients.tip_p_j")},
                    description=t("gradients.heat_alt", label=label, d_k=d_k, fro=sig3(r["fro"])),
                ),
                key=f"gradients_heat_{which}", data=frame,
                source=[sample_scores, jacobian_from_logits],
            )  # fmt: skip
    st.caption(t("gradients.heat_caption", d_k=d_k, n_keys=n_keys))
    if n_keys > data.HEATMAP_MAX_KEYS:
        st.caption(t("gradients.heat_truncated", shown=data.HEATMAP_MAX_KEYS, n_keys=n_keys))


# --- 2. the gap explorer: a fragment, so its two controls rerun only this panel -----------
@workshop.fragment
def gap_explorer(n_keys: int) -> None:
    st.header(t("gradients.gap_header"))
    workshop.takeaway(t("gradients.gap_takeaway"))
    st.markdown(t("gradients.gap_lead"))
    c1, c2 = st.columns(2)
    with c1:
        g = controls.float_slider("gap", t("gradients.gap"))
    with c2:
        choice = controls.choice(
            "gap2", t("gradients.gap2"), widget="select_slider",
            labels=[t("gradients.gap2_none") if o == "none" else o for o in GAP2_OPTIONS],
            help=t("gradients.gap2_help"),
        )  # fmt: skip
    gap2 = None if choice == "none" else float(choice)
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
    q_labels = (t("gradients.gap_q_fro"), t("gradients.gap_q_off"))
    k_labels = (t("gradients.gap_k_exact"), t("gradients.gap_k_law"))
    names = dict(zip(("fro", "offdiag", "exact", "law"), q_labels + k_labels, strict=True))
    curves = data.gap_curves(n_keys, gap2).replace(names)
    workshop.legacy_chart(
        partial(charts.gap_explorer,
            curves, current_g=g, quantity_order=q_labels, kind_order=k_labels,
            title=t("gradients.gap_title", n_keys=n_keys), x_title=t("gradients.axis_gap"),
            y_title=t("gradients.axis_size"), description=t("gradients.gap_alt", n_keys=n_keys),
            tips={"quantity": t("gradients.tip_quantity"), "kind": t("gradients.tip_curve")},
        ),
        key="gradients_gap", data=curves, source=gap_curve,
    )  # fmt: skip
    st.caption(t("gradients.gap_caption"))


# --- 3. many rows: predict the dead share, then median, band and mean against d_k ---------
def sweeps(d_k: int, n_keys: int, alpha: float, seed: int, labels: dict) -> bool:
    """The question on dead rows, then the ‖J‖_F and ‖∂p/∂s‖_F sweeps, dead rows, table.

    Returns whether the sweeps are shown (False while the question waits for a guess).
    """
    st.header(t("gradients.sweep_header"))
    top = st.container()  # the takeaway, once the question is answered
    n_rows = sweep_rows(n_keys)
    st.markdown(t("gradients.sweep_lead", n_rows=f"{n_rows:,}", n_keys=n_keys))
    now = data.gradient_at(d_k, n_keys, alpha, seed)
    dead = now.loc["dead_fraction"]
    options = [t(f"gradients_workshop.dead_opt_{i}") for i in range(len(DEAD_BINS) + 1)]
    explain = t("gradients_workshop.dead_explain", n_rows=f"{n_rows:,}", d_k=d_k,
                share=f"{100 * dead['unscaled']:.1f}", label=labels["scaled"],
                share_s=f"{100 * dead['scaled']:.1f}")  # fmt: skip
    question = t("gradients_workshop.dead_q", d_k=d_k, n_keys=n_keys)
    # graded on the share as printed (to 0.1 %): 49.96 % reads 50.0 %, so it is "50 % or more"
    answer = bin_index(round(100 * dead["unscaled"], 1) / 100, DEAD_BINS)
    if not workshop.predict(
        "gradients_dead_share", question, options, answer=answer, explain=explain,
        about=(d_k, n_keys, seed),
    ):  # fmt: skip
        return
    with top:
        workshop.takeaway(t("gradients.sweep_takeaway"))
    labels_of = {a: controls.alpha_label(a) for a in (0.0, 0.5, 1.0, alpha)}
    frames = {
        name: df.assign(series=df.alpha.map(labels_of), color=df.alpha.map(alpha_color))
        for name, df in data.gradient_sweep_frames(n_keys, alpha, seed).items()
    }  # fmt: skip
    # the closed form of ‖J‖_F per row; medians, means, dead share and the factor d_k^−α
    source = {"jac": [saturation_sweep, row_quantities], "grad": [saturation_sweep, summarise]}
    jac = frames["jac"].set_index(["alpha", "d"])["value"]
    descriptions = {
        "jac": t("gradients.jac_alt", n=n_keys, med_u=f"{jac[0.0, 1024]:.2g}", med_s=f"{jac[0.5, 1024]:.2g}"),
        "grad": t("gradients.grad_alt"),
    }  # fmt: skip
    for col, name in zip(st.columns(2), ("jac", "grad"), strict=True):
        with col:
            workshop.legacy_chart(
                partial(charts.median_mean_sweep,
                    frames[name], title=t(f"gradients.{name}_title"),
                    subtitle=t("gradients.sweep_subtitle"), x_title=t("gradients.axis_d_k"),
                    y_title=t(f"gradients.axis_{name}"), mean_label=t("gradients.mean_label"),
                    description=descriptions[name],
                    tips={"series": t("common.tip_scaling"), "value": t(f"gradients.tip_{name}_median"),
                          "lo": t("gradients.tip_q10"), "hi": t("gradients.tip_q90"),
                          "mean": t(f"gradients.tip_{name}_mean")},
                ),
                key=f"gradients_{name}_sweep", data=frames[name], source=source[name],
                current_d=d_k,
            )  # fmt: skip
    left, right = st.columns(2)
    with left:
        workshop.legacy_chart(
            partial(legacy_sweep_lines,
                frames["dead"], title=t("gradients.dead_title"),
                x_title=t("gradients.axis_d_k"), y_title=t("gradients.axis_dead"),
                description=t("gradients.dead_alt"), y_domain=(0, 1), legend_columns=2, height=360,
                tips={"series": t("common.tip_scaling"), "lo": t("common.tip_se_lo"),
                      "hi": t("common.tip_se_hi")},
            ),
            key="gradients_dead", data=frames["dead"], source=source["grad"], current_d=d_k,
        )  # fmt: skip
        st.caption(t("gradients.dead_caption"))
    table = pd.DataFrame(
        {labels[w]: [cell(k, v) for k, v in now[w].items()] for w in labels if alpha or w == "unscaled"},
        index=[t(f"gradients.row_{k}") for k in now.index],
    )  # fmt: skip
    right.markdown(t("gradients.table_title", d_k=d_k, n_rows=f"{n_rows:,}"))
    right.table(table)
    return True


# --- 4. the myth card: the mean is not what collapses -------------------------------------
def myth_reality(d_k: int, n_keys: int, seed: int) -> str:
    """The live counter-example: unscaled against 1/√d_k at the current d_k and n_keys."""
    at = data.gradient_at(d_k, n_keys, 0.5, seed)
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
    sweep = data.gradient_sweep(n_keys, 0.5, seed).set_index(["alpha", "d"])
    mean = sweep["jacobian_fro_mean"]
    median = sweep["jacobian_fro_median"]
    return t(
        "gradients_workshop.myth_gap_reality",
        n_keys=n_keys,
        j1=f"{j1:.3g}",
        j2=f"{j2:.3g}",
        ratio=f"{j2 / j1:.2g}",
        m1=f"{mean[0.0, 256]:.3g}",
        m2=f"{mean[0.0, 1024]:.3g}",
        mratio=f"{mean[0.0, 1024] / mean[0.0, 256]:.2f}",
        med1=f"{median[0.0, 256]:.3g}",
        med2=f"{median[0.0, 1024]:.3g}",
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
    bins, qstats, geo = data.query_grad_histogram(d_k, n_keys, alpha, seed)
    med_u, med_s = qstats["unscaled"]["median"], qstats["scaled"]["median"]
    ratio = med_u / med_s
    options = [t(f"gradients_workshop.qgrad_opt_{i}") for i in range(len(QGRAD_BINS) + 1)]
    explain = t("gradients_workshop.qgrad_explain", n_rows=f"{n_rows:,}", med_u=f"{med_u:.3g}",
                med_s=f"{med_s:.3g}", label=labels["scaled"], ratio=f"{ratio:.3g}")  # fmt: skip
    question = t("gradients_workshop.qgrad_q", d_k=d_k, n_keys=n_keys, label=labels["scaled"])
    answer = bin_index(ratio, QGRAD_BINS)
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
        frame = bins[bins.which == which].drop(columns="which")
        with col:
            workshop.legacy_chart(
                partial(charts.log_histogram,
                    frame, median=q["median"], median_log10=q["median_log10"],
                    x_domain=(geo["lo"], geo["hi"]), color=colors[which], title=label,
                    subtitle=t("gradients.qgrad_subtitle", d_k=d_k, n_keys=n_keys),
                    x_title=t("gradients.axis_log_grad"), y_title=t("gradients.axis_share"),
                    median_title=t("gradients.median_label"),
                    bin_titles=(t("common.tip_log_bin_from"), t("common.tip_log_bin_to")),
                    description=t("gradients.qgrad_alt", label=label, d_k=d_k, median=f"{q['median']:.2e}"),
                ),
                key=f"gradients_qgrad_{which}", data=frame, source=query_grad_norms,
            )  # fmt: skip
            st.caption(t("gradients.qgrad_stats", median=f"{q['median']:.3g}", mean=f"{q['mean']:.3g}",
                         q10=f"{q['q10']:.2g}", q90=f"{q['q90']:.2g}"))  # fmt: skip
    med_half = med_s if alpha == 0.5 else data.query_grad_median(d_k, n_keys, 0.5, seed)
    rel = med_u / med_half
    st.caption(f"{qgrad_caption(d_k, alpha, ratio, rel)} {t('gradients.qgrad_sampler')}")
    if qstats["unscaled"]["clipped"] > 0:
        st.caption(t("gradients.qgrad_clipped", lo=f"{geo['lo']:.0f}",
                     share=f"{qstats['unscaled']['clipped']:.1f}"))  # fmt: skip
