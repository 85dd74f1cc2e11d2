"""Variance: why q·k grows with d_k, and how dividing by √d_k undoes it."""

import math

import streamlit as st

from core.theory import DISTRIBUTIONS, dot_product_excess_kurtosis, dot_product_variance
from ui import cache, charts, controls
from ui.i18n import t

N_SAMPLES = ("1000", "2000", "5000", "10000", "20000", "50000", "100000", "200000")

st.title(t("variance.title"))
st.markdown(t("variance.lead"))

with st.container(border=True):
    c1, c2, c3 = st.columns([4, 3, 3])
    with c1:
        d_k = controls.d_k_input()
    with c2:
        n_samples = int(
            controls.choice(
                "n_samples",
                t("variance.n_samples"),
                N_SAMPLES,
                default="20000",
                widget="select_slider",
            )
        )
    with c3:
        dist = controls.choice(
            "dist",
            t("variance.dist"),
            DISTRIBUTIONS,
            default="normal",
            captions=[t(f"variance.dist_{d}") for d in DISTRIBUTIONS],
            help=t("variance.dist_help"),
        )
    c4, c5 = st.columns(2)
    with c4:
        sigma_q = controls.float_slider(
            "sigma_q", t("variance.sigma_q"), min_value=0.25, max_value=4.0, default=1.0, step=0.25
        )
    with c5:
        sigma_k = controls.float_slider(
            "sigma_k", t("variance.sigma_k"), min_value=0.25, max_value=4.0, default=1.0, step=0.25
        )
seed = st.session_state.get("seed", 0)

raw, scaled, m = cache.score_histograms(d_k, n_samples, dist, sigma_q, sigma_k, seed)
drawn = cache.samples_for(dist, d_k, n_samples)
if drawn < n_samples:
    st.info(t("variance.uniform_capped", drawn=f"{drawn:,}", requested=f"{n_samples:,}", d_k=d_k))
var_theory = dot_product_variance(d_k, sigma_q, sigma_k)
std_theory = math.sqrt(var_theory)
kurt_theory = dot_product_excess_kurtosis(d_k, dist)

# --- metric row: sample statistics against REFERENCE §1 --------------------------------
cols = st.columns(4)
cols[0].metric(
    t("variance.m_mean"),
    f"{m['mean']:.4g}",
    t("variance.m_mean_delta", z=m["mean"] / m["mean_se"]),
    delta_color="off",
    delta_arrow="off",
    help=t("variance.m_mean_help"),
)
for col, key, theory in (
    (cols[1], "var", var_theory),
    (cols[2], "std", std_theory),
):
    col.metric(
        t(f"variance.m_{key}"),
        f"{m[key]:.4g}",
        t("variance.m_delta", theory=f"{theory:.4g}", err=100 * (m[key] - theory) / theory),
        delta_color="off",
        delta_arrow="off",
        help=t("variance.m_se_help", se=f"{m[key + '_se']:.2g}"),
    )
cols[3].metric(
    t("variance.m_kurt"),
    f"{m['kurt']:.3f}",
    t(
        "variance.m_kurt_delta",
        theory=f"{kurt_theory:.4f}",
        z=(m["kurt"] - kurt_theory) / m["kurt_se"],
    ),
    delta_color="off",
    delta_arrow="off",
    help=t("variance.m_kurt_help"),
)

# --- derivation with live numbers ------------------------------------------------------
with st.expander(t("variance.derivation_title"), expanded=True):
    c2v = (sigma_q * sigma_k) ** 2
    st.latex(r"\mathbb{E}[q_i k_i] = \mathbb{E}[q_i]\,\mathbb{E}[k_i] = 0")
    st.latex(
        rf"\mathrm{{Var}}(q_i k_i) = \mathbb{{E}}[q_i^2]\,\mathbb{{E}}[k_i^2] = \sigma_q^2\sigma_k^2"
        rf" = {sigma_q:g}^2 \cdot {sigma_k:g}^2 = {c2v:g}"
    )
    st.latex(
        rf"\mathrm{{Var}}(q\cdot k) = \sum_{{i=1}}^{{d_k}} \mathrm{{Var}}(q_i k_i) = d_k\,\sigma_q^2\sigma_k^2"
        rf" = {d_k} \cdot {c2v:g} = {var_theory:g}"
    )
    st.latex(rf"\mathrm{{std}}(q\cdot k) = \sqrt{{d_k}}\,\sigma_q\sigma_k = {std_theory:.4g}")
    st.latex(
        rf"\mathrm{{Var}}\!\left(\frac{{q\cdot k}}{{\sqrt{{d_k}}}}\right) = \frac{{{var_theory:g}}}{{{d_k}}}"
        rf" = \sigma_q^2\sigma_k^2 = {c2v:g}"
    )
    st.caption(t("variance.derivation_note"))

# --- chart 1: histograms, unscaled beside scaled ----------------------------------------
laws = (t("variance.law_exact"), t("variance.law_gauss"))
left, right = st.columns(2)
with left:
    st.altair_chart(
        charts.histogram_with_law(
            raw,
            title=t("variance.hist_raw_title", d_k=d_k),
            x_title=t("variance.axis_score"),
            y_title=t("variance.axis_density"),
            law_labels=laws,
            description=t("variance.hist_raw_alt", d_k=d_k, std=f"{std_theory:.3g}"),
            color=charts.COLORS["unscaled"],
        ),
        width="stretch",
        key="variance_hist_raw",
    )
with right:
    st.altair_chart(
        charts.histogram_with_law(
            scaled,
            title=t("variance.hist_scaled_title", d_k=d_k),
            x_title=t("variance.axis_scaled_score"),
            y_title=t("variance.axis_density"),
            law_labels=laws,
            description=t("variance.hist_scaled_alt", std=f"{sigma_q * sigma_k:.3g}"),
        ),
        width="stretch",
        key="variance_hist_scaled",
    )
st.caption(t("variance.hist_caption"))

# --- chart 2: Var(q·k) against d_k -------------------------------------------------------
sweep = cache.variance_sweep(dist, seed)
c2v = (sigma_q * sigma_k) ** 2
sweep = sweep.assign(
    var=sweep["var"] * c2v,
    lo=sweep.lo * c2v,
    hi=sweep.hi * c2v,
    theory=sweep.theory * c2v,
    series=sweep.scaled.map({False: t("variance.series_raw"), True: t("variance.series_scaled")}),
).drop(columns="scaled")
st.altair_chart(
    charts.variance_sweep(
        sweep,
        current_d=d_k,
        series_order=(t("variance.series_raw"), t("variance.series_scaled")),
        title=t("variance.sweep_title"),
        x_title=t("variance.axis_d_k"),
        y_title=t("variance.axis_variance"),
        description=t("variance.sweep_alt"),
    ),
    width="stretch",
    key="variance_sweep",
)
st.caption(t("variance.sweep_caption", n=f"{cache.SWEEP_SAMPLES:,}"))
if dist == "uniform":
    st.caption(t("variance.sweep_uniform_note"))

# --- charts 3 and 4: the sum, dimension by dimension ------------------------------------
left, right = st.columns(2)
with left:
    paths, envelope = cache.running_sums(d_k, dist, sigma_q, sigma_k, seed)
    envelope = envelope.assign(
        band=envelope.k.map({1: t("variance.band_1"), 2: t("variance.band_2")})
    )
    st.altair_chart(
        charts.running_sums(
            paths,
            envelope,
            title=t("variance.paths_title", n=cache.N_PATHS),
            x_title=t("variance.axis_i"),
            y_title=t("variance.axis_partial_sum"),
            description=t("variance.paths_alt", d_k=d_k),
        ),
        width="stretch",
        key="variance_paths",
    )
    st.caption(t("variance.paths_caption"))
with right:
    terms, total = cache.pair_terms(d_k, dist, sigma_q, sigma_k, seed)
    terms = terms.assign(
        sign=terms.positive.map({True: t("variance.sign_pos"), False: t("variance.sign_neg")})
    )
    st.altair_chart(
        charts.term_bars(
            terms.drop(columns="positive"),
            title=t("variance.terms_title", total=f"{total:.3g}"),
            x_title=t("variance.axis_i"),
            y_title=t("variance.axis_term"),
            sign_title=t("variance.sign_title"),
            sign_order=(t("variance.sign_pos"), t("variance.sign_neg")),
            description=t("variance.terms_alt", d_k=d_k, total=f"{total:.3g}"),
        ),
        width="stretch",
        key="variance_terms",
    )
    if d_k > cache.MAX_TERMS_SHOWN:
        st.caption(t("variance.terms_truncated", shown=cache.MAX_TERMS_SHOWN, d_k=d_k))

st.caption(t("variance.source"))
