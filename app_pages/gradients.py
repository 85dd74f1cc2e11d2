"""Gradients: why a saturated softmax stops learning, row by row and over many rows."""

import math

import pandas as pd
import streamlit as st

from ui import cache, charts, controls
from ui.i18n import t

GAP2_OPTIONS = ("none", "1", "2", "4", "8")


def tex(x: float) -> str:
    """A number for st.latex: 0.3476 or 3.58\\times10^{-6}."""
    if x == 0 or 1e-3 <= abs(x) < 1e4:
        return f"{x:.4g}"
    e = math.floor(math.log10(abs(x)))
    return rf"{x / 10**e:.3g}\times10^{{{e}}}"


def cell(stat: str, value: float) -> str:
    """A table entry: shares in per cent, everything else to three digits."""
    return f"{100 * value:.1f} %" if stat == "dead_fraction" else f"{value:.3g}"


st.title(t("gradients.title"))
st.markdown(t("gradients.lead"))
with st.container(border=True):
    c1, c2, c3 = st.columns([4, 3, 4])
    with c1:
        d_k = controls.d_k_input()
    with c2:
        n_keys = controls.int_input("n_keys", t("gradients.n_keys"), min_value=2, max_value=512,
                                    default=10, help=t("gradients.n_keys_help"))  # fmt: skip
    with c3:
        alpha = controls.alpha_input()
seed = st.session_state.get("seed", 0)
labels = {"unscaled": controls.alpha_label(0.0), "scaled": controls.alpha_label(alpha)}
colors = {"unscaled": charts.COLORS["unscaled"], "scaled": charts.alpha_color(alpha)}

# --- the formula, with the numbers of the row sampled for the heatmaps ------------------
cells, row = cache.jacobian_row(d_k, n_keys, alpha, seed)
st.subheader(t("gradients.formula_header"))
st.latex(
    r"\frac{\partial p_i}{\partial z_j} = p_i(\delta_{ij} - p_j), \qquad J = \operatorname{diag}(p) - p\,p^{\top},"
    r"\qquad \frac{\partial p}{\partial s} = d_k^{-\alpha} J"
)
st.markdown(t("gradients.formula_cases"))
st.latex(
    r"\begin{aligned} i = j = k &:\quad \frac{\partial p_k}{\partial z_k} = p_k(1 - p_k) \le 1 - p_k \;\to\; 0"
    r"\\ (i, j) \ne (k, k) &:\quad |J_{ij}| \le \min(p_i, p_j) \le \textstyle\sum_{l \ne k} p_l = 1 - p_k \;\to\; 0 \end{aligned}"
)
live = [
    rf"\alpha = {a:g}:&\quad p_k = {row[w]['p_top']:.6g},\quad 1 - p_k = {tex(row[w]['rest'])},\quad"
    rf"\max_{{ij}}|J_{{ij}}| = {tex(row[w]['max_abs'])},\quad \|J\|_F = {tex(row[w]['fro'])}"
    for w, a in (("unscaled", 0.0), ("scaled", alpha))
]
st.latex(r"\begin{aligned}" + r"\\".join(live) + r"\end{aligned}")
st.caption(t("gradients.formula_note", d_k=d_k))

# --- heatmaps: one row, unscaled beside scaled, one shared colour scale -----------------
for col, (which, label) in zip(st.columns(2), labels.items(), strict=True):
    r = row[which]
    p_text = f"{r['p_top']:.4f}" if r["rest"] >= 1e-4 else f"1 − {r['rest']:.2e}"
    col.altair_chart(
        charts.jacobian_heatmap(
            cells[cells.which == which].drop(columns="which"), domain_max=cells.value.abs().max(),
            title=label, subtitle=t("gradients.heat_subtitle", p=p_text, fro=f"{r['fro']:.2e}"),
            x_title=t("gradients.axis_j"), y_title=t("gradients.axis_i"), color_title="J_ij = ∂p_i/∂z_j",
            description=t("gradients.heat_alt", label=label, d_k=d_k, fro=f"{r['fro']:.2e}"),
        ),
        width="stretch", key=f"gradients_heat_{which}",
    )  # fmt: skip
st.caption(t("gradients.heat_caption", d_k=d_k, n_keys=n_keys))
if n_keys > cache.HEATMAP_MAX_KEYS:
    st.caption(t("gradients.heat_truncated", shown=cache.HEATMAP_MAX_KEYS, n_keys=n_keys))


# --- the gap explorer: a fragment, so its two controls rerun only this panel -------------
@st.fragment
def gap_explorer(n_keys: int) -> None:
    st.subheader(t("gradients.gap_header"))
    st.markdown(t("gradients.gap_lead"))
    c1, c2 = st.columns(2)
    with c1:
        g = controls.float_slider("gap", t("gradients.gap"), min_value=0.0, max_value=30.0,
                                  default=6.0, step=0.5)  # fmt: skip
    with c2:
        choice = controls.choice("gap2", t("gradients.gap2"), GAP2_OPTIONS, default="none",
                                 widget="select_slider", help=t("gradients.gap2_help"))  # fmt: skip
    gap2 = None if choice == "none" else float(choice)
    pt = cache.gap_point(g, n_keys, gap2)
    st.latex(
        rf"\begin{{aligned}} g = {g:g}:&\quad p_k = {pt['p_top']:.6g},\quad \|J\|_F = {tex(pt['fro'])}"
        rf" \approx \sqrt{{(\textstyle\sum\varepsilon)^2 + 3\sum\varepsilon^2}} = {tex(pt['fro_law'])}"
        rf"\\ &\quad \max_{{i\ne j}}|J_{{ij}}| = {tex(pt['offdiag'])} \approx \max\varepsilon"
        rf" = {tex(pt['offdiag_law'])} \end{{aligned}}"
    )
    q_labels = (t("gradients.gap_q_fro"), t("gradients.gap_q_off"))
    k_labels = (t("gradients.gap_k_exact"), t("gradients.gap_k_law"))
    names = dict(zip(("fro", "offdiag", "exact", "law"), q_labels + k_labels, strict=True))
    st.altair_chart(
        charts.gap_explorer(
            cache.gap_curves(n_keys, gap2).replace(names), current_g=g,
            quantity_order=q_labels, kind_order=k_labels, title=t("gradients.gap_title", n_keys=n_keys),
            x_title=t("gradients.axis_gap"), y_title=t("gradients.axis_size"),
            description=t("gradients.gap_alt", n_keys=n_keys),
        ),
        width="stretch", key="gradients_gap",
    )  # fmt: skip
    st.caption(t("gradients.gap_caption"))


gap_explorer(n_keys)

# --- many rows: median, 10–90 % band and mean against d_k; dead rows ----------------------
st.subheader(t("gradients.sweep_header"))
n_rows = cache.gradient_rows(n_keys)
st.markdown(t("gradients.sweep_lead", n_rows=f"{n_rows:,}", n_keys=n_keys))
frames = {
    name: df.assign(series=df.alpha.map(controls.alpha_label), color=df.alpha.map(charts.alpha_color))
    for name, df in cache.gradient_sweep_frames(n_keys, alpha, seed).items()
}  # fmt: skip
for col, name in zip(st.columns(2), ("jac", "grad"), strict=True):
    col.altair_chart(
        charts.median_mean_sweep(
            frames[name], current_d=d_k, title=t(f"gradients.{name}_title"),
            subtitle=t("gradients.sweep_subtitle"), x_title=t("gradients.axis_d_k"),
            y_title=t(f"gradients.axis_{name}"), mean_label=t("gradients.mean_label"),
            description=t(f"gradients.{name}_alt"),
        ),
        width="stretch", key=f"gradients_{name}_sweep",
    )  # fmt: skip
left, right = st.columns(2)
left.altair_chart(
    charts.compact_legend(charts.sweep_lines(
        frames["dead"], current_d=d_k, title=t("gradients.dead_title"), x_title=t("gradients.axis_d_k"),
        y_title=t("gradients.axis_dead"), description=t("gradients.dead_alt"), y_domain=(0, 1),
    )),
    width="stretch", key="gradients_dead",
)  # fmt: skip
left.caption(t("gradients.dead_caption"))
now = cache.gradient_at(d_k, n_keys, alpha, seed)
table = pd.DataFrame(
    {labels[w]: [cell(k, v) for k, v in now[w].items()] for w in labels if alpha or w == "unscaled"},
    index=[t(f"gradients.row_{k}") for k in now.index],
)  # fmt: skip
right.markdown(t("gradients.table_title", d_k=d_k, n_rows=f"{n_rows:,}"))
right.table(table)
st.markdown(t("gradients.why"))

# --- the gradient that reaches q -------------------------------------------------------------
st.subheader(t("gradients.qgrad_header"))
st.markdown(t("gradients.qgrad_lead", n_rows=f"{n_rows:,}"))
bins, qstats, geo = cache.query_grad_histogram(d_k, n_keys, alpha, seed)
for col, (which, label) in zip(st.columns(2), labels.items(), strict=True):
    q = qstats[which]
    col.altair_chart(
        charts.log_histogram(
            bins[bins.which == which].drop(columns="which"), median=q["median"],
            median_log10=q["median_log10"], x_domain=(geo["lo"], geo["hi"]), color=colors[which],
            title=label, subtitle=t("gradients.qgrad_subtitle", d_k=d_k, n_keys=n_keys),
            x_title=t("gradients.axis_log_grad"), y_title=t("gradients.axis_share"),
            median_title=t("gradients.median_label"),
            description=t("gradients.qgrad_alt", label=label, d_k=d_k, median=f"{q['median']:.2e}"),
        ),
        width="stretch", key=f"gradients_qgrad_{which}",
    )  # fmt: skip
    col.caption(t("gradients.qgrad_stats", median=f"{q['median']:.3g}", mean=f"{q['mean']:.3g}",
                  q10=f"{q['q10']:.2g}", q90=f"{q['q90']:.2g}"))  # fmt: skip
st.caption(t("gradients.qgrad_caption"))
if qstats["unscaled"]["clipped"] > 0:
    st.caption(t("gradients.qgrad_clipped", lo=f"{geo['lo']:.0f}",
                 share=f"{qstats['unscaled']['clipped']:.1f}"))  # fmt: skip
st.caption(t("gradients.source"))
